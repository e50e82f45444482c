package ratelimit_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/ratelimit"
)

// The limiters' cost per decision, in process. Run with
//
//	go test ./internal/ratelimit -run '^$' -bench .

// BenchmarkSlidingWindow decides for one key at its limit's steady state:
// the window holds limit timestamps, and each call slides it.
func BenchmarkSlidingWindow(b *testing.B) {
	now := time.Unix(1_700_000_000, 0)
	w := ratelimit.NewSlidingWindow(60, time.Minute, func() time.Time { return now })
	ctx := context.Background()
	for b.Loop() {
		now = now.Add(time.Second)
		if _, err := w.Allow(ctx, "key"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTiered decides for client addresses spread over 1,000 keys, as
// the public endpoints' per-IP limiter does.
func BenchmarkTiered(b *testing.B) {
	now := time.Unix(1_700_000_000, 0)
	t := ratelimit.NewTiered(60, 600, time.Minute, func() time.Time { return now })
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = "10.0." + strconv.Itoa(i/256) + "." + strconv.Itoa(i%256)
	}
	i := 0
	for b.Loop() {
		t.Allow(keys[i%len(keys)])
		i++
	}
}
