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
// admission times of the last Limit requests in a ring, so a decision
// compares with the oldest of them. Memory is Limit timestamps per active
// key; keys idle for a whole window are dropped on a periodic sweep.
type SlidingWindow struct {
	limit  int
	window time.Duration
	now    func() time.Time

	mu        sync.Mutex
	keys      map[string]*ring
	lastSweep time.Time
}

type ring struct {
	times []time.Time // admission times, oldest at start
	start int
	count int
}

// NewSlidingWindow returns a limiter admitting limit requests per window
// and key; limit 0 admits everything.
func NewSlidingWindow(limit int, window time.Duration, now func() time.Time) *SlidingWindow {
	return &SlidingWindow{limit: limit, window: window, now: now, keys: map[string]*ring{}}
}

// Allow implements assistant.Limiter. It never fails.
func (s *SlidingWindow) Allow(_ context.Context, key string) (Verdict, error) {
	if s.limit <= 0 {
		return Verdict{Allowed: true}, nil
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(now)
	r := s.keys[key]
	if r == nil {
		r = &ring{times: make([]time.Time, s.limit)}
		s.keys[key] = r
	}
	// Forget admissions that left the window: (now-window, now] counts.
	for r.count > 0 && !r.times[r.start].After(now.Add(-s.window)) {
		r.start = (r.start + 1) % s.limit
		r.count--
	}
	v := Verdict{Limit: s.limit}
	if r.count >= s.limit {
		v.Reset = r.times[r.start].Add(s.window).Sub(now)
		v.RetryAfter = v.Reset
		return v, nil
	}
	r.times[(r.start+r.count)%s.limit] = now
	r.count++
	v.Allowed = true
	v.Remaining = s.limit - r.count
	v.Reset = r.times[r.start].Add(s.window).Sub(now)
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
		if r.count == 0 || !r.times[(r.start+r.count-1)%s.limit].After(now.Add(-s.window)) {
			delete(s.keys, k)
		}
	}
}
