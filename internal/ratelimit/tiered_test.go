package ratelimit_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/ratelimit"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time { return c.t }

func TestSoftAndHardLimits(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)}
	lim := ratelimit.NewTiered(60, 600, time.Minute, clk.Now)
	for i := 1; i <= 600; i++ {
		d := lim.Allow("a")
		if !d.Allowed {
			t.Fatalf("request %d refused", i)
		}
		if d.OverSoft != (i > 60) {
			t.Fatalf("request %d: OverSoft = %v", i, d.OverSoft)
		}
		if i > 60 && d.SoftRemaining != 0 {
			t.Fatalf("request %d: SoftRemaining = %d", i, d.SoftRemaining)
		}
	}
	d := lim.Allow("a")
	if d.Allowed || d.RetryAfter <= 0 {
		t.Fatalf("601st request: %+v", d)
	}
	if !lim.Allow("b").Allowed {
		t.Fatal("another client was refused")
	}
}

// TestRetryAfterIsHonest checks D2 under many traffic shapes: a client that
// waits RetryAfter, rounded up to whole seconds as the header says, is
// admitted.
func TestRetryAfterIsHonest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(rng.IntN(60_000)) * time.Millisecond)}
		hard := 5 + rng.IntN(50)
		lim := ratelimit.NewTiered(0, hard, time.Minute, clk.Now)
		// Spread some requests, then hit the limit.
		for range rng.IntN(3 * hard) {
			lim.Allow("c")
			clk.t = clk.t.Add(time.Duration(rng.IntN(3000)) * time.Millisecond)
		}
		var d ratelimit.Decision
		for d = lim.Allow("c"); d.Allowed; d = lim.Allow("c") {
		}
		wait := (d.RetryAfter + time.Second - 1).Truncate(time.Second)
		if wait < time.Second {
			wait = time.Second
		}
		clk.t = clk.t.Add(wait)
		if !lim.Allow("c").Allowed {
			t.Fatalf("trial %d: refused after waiting Retry-After %s (hard %d)", trial, wait, hard)
		}
	}
}

func TestMemoryIsBounded(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	lim := ratelimit.NewTiered(60, 600, time.Minute, clk.Now)
	lim.MaxClients = 10_000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range 100_000 {
		lim.Allow(fmt.Sprintf("198.%d.%d.%d", i>>16&255, i>>8&255, i&255))
		if i%1000 == 0 {
			clk.t = clk.t.Add(10 * time.Millisecond)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if n := lim.Len(); n > 10_000 {
		t.Errorf("tracking %d clients, cap is 10000", n)
	}
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 8<<20 {
		t.Errorf("heap grew by %d bytes for 100,000 clients with a cap of 10,000", grown)
	}
	// Idle clients are dropped as new ones arrive.
	clk.t = clk.t.Add(3 * time.Minute)
	lim.Allow("fresh")
	if n := lim.Len(); n != 1 {
		t.Errorf("after everyone went idle, tracking %d clients, want 1", n)
	}
}

func TestDisabled(t *testing.T) {
	lim := ratelimit.NewTiered(0, 0, time.Minute, time.Now)
	for range 10_000 {
		if d := lim.Allow("x"); !d.Allowed || d.OverSoft {
			t.Fatal("a disabled limiter limited")
		}
	}
}

func TestTieredPeekDoesNotCount(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	lim := ratelimit.NewTiered(0, 3, time.Minute, func() time.Time { return now })
	for range 10 {
		if d := lim.Peek("a"); !d.Allowed {
			t.Fatal("peek refused with nothing counted")
		}
	}
	for range 3 {
		lim.Allow("a")
	}
	if d := lim.Peek("a"); d.Allowed || d.RetryAfter <= 0 {
		t.Errorf("peek after 3 of 3: %+v", d)
	}
	if d := lim.Peek("b"); !d.Allowed {
		t.Error("another key is refused")
	}
	now = now.Add(2 * time.Minute)
	if d := lim.Peek("a"); !d.Allowed {
		t.Error("refused two windows later")
	}
}
