// Package redis is the Redis adapter: the state that the instances of a
// scaled-out deployment must share, kept in one Redis server.
//
//   - SlidingWindow is the exact per-key sliding window of D2b
//     (assistant.Limiter): never more than Limit admitted requests for one
//     key in any rolling window, across all instances. One Lua script reads
//     the Redis server's clock (TIME, never the caller's), drops admissions
//     that left the window, and admits or refuses, atomically.
//   - Tiered is the per-client soft/hard limit of D13
//     (assistant.TieredLimiter), the same approximate sliding window as
//     the in-process one, counted in Redis.
//   - LoginThrottle is the admin login throttle (assistant.LoginThrottle),
//     with the semantics of access.LoginThrottle: per (account, address)
//     and per account, attempts in flight counting as failures (an attempt
//     in flight on an instance that died expires after AttemptTTL).
//   - KeyEvents carries key-change notices between instances over
//     publish/subscribe (assistant.KeyEvents), so that a revoked key is
//     refused everywhere at once (D18).
//
// Redis is never allowed to slow the service down or take it down. Every
// call has a short timeout (Options.Timeout, tens of milliseconds), is
// never retried, and goes through one circuit breaker per Client: after a
// few consecutive failures the breaker opens and no call is attempted for
// Options.BreakerOpen, then one call probes whether Redis is back. While a
// call fails or the breaker is open, each limiter decides with the
// in-process fallback it was given (an internal/ratelimit limiter or an
// access.LoginThrottle, chosen by cmd/assistant), so limits hold per
// instance instead of across them; the fallback decisions are counted in
// /metrics and the outage is logged once when it starts and once when it
// ends, never per request. When the breaker closes again the exact shared
// limits resume.
//
// The package is named redis like the directory; it imports go-redis as
// goredis. It depends on the domain (internal/assistant), go-redis,
// gobreaker and the Prometheus client only: the fallbacks come in through
// the domain's ports, so no other adapter is imported.
package redis
