package access

import (
	"crypto/rand"
	"crypto/sha256"
	"hash/crc32"
	"strings"

	"github.com/constraintlab/assistant/internal/assistant"
)

// Key format (D16): "sk_service_" + 12-character key id + 32-character
// secret + 6-character checksum, all base62: 61 characters.
const (
	KeyPrefix      = "sk_service_"
	keyIDLength    = 12
	secretLength   = 32
	checksumLength = 6
	KeyLength      = len(KeyPrefix) + keyIDLength + secretLength + checksumLength
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewKey generates a key for the workspace: the plaintext (to show once)
// and the record to store (id and SHA-256 only).
func NewKey() (plaintext, id string, hash [32]byte) {
	id = randomBase62(keyIDLength)
	body := KeyPrefix + id + randomBase62(secretLength)
	plaintext = body + checksum(body)
	return plaintext, id, sha256.Sum256([]byte(plaintext))
}

// ParseKey checks a presented key's shape and checksum without any lookup
// and returns its key id. A key with any character changed fails here.
func ParseKey(plaintext string) (id string, err error) {
	invalid := assistant.Errorf(assistant.EUnauthorized, "The API key is not valid.")
	if len(plaintext) != KeyLength || !strings.HasPrefix(plaintext, KeyPrefix) {
		return "", invalid
	}
	rest := plaintext[len(KeyPrefix):]
	for i := 0; i < len(rest); i++ {
		if strings.IndexByte(base62, rest[i]) < 0 {
			return "", invalid
		}
	}
	body, sum := plaintext[:KeyLength-checksumLength], plaintext[KeyLength-checksumLength:]
	if checksum(body) != sum {
		return "", invalid
	}
	return rest[:keyIDLength], nil
}

// ValidKeyID reports whether id has the shape of a key id.
func ValidKeyID(id string) bool {
	if len(id) != keyIDLength {
		return false
	}
	for i := 0; i < len(id); i++ {
		if strings.IndexByte(base62, id[i]) < 0 {
			return false
		}
	}
	return true
}

// HashKey is the stored form of a plaintext key.
func HashKey(plaintext string) [32]byte { return sha256.Sum256([]byte(plaintext)) }

// checksum is the CRC32 (IEEE) of s in 6 base62 digits.
func checksum(s string) string {
	n := crc32.ChecksumIEEE([]byte(s))
	var b [checksumLength]byte
	for i := checksumLength - 1; i >= 0; i-- {
		b[i] = base62[n%62]
		n /= 62
	}
	return string(b[:])
}

// randomBase62 returns n characters drawn uniformly from the base62
// alphabet with crypto/rand (rejection sampling keeps it unbiased).
func randomBase62(n int) string {
	out := make([]byte, 0, n)
	buf := make([]byte, n+n/2)
	for len(out) < n {
		rand.Read(buf) // never fails (crypto/rand)
		for _, b := range buf {
			if b < 248 && len(out) < n { // 248 = 4*62
				out = append(out, base62[b%62])
			}
		}
	}
	return string(out)
}

// RandomToken returns a URL-safe random token of n base62 characters, for
// one-time links such as the setup link.
func RandomToken(n int) string { return randomBase62(n) }

// HashSetupToken is the stored form of a setup link's token.
func HashSetupToken(token string) [32]byte { return sha256.Sum256([]byte("setup:" + token)) }
