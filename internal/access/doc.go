// Package access is the service's access control: API keys (D16) with
// their generation, checksum and verification, the verifier's cache that
// still honours revocations made by other processes within a second (D18),
// batched last-used bookkeeping, admin passwords hashed with argon2id, and
// the login throttle of the admin area.
//
// It depends on the domain (internal/assistant) and golang.org/x/crypto
// only; storage comes in through assistant.AccessStore.
package access
