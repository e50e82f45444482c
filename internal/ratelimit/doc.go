// Package ratelimit holds the in-process rate limiters.
//
// Tiered is the public endpoints' per-client limiter (D13): an approximate
// sliding window with a soft and a hard limit, in bounded memory. The exact
// per-key sliding window of D2b for the chat endpoint arrives with the chat
// issue, behind the same package; a Redis-backed limiter for many instances
// arrives with the scale-out issue.
package ratelimit
