package ratelimit_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/ratelimit"
)

// TestSlidingWindowIsExact replays random traffic and checks D2b against a
// brute-force count: no rolling 60 s window ever holds more than 60
// admitted requests, and a request is refused only when the window is full.
func TestSlidingWindowIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	lim := ratelimit.NewSlidingWindow(60, time.Minute, clk.Now)
	var admitted []time.Time
	countIn := func(now time.Time) int {
		n := 0
		for _, a := range admitted {
			if a.After(now.Add(-time.Minute)) {
				n++
			}
		}
		return n
	}
	for i := range 20_000 {
		clk.t = clk.t.Add(time.Duration(rng.IntN(2500)) * time.Millisecond)
		v, _ := lim.Allow(context.Background(), "k")
		full := countIn(clk.t) >= 60
		if v.Allowed == full {
			t.Fatalf("request %d at %v: allowed=%v but the window holds %d", i, clk.t, v.Allowed, countIn(clk.t))
		}
		if v.Allowed {
			admitted = append(admitted, clk.t)
		} else if v.RetryAfter <= 0 {
			t.Fatalf("refused with RetryAfter %v", v.RetryAfter)
		}
	}
}

func TestSlidingWindow61stAndRetryAfter(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	lim := ratelimit.NewSlidingWindow(60, time.Minute, clk.Now)
	ctx := context.Background()
	for i := range 60 {
		v, _ := lim.Allow(ctx, "a")
		if !v.Allowed || v.Remaining != 59-i {
			t.Fatalf("request %d: %+v", i+1, v)
		}
		clk.t = clk.t.Add(500 * time.Millisecond)
	}
	v, _ := lim.Allow(ctx, "a")
	if v.Allowed {
		t.Fatal("61st request admitted")
	}
	if other, _ := lim.Allow(ctx, "b"); !other.Allowed {
		t.Fatal("another key was refused")
	}
	// A cold minute admits 60, never 119 (not a token bucket).
	secs := (v.RetryAfter + time.Second - 1).Truncate(time.Second)
	clk.t = clk.t.Add(secs - time.Second)
	if early, _ := lim.Allow(ctx, "a"); early.Allowed && secs > time.Second {
		t.Errorf("admitted a second before Retry-After")
	}
	clk.t = clk.t.Add(time.Second)
	if after, _ := lim.Allow(ctx, "a"); !after.Allowed {
		t.Errorf("refused after waiting Retry-After (%v)", secs)
	}
}

// TestOwnLimits: a key decided under its own limit gets exactly that many
// requests a window, while another key keeps the limiter's; a lowered
// limit refuses until the window holds fewer admissions than it.
func TestOwnLimits(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	lim := ratelimit.NewSlidingWindow(60, time.Minute, clk.Now)
	ctx := context.Background()
	for i := range 5 {
		v, _ := lim.AllowLimit(ctx, "five", 5)
		if !v.Allowed || v.Limit != 5 || v.Remaining != 4-i {
			t.Fatalf("request %d under its own limit of 5: %+v", i+1, v)
		}
		clk.t = clk.t.Add(time.Second)
	}
	v, _ := lim.AllowLimit(ctx, "five", 5)
	if v.Allowed || v.Limit != 5 || v.Remaining != 0 || v.RetryAfter != 55*time.Second {
		t.Errorf("sixth request under a limit of 5: %+v, want refused, retry after 55s", v)
	}
	if v, _ := lim.Allow(ctx, "other"); !v.Allowed || v.Limit != 60 || v.Remaining != 59 {
		t.Errorf("another key: %+v, want the limiter's 60", v)
	}

	for range 8 {
		if v, _ := lim.AllowLimit(ctx, "lowered", 10); !v.Allowed {
			t.Fatal("refused under a limit of 10")
		}
		clk.t = clk.t.Add(time.Second)
	}
	// 8 in the window, admitted at t0..t0+7s; now t0+8s. Under 5, the
	// fourth admission (t0+3s) must leave first: 55 s from now.
	v, _ = lim.AllowLimit(ctx, "lowered", 5)
	if v.Allowed || v.RetryAfter != 55*time.Second {
		t.Errorf("a lowered limit: %+v, want refused, retry after 55s", v)
	}
	clk.t = clk.t.Add(55 * time.Second)
	if v, _ := lim.AllowLimit(ctx, "lowered", 5); !v.Allowed || v.Remaining != 0 {
		t.Errorf("once four have left: %+v, want admitted with none remaining", v)
	}
	if v, _ := lim.AllowLimit(ctx, "none", 0); !v.Allowed {
		t.Errorf("limit 0: %+v, want admitted", v)
	}
}
