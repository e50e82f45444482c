package webhook

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
)

// Sealer encrypts signing secrets for the store: AES-256-GCM with a key
// derived (HKDF-SHA256) from the operator's ASSISTANT_WEBHOOK_KEY, the
// endpoint id as additional data (a sealed secret cannot be moved to
// another endpoint). Sending a delivery needs the secret itself (an HMAC
// key), so it cannot be stored as a hash like API keys; a copy of the
// database without the key reveals no secret.
type Sealer struct {
	aead cipher.AEAD
}

// sealVersion is the first byte of a sealed secret.
const sealVersion = 1

// MinKeyLength is the shortest ASSISTANT_WEBHOOK_KEY accepted.
const MinKeyLength = 32

// NewSealer derives the sealing key from key (at least MinKeyLength
// bytes, e.g. 32 random bytes in base64).
func NewSealer(key string) (*Sealer, error) {
	if len(key) < MinKeyLength {
		return nil, errors.New("the webhook key must be at least 32 characters (e.g. openssl rand -base64 32)")
	}
	k, err := hkdf.Key(sha256.New, []byte(key), nil, "assistant webhook signing secrets v1", 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead}, nil
}

// Seal encrypts the secret of endpoint id.
func (s *Sealer) Seal(id, secret string) []byte {
	nonce := make([]byte, s.aead.NonceSize())
	rand.Read(nonce)
	out := append([]byte{sealVersion}, nonce...)
	return s.aead.Seal(out, nonce, []byte(secret), []byte(id))
}

// ErrUnseal means a sealed secret could not be opened: another key sealed
// it, or it belongs to another endpoint.
var ErrUnseal = errors.New("the signing secret cannot be decrypted with this ASSISTANT_WEBHOOK_KEY")

// Open decrypts the sealed secret of endpoint id.
func (s *Sealer) Open(id string, sealed []byte) (string, error) {
	n := s.aead.NonceSize()
	if len(sealed) < 1+n || sealed[0] != sealVersion {
		return "", ErrUnseal
	}
	plain, err := s.aead.Open(nil, sealed[1:1+n], sealed[1+n:], []byte(id))
	if err != nil {
		return "", ErrUnseal
	}
	return string(plain), nil
}
