package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The headers of a delivery (Standard Webhooks).
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// SecretPrefix marks a signing secret; the rest is base64.
const SecretPrefix = "whsec_"

// secretBytes is the size of a new signing secret: 32 bytes (256 bits),
// within the specification's 24 to 64.
const secretBytes = 32

// DefaultTolerance is how far a delivery's timestamp may be from the
// verifier's clock (Standard Webhooks' reference libraries use 5 minutes).
const DefaultTolerance = 5 * time.Minute

// NewSecret returns a new signing secret, "whsec_" + base64 of 32 random
// bytes.
func NewSecret() string {
	b := make([]byte, secretBytes)
	rand.Read(b)
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// DecodeSecret returns the key bytes of a secret, with or without its
// whsec_ prefix, padded or not.
func DecodeSecret(secret string) ([]byte, error) {
	s := strings.TrimPrefix(secret, SecretPrefix)
	if s == "" {
		return nil, errors.New("the signing secret is empty")
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		b, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
	}
	if err != nil || len(b) == 0 {
		return nil, errors.New("the signing secret is not base64")
	}
	return b, nil
}

// Sign returns the webhook-signature value of body sent as message id at
// timestamp ts: "v1," + base64(HMAC-SHA256(key, id.ts.body)).
func Sign(key []byte, id string, ts time.Time, body []byte) string {
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%d.", id, ts.Unix())
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// Verification errors.
var (
	ErrMissingHeaders   = errors.New("webhook: missing webhook-id, webhook-timestamp or webhook-signature")
	ErrInvalidTimestamp = errors.New("webhook: the timestamp is not a number of seconds")
	ErrTooOld           = errors.New("webhook: the timestamp is too old")
	ErrTooNew           = errors.New("webhook: the timestamp is too far in the future")
	ErrNoMatch          = errors.New("webhook: no signature matches")
)

// Verify checks a delivery as a receiver does: the headers are present,
// the timestamp is within tolerance of now, and one of the space-separated
// v1 signatures matches (compared in constant time).
func Verify(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	key, err := DecodeSecret(secret)
	if err != nil {
		return err
	}
	id, tsText, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if id == "" || tsText == "" || sigs == "" {
		return ErrMissingHeaders
	}
	secs, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return ErrInvalidTimestamp
	}
	ts := time.Unix(secs, 0)
	switch {
	case now.Sub(ts) > tolerance:
		return ErrTooOld
	case ts.Sub(now) > tolerance:
		return ErrTooNew
	}
	want := Sign(key, id, ts, body)
	for _, s := range strings.Fields(sigs) {
		if strings.HasPrefix(s, "v1,") && hmac.Equal([]byte(s), []byte(want)) {
			return nil
		}
	}
	return ErrNoMatch
}
