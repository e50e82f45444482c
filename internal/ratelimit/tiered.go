package ratelimit

import (
	"container/list"
	"context"
	"math"
	"sync"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
)

// Decision is the outcome of one request under a Tiered limiter.
type Decision struct {
	// Allowed is false when the request is past the hard limit and must be
	// refused (429).
	Allowed bool
	// OverSoft is true when the request is past the soft limit: it is still
	// served, but the client is told it has nothing left.
	OverSoft bool
	// SoftRemaining and HardRemaining are the requests left under each
	// limit in the current window, never negative.
	SoftRemaining, HardRemaining int
	// RetryAfter is how long to wait before a request is admitted again
	// (when !Allowed) or before the client is back under the soft limit
	// (when OverSoft). Zero otherwise.
	RetryAfter time.Duration
}

// Tiered limits each client to Soft requests per Window before flagging it
// and Hard requests per Window before refusing it. It counts with the
// sliding-window approximation: the count of the previous fixed window,
// weighted by how much of it still overlaps the sliding window, plus the
// count of the current fixed window. The error is bounded by how unevenly
// the previous window's requests were spread (docs/api.md). A limit of 0
// disables that tier.
//
// Memory is bounded: at most MaxClients clients are tracked, the least
// recently seen one is forgotten first, and clients idle for two windows
// are dropped as they are met.
type Tiered struct {
	Soft, Hard int
	Window     time.Duration
	MaxClients int
	Now        func() time.Time

	mu      sync.Mutex
	clients map[string]*list.Element // of *client, most recent at the front
	lru     *list.List
}

type client struct {
	key         string
	windowStart time.Time // start of the current fixed window
	prev, curr  int
}

// DefaultMaxClients is the number of clients tracked when MaxClients is 0:
// about 10 MiB at worst.
const DefaultMaxClients = 50_000

// NewTiered returns a limiter with the given limits per window.
func NewTiered(soft, hard int, window time.Duration, now func() time.Time) *Tiered {
	return &Tiered{Soft: soft, Hard: hard, Window: window, Now: now}
}

// Len returns the number of clients currently tracked.
func (t *Tiered) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.clients)
}

// Allow counts one request of the client identified by key and says whether
// it may be served.
func (t *Tiered) Allow(key string) Decision {
	if t.Soft <= 0 && t.Hard <= 0 {
		return Decision{Allowed: true, SoftRemaining: math.MaxInt, HardRemaining: math.MaxInt}
	}
	now := t.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.client(key, now)
	c.advance(now, t.Window)

	est := c.estimate(now, t.Window)
	d := Decision{Allowed: true, SoftRemaining: math.MaxInt, HardRemaining: math.MaxInt}
	if t.Hard > 0 && est+1 > float64(t.Hard) {
		d.Allowed = false
		d.HardRemaining = 0
		d.RetryAfter = c.waitUntilBelow(now, t.Window, t.Hard)
		if t.Soft > 0 {
			d.SoftRemaining = 0
		}
		return d // refused requests are not counted
	}
	c.curr++
	est++
	if t.Hard > 0 {
		d.HardRemaining = max(0, t.Hard-int(math.Ceil(est)))
	}
	if t.Soft > 0 {
		d.SoftRemaining = max(0, t.Soft-int(math.Ceil(est)))
		if est > float64(t.Soft) {
			d.OverSoft = true
			d.RetryAfter = c.waitUntilBelow(now, t.Window, t.Soft)
		}
	}
	return d
}

// client returns the state of key, creating it (and evicting the least
// recently seen client when full) if needed.
func (t *Tiered) client(key string, now time.Time) *client {
	if t.clients == nil {
		t.clients = map[string]*list.Element{}
		t.lru = list.New()
	}
	if el, ok := t.clients[key]; ok {
		t.lru.MoveToFront(el)
		return el.Value.(*client)
	}
	maxClients := t.MaxClients
	if maxClients <= 0 {
		maxClients = DefaultMaxClients
	}
	// Drop idle clients from the back, then the oldest if still full.
	for el := t.lru.Back(); el != nil; el = t.lru.Back() {
		c := el.Value.(*client)
		idle := now.Sub(c.windowStart) >= 2*t.Window
		if !idle && len(t.clients) < maxClients {
			break
		}
		t.lru.Remove(el)
		delete(t.clients, c.key)
	}
	c := &client{key: key, windowStart: now.Truncate(t.Window)}
	t.clients[key] = t.lru.PushFront(c)
	return c
}

