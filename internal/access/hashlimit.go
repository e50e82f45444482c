package access

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrBusy is returned by HashLimiter.Do when no hashing slot freed up in
// time: the caller answers 503 with Retry-After.
var ErrBusy = errors.New("too many password checks in progress")

// HashLimiter bounds how many password hashes (argon2id: about 19 MiB and
// tens of milliseconds of CPU each) run at once, so a burst of logins costs
// waiting time, never more memory. A request beyond the bound waits up to
// MaxWait for a slot, and at most MaxWaiting requests wait at once; the
// rest are refused with ErrBusy at once.
type HashLimiter struct {
	MaxWait    time.Duration
	MaxWaiting int

	slots chan struct{}

	mu             sync.Mutex
	waiting        int
	running, peak  int
	admitted, busy int64
}

// Hash limiter defaults.
const (
	DefaultConcurrentHashes = 4
	DefaultHashWait         = 2 * time.Second
	DefaultHashWaiting      = 64
)

// NewHashLimiter returns a limiter running at most n hashes at once (n < 1
// means DefaultConcurrentHashes), with the default wait and queue.
func NewHashLimiter(n int) *HashLimiter {
	if n < 1 {
		n = DefaultConcurrentHashes
	}
	return &HashLimiter{MaxWait: DefaultHashWait, MaxWaiting: DefaultHashWaiting, slots: make(chan struct{}, n)}
}

// Do runs fn once a slot is free, or returns ErrBusy (or the context's
// error) without running it.
func (l *HashLimiter) Do(ctx context.Context, fn func()) error {
	select {
	case l.slots <- struct{}{}:
	default:
		if err := l.wait(ctx); err != nil {
			return err
		}
	}
	l.mu.Lock()
	l.running++
	l.admitted++
	l.peak = max(l.peak, l.running)
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.running--
		l.mu.Unlock()
		<-l.slots
	}()
	fn()
	return nil
}

func (l *HashLimiter) wait(ctx context.Context) error {
	l.mu.Lock()
	if l.waiting >= l.MaxWaiting {
		l.busy++
		l.mu.Unlock()
		return ErrBusy
	}
	l.waiting++
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.waiting--
		l.mu.Unlock()
	}()
	timer := time.NewTimer(l.MaxWait)
	defer timer.Stop()
	select {
	case l.slots <- struct{}{}:
		return nil
	case <-timer.C:
		l.mu.Lock()
		l.busy++
		l.mu.Unlock()
		return ErrBusy
	case <-ctx.Done():
		return ctx.Err()
	}
}

// HashStats is what a HashLimiter has seen.
type HashStats struct {
	// Peak is the most hashes that ever ran at once.
	Peak int
	// Admitted counts hashes run; Busy counts requests refused.
	Admitted, Busy int64
	// Running and Waiting are the hashes running and the requests
	// waiting now.
	Running, Waiting int
}

// Stats returns the limiter's counters.
func (l *HashLimiter) Stats() HashStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return HashStats{Peak: l.peak, Admitted: l.admitted, Busy: l.busy, Running: l.running, Waiting: l.waiting}
}

// Size returns how many hashes may run at once.
func (l *HashLimiter) Size() int { return cap(l.slots) }
