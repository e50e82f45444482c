// Package ratelimit is the in-process adapter of the domain's rate-limit
// ports (assistant.Limiter, assistant.TieredLimiter).
//
// Tiered is the public endpoints' per-client limiter (D13): an approximate
// sliding window with a soft and a hard limit, in bounded memory; the API
// also uses it, hard-only, for failed authentication and the admin area
// for login attempts. SlidingWindow is the exact per-key sliding window of
// D2b for chat and verify. Neither ever fails. With several instances,
// internal/redis shares the same limits through Redis and falls back to
// these, per instance, while Redis does not answer.
package ratelimit
