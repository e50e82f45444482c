package ratelimit

import (
	"context"
	"sync"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
)

// Verdict is the outcome of one request under a SlidingWindow: the
// domain's Decision.
type Verdict = assistant.Decision

var _ assistant.Limiter = (*SlidingWindow)(nil)

// SlidingWindow is the in-process exact limiter: it keeps, per key, the
// admission times still inside the window, oldest first (at most the
// key's limit of them), so a decision compares with the one that must
// leave before another is admitted. Keys idle for a whole window are
// dropped on a periodic sweep.
type SlidingWindow struct {
	limit  int
	window time.Duration
	now    func() time.Time

	mu        sync.Mutex
	keys      map[string]*ring
	lastSweep time.Time
}

type ring struct {
	times []time.Time // admission times inside the window, oldest first
}

// NewSlidingWindow returns a limiter admitting limit requests per window
// and key; limit 0 admits everything.
func NewSlidingWindow(limit int, window time.Duration, now func() time.Time) *SlidingWindow {
	return &SlidingWindow{limit: limit, window: window, now: now, keys: map[string]*ring{}}
}

// Allow implements assistant.Limiter. It never fails.
func (s *SlidingWindow) Allow(ctx context.Context, key string) (Verdict, error) {
	return s.AllowLimit(ctx, key, s.limit)
}

// AllowLimit implements assistant.Limiter: Allow under limit. Limit 0
// admits everything.
func (s *SlidingWindow) AllowLimit(_ context.Context, key string, limit int) (Verdict, error) {
	if limit <= 0 {
		return Verdict{Allowed: true}, nil
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(now)
	r := s.keys[key]
	if r == nil {
		r = &ring{times: make([]time.Time, 0, min(limit, 64))}
		s.keys[key] = r
	}
	// Forget admissions that left the window: (now-window, now] counts.
	gone := 0
	for gone < len(r.times) && !r.times[gone].After(now.Add(-s.window)) {
		gone++
	}
	if gone > 0 {
		r.times = append(r.times[:0], r.times[gone:]...)
	}
	v := Verdict{Limit: limit}
	if n := len(r.times); n >= limit {
		// Another is admitted once n-limit+1 admissions have left.
		v.Reset = r.times[n-limit].Add(s.window).Sub(now)
		v.RetryAfter = v.Reset
		return v, nil
	}
	r.times = append(r.times, now)
	v.Allowed = true
	v.Remaining = limit - len(r.times)
	v.Reset = r.times[0].Add(s.window).Sub(now)
	return v, nil
}

// sweep drops keys with no admission inside the window, at most once per
// window.
func (s *SlidingWindow) sweep(now time.Time) {
	if now.Sub(s.lastSweep) < s.window {
		return
	}
	s.lastSweep = now
	for k, r := range s.keys {
		if len(r.times) == 0 || !r.times[len(r.times)-1].After(now.Add(-s.window)) {
			delete(s.keys, k)
		}
	}
}
