package redis_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	goredis "github.com/redis/go-redis/v9"

	"github.com/constraintlab/assistant/internal/access"
	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/redis"
)

// defaultLoginLimits are access.LoginThrottle's defaults.
var defaultLoginLimits = redis.LoginLimits{
	PairFailures: access.DefaultPairFailures, AccountFailures: access.DefaultAccountFailures,
	Window: access.DefaultLoginWindow, LockFor: access.DefaultLoginWindow,
}

// throttles returns the in-process throttle and a Redis one (on miniredis,
// whose clock follows the fake one), each with its clock, so that one
// behaviour test runs on both.
func throttles(t *testing.T) map[string]func(t *testing.T) (assistant.LoginThrottle, *clock) {
	start := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	return map[string]func(t *testing.T) (assistant.LoginThrottle, *clock){
		"in-process": func(t *testing.T) (assistant.LoginThrottle, *clock) {
			clk := newClock(nil, start)
			return access.NewLoginThrottle(clk.Now), clk
		},
		"redis": func(t *testing.T) (assistant.LoginThrottle, *clock) {
			m := miniredis.RunT(t)
			clk := newClock(m, start)
			c := newClient(t, "redis://"+m.Addr(), uniquePrefix(t), slow)
			t.Cleanup(func() {
				if n := metric(t, c.reg, "assistant_redis_fallback_decisions_total"); n != 0 {
					t.Errorf("%v decisions fell back to the in-process throttle", n)
				}
			})
			return redis.NewLoginThrottle(c.Client, defaultLoginLimits, access.NewLoginThrottle(clk.Now)), clk
		},
	}
}

// TestLoginThrottleSemantics is the behaviour of the admin login throttle,
// held by both implementations alike.
func TestLoginThrottleSemantics(t *testing.T) {
	for name, open := range throttles(t) {
		t.Run(name, func(t *testing.T) {
			th, clk := open(t)
			ctx := context.Background()
			begin := func(account, ip string) (assistant.LoginAttempt, time.Duration) {
				return th.Begin(ctx, account, ip)
			}
			fail := func(account, ip string) {
				t.Helper()
				a, _ := begin(account, ip)
				if a == nil {
					t.Fatalf("%s from %s refused", account, ip)
				}
				a.Fail()
			}
			for range 10 {
				fail("admin@x.test", "192.0.2.1")
			}
			a, retry := begin("ADMIN@x.test", "192.0.2.1")
			if a != nil || retry <= 0 || retry > 15*time.Minute {
				t.Fatalf("after 10 failures: attempt %v, retry %v", a, retry)
			}
			// Another address is not locked out by the pair's failures.
			if a, _ := begin("admin@x.test", "198.51.100.7"); a == nil {
				t.Fatal("another address is refused")
			} else {
				a.Cancel()
			}
			// Spend the account's budget of 20 from other addresses.
			for i := range 10 {
				fail("admin@x.test", fmt.Sprintf("203.0.113.%d", i))
			}
			// Every address that failed is now refused...
			if a, retry := begin("admin@x.test", "203.0.113.1"); a != nil || retry <= 0 {
				t.Errorf("a failed address after the account's budget: %v %v", a, retry)
			}
			// ...a fresh address gets one attempt, and the owner's right
			// password is accepted at once.
			owner, retry := begin("admin@x.test", "198.51.100.7")
			if owner == nil || retry != 0 {
				t.Fatalf("the owner's address is refused: %v", retry)
			}
			owner.Succeed()
			owner.Fail() // a second end does nothing
			fail("admin@x.test", "198.51.100.99")
			if a, _ := begin("admin@x.test", "198.51.100.99"); a != nil {
				t.Error("a fresh address got a second failure past the account's budget")
			}
			// Other accounts, known or not, are untouched.
			if a, _ := begin("nobody@x.test", "203.0.113.1"); a == nil {
				t.Error("another account is refused")
			} else {
				a.Cancel()
			}
			clk.Add(16 * time.Minute)
			if a, _ := begin("admin@x.test", "192.0.2.1"); a == nil {
				t.Error("after the window: still refused")
			} else {
				a.Cancel()
			}
			// A success clears the pair's failures.
			for range 9 {
				fail("owner@x.test", "192.0.2.5")
			}
			ok, _ := begin("owner@x.test", "192.0.2.5")
			ok.Succeed()
			for range 9 {
				fail("owner@x.test", "192.0.2.5")
			}
			if a, _ := begin("owner@x.test", "192.0.2.5"); a == nil {
				t.Error("the failures before a success still count")
			} else {
				a.Cancel()
			}
		})
	}
}