// advance moves the client's fixed windows forward to the one holding now.
func (c *client) advance(now time.Time, window time.Duration) {
	start := now.Truncate(window)
	switch {
	case start.Equal(c.windowStart):
	case start.Sub(c.windowStart) == window:
		c.prev, c.curr = c.curr, 0
	default:
		c.prev, c.curr = 0, 0
	}
	c.windowStart = start
}

// estimate is the sliding-window count at now.
func (c *client) estimate(now time.Time, window time.Duration) float64 {
	elapsed := float64(now.Sub(c.windowStart)) / float64(window)
	return float64(c.prev)*(1-elapsed) + float64(c.curr)
}

// waitUntilBelow returns how long from now, with no further admitted
// requests, until one more request fits under limit.
func (c *client) waitUntilBelow(now time.Time, window time.Duration, limit int) time.Duration {
	room := float64(limit - 1) // the estimate must be at most limit-1 before a request
	w := float64(window)
	elapsed := float64(now.Sub(c.windowStart))
	// Inside the current window the estimate falls as the previous
	// window's share shrinks.
	if float64(c.curr) <= room && c.prev > 0 {
		// prev*(1-x/w) + curr <= room  =>  x >= w*(1-(room-curr)/prev)
		x := w * (1 - (room-float64(c.curr))/float64(c.prev))
		if x <= elapsed {
			return 0
		}
		if x < w {
			return time.Duration(x - elapsed)
		}
	}
	// In the next window the current count becomes the previous one:
	// curr*(1-y/w) <= room  =>  y >= w*(1-room/curr).
	y := 0.0
	if c.curr > 0 && float64(c.curr) > room {
		y = w * (1 - room/float64(c.curr))
	}
	return time.Duration(w - elapsed + y)
}

// Peek says whether a request of key would be admitted under the hard
// limit now, without counting one: for limits that count only some
// outcomes (failed authentication), checked before the request and
// counted with Allow after it.
func (t *Tiered) Peek(key string) Decision {
	d := Decision{Allowed: true, SoftRemaining: math.MaxInt, HardRemaining: math.MaxInt}
	if t.Hard <= 0 {
		return d
	}
	now := t.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	el, ok := t.clients[key]
	if !ok {
		return d
	}
	c := el.Value.(*client)
	c.advance(now, t.Window)
	if est := c.estimate(now, t.Window); est+1 > float64(t.Hard) {
		d.Allowed, d.HardRemaining = false, 0
		d.RetryAfter = c.waitUntilBelow(now, t.Window, t.Hard)
	}
	return d
}

var _ assistant.TieredLimiter = (*Tiered)(nil)

// Admit implements assistant.TieredLimiter with Allow. It never fails.
func (t *Tiered) Admit(_ context.Context, key string) (assistant.Decision, error) {
	return t.Allow(key).decision(t.Hard), nil
}

// Check implements assistant.TieredLimiter with Peek. It never fails.
func (t *Tiered) Check(_ context.Context, key string) (assistant.Decision, error) {
	return t.Peek(key).decision(t.Hard), nil
}

// Policy implements assistant.TieredLimiter.
func (t *Tiered) Policy() assistant.TieredPolicy {
	return assistant.TieredPolicy{Soft: t.Soft, Hard: t.Hard, Window: t.Window}
}

func (d Decision) decision(hard int) assistant.Decision {
	out := assistant.Decision{Allowed: d.Allowed, OverSoft: d.OverSoft, RetryAfter: d.RetryAfter}
	if hard > 0 {
		out.Limit, out.Remaining = hard, d.HardRemaining
	}
	return out
}
