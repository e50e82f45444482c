package redis_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/constraintlab/assistant/internal/access"
	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/ratelimit"
	"github.com/constraintlab/assistant/internal/redis"
	"github.com/constraintlab/assistant/internal/testrace"
)

// decisionBudget is what a limiter decision may take with Redis dead or
// hung: about the timeout, never a wait on Redis. The clients below use a
// 10 ms timeout; the budget is ten times that, and four times more under
// the race detector, because a decision is a few scheduled goroutines
// (pool, dial, read) that a 2-core machine running other test packages
// in parallel can delay by tens of milliseconds (CI saw 54 ms, and 78 ms
// with -race, at a 50 ms budget). A hung Redis without the timeout would
// hold a decision for as long as the test runs.
const decisionBudget = testrace.Slowdown * 100 * time.Millisecond

// instance is one service instance's limiters, as cmd/assistant wires
// them: the Redis ones, each over an in-process fallback.
type instance struct {
	c        *testClient
	chat     *redis.SlidingWindow
	public   *redis.Tiered
	throttle *redis.LoginThrottle
}

func newInstance(t *testing.T, url, prefix string, opts ...func(*redis.Options)) *instance {
	c := newClient(t, url, prefix, opts...)
	return &instance{
		c:      c,
		chat:   redis.NewSlidingWindow(c.Client, "chat", 5, time.Minute, time.Now),
		public: redis.NewTiered(c.Client, "public", 2, 4, time.Minute, ratelimit.NewTiered(2, 4, time.Minute, time.Now)),
		throttle: redis.NewLoginThrottle(c.Client, defaultLoginLimits,
			access.NewLoginThrottle(time.Now)),
	}
}

