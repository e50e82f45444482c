package access

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"

	"github.com/constraintlab/assistant/internal/assistant"
)

// argon2id parameters: OWASP's recommended minimum (19 MiB, 2 passes, 1
// lane). The parameters travel inside each hash, so they can be raised
// later without invalidating stored ones.
const (
	argonMemoryKiB = 19 * 1024
	argonTime      = 2
	argonThreads   = 1
	argonKeyLen    = 32
	saltLen        = 16
)

// MinPasswordLength is the shortest password accepted for an admin.
const MinPasswordLength = 12

// MaxPasswordLength bounds the work an attacker can make us do per login.
const MaxPasswordLength = 1024

// CheckPasswordPolicy says what is wrong with a new password, if anything.
func CheckPasswordPolicy(password string) error {
	switch {
	case len(password) < MinPasswordLength:
		return assistant.Errorf(assistant.EInvalid, "The password must have at least %d characters.", MinPasswordLength)
	case len(password) > MaxPasswordLength:
		return assistant.Errorf(assistant.EInvalid, "The password must have at most %d characters.", MaxPasswordLength)
	}
	return nil
}

// HashPassword returns the argon2id hash of password as a PHC string:
// $argon2id$v=19$m=...,t=...,p=...$salt$hash.
func HashPassword(password string) string {
	salt := make([]byte, saltLen)
	rand.Read(salt)
	sum := argon2.IDKey([]byte(password), salt, argonTime, argonMemoryKiB, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemoryKiB, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(sum))
}

// CheckPassword reports whether password matches the PHC hash. A malformed
// hash never matches.
func CheckPassword(hash, password string) bool {
	if len(password) > MaxPasswordLength {
		return false
	}
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var version int
	var memory, passes uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &memory, &passes, &threads); err != nil {
		return false
	}
	b64 := base64.RawStdEncoding
	salt, err1 := b64.DecodeString(parts[4])
	want, err2 := b64.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) == 0 {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, passes, memory, threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// GeneratePassword returns a random password of 20 base62 characters
// (about 119 bits), for `admin create-user` without a password on stdin.
func GeneratePassword() string { return randomBase62(20) }

// ValidEmail is a deliberately loose check of an admin's login:
// something@something, no spaces or angle brackets, at most 254 bytes.
func ValidEmail(s string) bool {
	at := strings.LastIndexByte(s, '@')
	return at > 0 && at < len(s)-1 && !strings.ContainsAny(s, " \t\r\n<>") && len(s) <= 254
}