// TestLoginThrottleCountsAttemptsInFlight: 200 guesses from 5 addresses
// (one from each, then 195 at once), across three instances for Redis, are
// admitted exactly as far as the limits allow before any of them has
// ended.
func TestLoginThrottleCountsAttemptsInFlight(t *testing.T) {
	run := func(t *testing.T, instances []assistant.LoginThrottle) {
		var mu sync.Mutex
		var admitted []assistant.LoginAttempt
		// One attempt from each address first: an address that has
		// nothing in flight may still try once the account's budget is
		// spent (by design), so without these the count would depend on
		// which goroutines the scheduler happened to run first.
		for i := range 5 {
			a, _ := instances[i%len(instances)].Begin(context.Background(), "admin@x.test", fmt.Sprintf("192.0.2.%d", i))
			if a == nil {
				t.Fatalf("the first attempt from address %d was refused", i)
			}
			admitted = append(admitted, a)
		}
		var wg sync.WaitGroup
		for i := range 195 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if a, _ := instances[i%len(instances)].Begin(context.Background(), "admin@x.test", fmt.Sprintf("192.0.2.%d", i%5)); a != nil {
					mu.Lock()
					admitted = append(admitted, a)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		// 5 addresses x 10 per pair = 50 would pass the pair limit; the
		// account's budget of 20 stops them first.
		if len(admitted) != access.DefaultAccountFailures {
			t.Fatalf("%d attempts admitted at once, want %d", len(admitted), access.DefaultAccountFailures)
		}
		for _, a := range admitted {
			a.Fail()
		}
		for _, th := range instances {
			if a, _ := th.Begin(context.Background(), "admin@x.test", "192.0.2.1"); a != nil {
				t.Error("a failed address is admitted after the budget is spent")
			}
		}
	}
	t.Run("in-process", func(t *testing.T) {
		run(t, []assistant.LoginThrottle{access.NewLoginThrottle(time.Now)})
	})
	eachBackend(t, func(t *testing.T, b backend) {
		prefix := uniquePrefix(t)
		var instances []assistant.LoginThrottle
		for range 3 {
			c := newClient(t, b.url, prefix, slow)
			instances = append(instances, redis.NewLoginThrottle(c.Client, defaultLoginLimits, access.NewLoginThrottle(time.Now)))
			t.Cleanup(func() {
				if n := metric(t, c.reg, "assistant_redis_fallback_decisions_total"); n != 0 {
					t.Errorf("%v decisions fell back to the in-process throttle", n)
				}
			})
		}
		run(t, instances)
	})
}

// TestLoginAttemptsInFlightExpire: an attempt never ended (its instance
// died) stops counting after the attempt TTL.
func TestLoginAttemptsInFlightExpire(t *testing.T) {
	m := miniredis.RunT(t)
	clk := newClock(m, time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
	c := newClient(t, "redis://"+m.Addr(), uniquePrefix(t), slow)
	th := redis.NewLoginThrottle(c.Client, defaultLoginLimits, access.NewLoginThrottle(clk.Now))
	ctx := context.Background()
	for range 10 {
		if a, _ := th.Begin(ctx, "admin@x.test", "192.0.2.1"); a == nil {
			t.Fatal("refused before the limit")
		}
	}
	if a, _ := th.Begin(ctx, "admin@x.test", "192.0.2.1"); a != nil {
		t.Fatal("an 11th attempt in flight was admitted")
	}
	clk.Add(redis.DefaultAttemptTTL)
	if a, _ := th.Begin(ctx, "admin@x.test", "192.0.2.1"); a == nil {
		t.Fatal("attempts abandoned for the attempt TTL still count")
	}
}

// TestRedisStateExpires: every key the limiters and the throttle write has
// a time to live, so Redis memory is bounded by recent traffic.
func TestRedisStateExpires(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		prefix := uniquePrefix(t)
		c := newClient(t, b.url, prefix, slow)
		ctx := context.Background()
		redis.NewSlidingWindow(c.Client, "chat", 5, time.Minute, nil).Allow(ctx, "k") // also writes the epoch key
		redis.NewTiered(c.Client, "public", 1, 5, time.Minute, nil).Admit(ctx, "192.0.2.1")
		th := redis.NewLoginThrottle(c.Client, defaultLoginLimits, access.NewLoginThrottle(time.Now))
		a, _ := th.Begin(ctx, "admin@x.test", "192.0.2.1")
		a.Fail()
		a2, _ := th.Begin(ctx, "admin@x.test", "192.0.2.1") // one left in flight
		_ = a2

		opt, _ := goredis.ParseURL(b.url)
		raw := goredis.NewClient(opt)
		defer raw.Close()
		keys, err := raw.Keys(ctx, prefix+"*").Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != 7 { // window, epoch, tiered, and the throttle's pair, account and their in-flight sets
			t.Errorf("keys written: %v", keys)
		}
		for _, k := range keys {
			ttl, err := raw.PTTL(ctx, k).Result()
			if err != nil || ttl <= 0 || ttl > 16*time.Minute+time.Second {
				t.Errorf("%s: time to live %v %v", k, ttl, err)
			}
		}
	})
}