// decide runs one decision of every limiter and fails the test if any
// returns an error or, when timed, takes longer than decisionBudget. It
// returns the chat decision.
func (in *instance) decide(t *testing.T, key string, timed bool) assistant.Decision {
	t.Helper()
	ctx := context.Background()
	measure := func(what string, f func() error) {
		t.Helper()
		start := time.Now()
		err := f()
		if took := time.Since(start); timed && took > decisionBudget {
			t.Errorf("%s took %v", what, took)
		}
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	var d assistant.Decision
	measure("chat", func() (err error) { d, err = in.chat.Allow(ctx, key); return err })
	measure("public admit", func() error { _, err := in.public.Admit(ctx, key); return err })
	measure("public check", func() error { _, err := in.public.Check(ctx, key); return err })
	var attempt assistant.LoginAttempt
	measure("login begin", func() error { attempt, _ = in.throttle.Begin(ctx, key+"@x.test", "192.0.2.1"); return nil })
	if attempt != nil {
		measure("login fail", func() error { attempt.Fail(); return nil })
	}
	return d
}

// fast is the configuration under test for speed: a 10 ms timeout, well
// inside decisionBudget.
func fast(o *redis.Options) { o.Timeout, o.BreakerOpen = 10*time.Millisecond, 100*time.Millisecond }

// admittedOf counts the chat admissions of n requests on key, spread
// round-robin over the instances.
func admittedOf(t *testing.T, instances []*instance, key string, n int, timed bool) int {
	t.Helper()
	admitted := 0
	for i := range n {
		if instances[i%len(instances)].decide(t, key, timed).Allowed {
			admitted++
		}
	}
	return admitted
}

// TestRedisStopsAndComesBack kills Redis mid-run: no error reaches a
// caller, every decision stays within the budget, each instance limits on
// its own meanwhile (logged once, counted in the metrics), and the exact
// shared limit is back once Redis is. The clients wait as long as
// miniredis needs while it is up (slow), so that no call times out then
// (the exact counts depend on it); a stopped server refuses connections
// at once, so the budget holds all the same. The hung server of
// TestHungRedisKeepsDecisionsFast is the test of the timeout.
func TestRedisStopsAndComesBack(t *testing.T) {
	m := miniredis.RunT(t)
	prefix := uniquePrefix(t)
	a := newInstance(t, "redis://"+m.Addr(), prefix, fast, slow)
	b := newInstance(t, "redis://"+m.Addr(), prefix, fast, slow)
	both := []*instance{a, b}

	if n := admittedOf(t, both, "before", 20, false); n != 5 {
		t.Fatalf("Redis up: %d of 20 admitted over two instances, want the shared 5", n)
	}

	m.Close()
	// Each instance now counts alone: 5 each.
	if n := admittedOf(t, both, "during", 40, true); n != 10 {
		t.Errorf("Redis down: %d of 40 admitted over two instances, want 5 each", n)
	}
	for name, in := range map[string]*instance{"a": a, "b": b} {
		if n := metric(t, in.c.reg, "assistant_redis_fallback_decisions_total"); n < 20 {
			t.Errorf("instance %s: %v fallback decisions counted, want at least 20", name, n)
		}
		if up := metric(t, in.c.reg, "assistant_redis_up"); up != 0 {
			t.Errorf("instance %s: assistant_redis_up = %v during the outage", name, up)
		}
		if n := in.c.logs.count("Redis is unavailable"); n != 1 {
			t.Errorf("instance %s: the outage was logged %d times, want once:\n%s", name, n, in.c.logs)
		}
		if n := in.c.logs.count("a Redis call failed"); n > 1 {
			t.Errorf("instance %s: failed calls were logged %d times, want at most once per 10 s", name, n)
		}
	}

	if err := m.Restart(); err != nil {
		t.Fatal(err)
	}
	// The breakers probe Redis again after BreakerOpen.
	waitFor(t, 5*time.Second, func() bool {
		a.decide(t, "probe", false)
		b.decide(t, "probe", false)
		return metric(t, a.c.reg, "assistant_redis_up") == 1 && metric(t, b.c.reg, "assistant_redis_up") == 1
	})
	before := metric(t, a.c.reg, "assistant_redis_fallback_decisions_total") + metric(t, b.c.reg, "assistant_redis_fallback_decisions_total")
	if n := admittedOf(t, both, "after", 20, false); n != 5 {
		t.Errorf("Redis back: %d of 20 admitted over two instances, want the shared 5", n)
	}
	after := metric(t, a.c.reg, "assistant_redis_fallback_decisions_total") + metric(t, b.c.reg, "assistant_redis_fallback_decisions_total")
	if after != before {
		t.Errorf("%v decisions fell back after Redis returned", after-before)
	}
	if n := a.c.logs.count("Redis answers again"); n != 1 {
		t.Errorf("the recovery was logged %d times, want once:\n%s", n, a.c.logs)
	}
}

// blackhole is a TCP server that accepts connections and never answers,
// like a hung Redis.
func blackhole(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "redis://" + ln.Addr().String()
}

// TestHungRedisKeepsDecisionsFast: a Redis that accepts connections and
// never answers costs each decision at most the timeout, then nothing
// while the breaker is open; concurrent decisions too.
func TestHungRedisKeepsDecisionsFast(t *testing.T) {
	in := newInstance(t, blackhole(t), uniquePrefix(t), fast)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				in.decide(t, "k", true)
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	for range 30 { // across several open/probe cycles of the breaker
		in.decide(t, "k", true)
		time.Sleep(10 * time.Millisecond)
	}
	// Every decision falls back, except the chat window's past its limit of
	// 5: its ledger refuses those without asking Redis.
	if n := metric(t, in.c.reg, "assistant_redis_fallback_decisions_total"); n < 110*3+5 {
		t.Errorf("%v fallback decisions, want every one of at least %d", n, 110*3+5)
	}
	if n := in.c.logs.count(`"level":"WARN"`); n > 2 {
		t.Errorf("%d warnings for one outage, want at most 2:\n%s", n, in.c.logs)
	}
}

// TestNoFallbackReturnsTheError: a tiered limiter without a fallback
// reports the failure, and the caller fails open (assistant.Limiter's
// contract). The sliding window always has its ledger (window.go).
func TestNoFallbackReturnsTheError(t *testing.T) {
	c := newClient(t, blackhole(t), uniquePrefix(t), fast)
	_, err := redis.NewTiered(c.Client, "public", 1, 5, time.Minute, nil).Admit(context.Background(), "k")
	if err == nil {
		t.Fatal("no error from a hung Redis")
	}
	if err := c.Ping(context.Background()); err == nil {
		t.Error("Ping of a hung Redis succeeded")
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Logf("error: %v", err)
	}
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
