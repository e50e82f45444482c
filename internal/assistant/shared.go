package assistant

import (
	"context"
	"time"
)

// The ports below hold state that several instances of the service must
// share when they run side by side (the rate-limit ports in limit.go are
// the others). Each has an in-process implementation (internal/access) and
// a shared one (internal/redis); cmd/assistant picks one.

// LoginThrottle limits password guessing in the admin area: failures are
// counted per (account, address) pair and per account, and an attempt in
// flight counts as a failure until it ends, so that a burst of
// simultaneous guesses cannot slip past a limit. Unknown accounts are
// counted like known ones.
//
// Implementations: access.LoginThrottle (one process) and
// redis.LoginThrottle (all instances; it falls back to a per-process
// throttle while Redis cannot answer). Begin never fails: a throttle that
// cannot reach its shared state decides with local state instead, since an
// unthrottled login form is worse than one throttled per instance.
type LoginThrottle interface {
	// Begin admits a login attempt on account (compared without case)
	// from address, or refuses it: then attempt is nil and retry says how
	// long to wait (at least a second).
	Begin(ctx context.Context, account, address string) (attempt LoginAttempt, retry time.Duration)
}

// LoginAttempt is an attempt admitted by LoginThrottle.Begin. The caller
// ends it with exactly one of its methods; later calls do nothing.
type LoginAttempt interface {
	// Fail records a failed login (a wrong password, or an unknown
	// account).
	Fail()
	// Succeed records a successful login: the pair's failures are cleared,
	// the account's stay (they were someone's guesses).
	Succeed()
	// Cancel ends an attempt that checked no password.
	Cancel()
}

// KeyEvents carries "these API keys changed" notices (revoked, expiry
// moved) between the instances of the service, so that every instance
// drops the keys from its cache at once (D18: a revoked key is refused by
// every instance within a second).
//
// Implementation: redis.KeyEvents (publish/subscribe). Delivery is best
// effort: a notice sent while an instance is disconnected never reaches
// it, so the key verifier keeps polling AccessStore.RevokedSince as a
// safety net; without KeyEvents, polling alone keeps D18.
type KeyEvents interface {
	// PublishKeyChanges tells every subscribed instance (this one
	// included) that the keys with these ids changed. An error means the
	// notice may not have gone out.
	PublishKeyChanges(ctx context.Context, ids ...string) error
	// SubscribeKeyChanges calls fn with the ids of every notice until ctx
	// ends, reconnecting after failures, and returns when ctx ends. fn
	// runs on one goroutine, one notice at a time.
	SubscribeKeyChanges(ctx context.Context, fn func(ids []string))
}
