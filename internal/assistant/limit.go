package assistant

import (
	"context"
	"time"
)

// The rate-limit ports the HTTP layer depends on. Implementations:
// internal/ratelimit (in one process) and internal/redis (shared by every
// instance; it decides with an in-process limiter while Redis is down or
// slow, so in practice it does not fail either).
//
// Errors: a limiter returns an error only when it cannot decide (a shared
// store that is down or slow, with no fallback). Callers fail open: they
// admit the request and log the error, so a broken limiter never takes the
// service down. The in-process limiters never fail.

// Limiter is an exact per-key limit (D2b): never more than Limit admitted
// requests for one key in any rolling window. A request counts when it is
// admitted, whatever its outcome; a refused one does not count.
//
// AllowLimit decides under limit (> 0) instead of the limiter's own, for
// a key that carries its own limit (APIKey.RateLimit); the window is the
// limiter's. A key's limit may change between calls: a lowered one
// refuses until the window holds fewer than limit admissions.
type Limiter interface {
	Allow(ctx context.Context, key string) (Decision, error)
	AllowLimit(ctx context.Context, key string, limit int) (Decision, error)
}

// TieredLimiter is a per-client limit with a soft and a hard tier (D13):
// past the soft limit requests are still admitted, flagged OverSoft; past
// the hard limit they are refused. It also serves hard-only limits
// (failed authentication, admin login attempts). Admit counts the request
// (refused ones are not counted); Check decides without counting.
type TieredLimiter interface {
	Admit(ctx context.Context, key string) (Decision, error)
	Check(ctx context.Context, key string) (Decision, error)
	Policy() TieredPolicy
}

// TieredPolicy is a TieredLimiter's configuration, for the RateLimit-Policy
// header and messages. A limit of 0 is no limit.
type TieredPolicy struct {
	Soft, Hard int
	Window     time.Duration
}

// Decision is a limiter's verdict on one request.
type Decision struct {
	Allowed bool
	// OverSoft is true when a TieredLimiter admitted the request past its
	// soft limit.
	OverSoft bool
	// Limit is the limit that applies (the hard one of a TieredLimiter, 0
	// when there is none); Remaining is how many more requests it admits
	// now.
	Limit, Remaining int
	// Reset is how long until the window admits one more request than it
	// does now (Limiter only). RetryAfter, when the request was refused, is
	// how long until one would be admitted; for a request admitted past a
	// soft limit, how long until the client is under it again; else 0.
	Reset, RetryAfter time.Duration
}
