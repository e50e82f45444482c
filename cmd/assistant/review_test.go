package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// purgeLog records the times PurgeReviews was called with.
type purgeLog struct {
	mu    sync.Mutex
	calls []time.Time
	fail  bool
}

func (p *purgeLog) PurgeReviews(_ context.Context, now time.Time) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, now)
	if p.fail {
		return 0, errors.New("database gone")
	}
	return 1, nil
}

func (p *purgeLog) times() []time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Time(nil), p.calls...)
}

// The sweep purges at once, then once every period with the clock's
// time, goes on after a failure, and stops with its context.
func TestSweepReviews(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &purgeLog{fail: true}
		logger := slog.New(slog.NewTextHandler(io.Discard, nil))
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		start := time.Now()
		go func() { sweepReviews(ctx, store, time.Now, reviewSweepEvery, logger); close(done) }()
		synctest.Wait()
		if got := store.times(); len(got) != 1 || !got[0].Equal(start) {
			t.Fatalf("at start: purged at %v, want once at %v", got, start)
		}
		time.Sleep(reviewSweepEvery - time.Second)
		synctest.Wait()
		if got := store.times(); len(got) != 1 {
			t.Fatalf("before a period: purged %d times", len(got))
		}
		time.Sleep(time.Second + 2*reviewSweepEvery)
		synctest.Wait()
		got := store.times()
		if len(got) != 4 || !got[3].Equal(start.Add(3*reviewSweepEvery)) {
			t.Fatalf("after three periods: purged at %v", got)
		}
		cancel()
		<-done
	})
}
