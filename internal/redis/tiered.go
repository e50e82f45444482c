package redis

import (
	"context"
	"fmt"
	"math"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/constraintlab/assistant/internal/assistant"
)

// tieredScript counts one client in the approximate sliding window of the
// in-process ratelimit.Tiered: the count of the previous fixed window,
// weighted by how much of it the sliding window still covers, plus the
// count of the current fixed window. Fixed windows start at multiples of
// the window on the Redis clock. A request is refused when the estimate
// would pass the hard limit; with ARGV[3] = 1 an admitted request is
// counted, else nothing is written (Check). It returns {admitted 0|1,
// previous window's count, current window's count before this request,
// microseconds since the current window started}; the caller derives the
// rest of the decision from these.
//
// KEYS[1] a hash {start, prev, curr}; ARGV[1] the hard limit (0: none);
// ARGV[2] the window in microseconds; ARGV[3] 1 to count.
var tieredScript = goredis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local hard = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local start = now - (now % window)
local h = redis.call('HMGET', KEYS[1], 'start', 'prev', 'curr')
local ws = tonumber(h[1])
local prev, curr = 0, 0
if ws == start then
  prev, curr = tonumber(h[2]) or 0, tonumber(h[3]) or 0
elseif ws == start - window then
  prev = tonumber(h[3]) or 0
end
local elapsed = now - start
local admitted = 1
if hard > 0 and prev * (1 - elapsed / window) + curr + 1 > hard then
  admitted = 0
end
if admitted == 1 and ARGV[3] == '1' then
  redis.call('HSET', KEYS[1], 'start', string.format('%d', start), 'prev', prev, 'curr', curr + 1)
  redis.call('PEXPIRE', KEYS[1], string.format('%d', math.ceil(2 * window / 1000)))
end
return {admitted, prev, curr, elapsed}
`)

var _ assistant.TieredLimiter = (*Tiered)(nil)

// Tiered is the per-client limit with a soft and a hard tier (D13) shared
// by every instance using the same Redis. It counts like
// ratelimit.Tiered, with the same error bound (docs/api.md), and its
// decisions have the same fields and meaning; time is the Redis server's.
// A client's state is one small hash that expires two windows after its
// last admitted request.
type Tiered struct {
	c          *Client
	name       string
	soft, hard int
	window     time.Duration
	fallback   assistant.TieredLimiter
}

// NewTiered returns a limiter named name (its keys' namespace and its
// label in the metrics) with the given limits per window; 0 disables a
// tier. While Redis cannot answer, fallback decides (a per-instance
// limiter with the same policy); with no fallback, the error is returned
// and the caller fails open.
func NewTiered(c *Client, name string, soft, hard int, window time.Duration, fallback assistant.TieredLimiter) *Tiered {
	return &Tiered{c: c, name: name, soft: soft, hard: hard, window: window, fallback: fallback}
}

// Policy implements assistant.TieredLimiter.
func (t *Tiered) Policy() assistant.TieredPolicy {
	return assistant.TieredPolicy{Soft: t.soft, Hard: t.hard, Window: t.window}
}

// Admit implements assistant.TieredLimiter: it counts the request unless
// it is refused.
func (t *Tiered) Admit(ctx context.Context, key string) (assistant.Decision, error) {
	if t.soft <= 0 && t.hard <= 0 {
		return assistant.Decision{Allowed: true}, nil
	}
	st, err := t.run(ctx, key, true)
	if err != nil {
		if t.fallback == nil {
			return assistant.Decision{}, err
		}
		t.c.fellBack(t.name)
		return t.fallback.Admit(ctx, key)
	}
	d := assistant.Decision{Allowed: true}
	hardLeft := math.MaxInt
	if !st.admitted {
		d.Allowed, hardLeft = false, 0
		d.RetryAfter = st.waitUntilBelow(t.window, t.hard)
	} else {
		est := st.estimate(t.window) + 1 // this request (summed as ratelimit.Tiered does)
		st.curr++
		if t.hard > 0 {
			hardLeft = max(0, t.hard-int(math.Ceil(est)))
		}
		if t.soft > 0 && est > float64(t.soft) {
			d.OverSoft = true
			d.RetryAfter = st.waitUntilBelow(t.window, t.soft)
		}
	}
	if t.hard > 0 {
		d.Limit, d.Remaining = t.hard, hardLeft
	}
	return d, nil
}

// Check implements assistant.TieredLimiter: it says whether a request
// would be admitted under the hard limit now, counting nothing.
func (t *Tiered) Check(ctx context.Context, key string) (assistant.Decision, error) {
	if t.hard <= 0 {
		return assistant.Decision{Allowed: true}, nil
	}
	st, err := t.run(ctx, key, false)
	if err != nil {
		if t.fallback == nil {
			return assistant.Decision{}, err
		}
		t.c.fellBack(t.name)
		return t.fallback.Check(ctx, key)
	}
	// As ratelimit.Tiered.Check: nothing is said of what remains when a
	// request would be admitted.
	d := assistant.Decision{Allowed: true, Limit: t.hard, Remaining: math.MaxInt}
	if !st.admitted {
		d.Allowed, d.Remaining = false, 0
		d.RetryAfter = st.waitUntilBelow(t.window, t.hard)
	}
	return d, nil
}

// tieredState is what the script saw of one client.
type tieredState struct {
	admitted   bool
	prev, curr int
	elapsed    time.Duration // since the current fixed window started
}

func (t *Tiered) run(ctx context.Context, key string, count bool) (tieredState, error) {
	flag := 0
	if count {
		flag = 1
	}
	res, err := call(t.c, ctx, t.name, func(ctx context.Context) ([]int64, error) {
		return tieredScript.Run(ctx, t.c.rdb, []string{t.c.key("tiered:"+t.name, key)},
			t.hard, t.window.Microseconds(), flag).Int64Slice()
	})
	if err == nil && len(res) != 4 {
		err = fmt.Errorf("redis %s: the tiered script returned %v", t.name, res)
	}
	if err != nil {
		return tieredState{}, err
	}
	return tieredState{admitted: res[0] == 1, prev: int(res[1]), curr: int(res[2]),
		elapsed: time.Duration(res[3]) * time.Microsecond}, nil
}

// estimate is the sliding-window count.
func (s tieredState) estimate(window time.Duration) float64 {
	return float64(s.prev)*(1-float64(s.elapsed)/float64(window)) + float64(s.curr)
}

// waitUntilBelow returns how long, with no further admitted requests,
// until one more request fits under limit: the arithmetic of
// ratelimit.Tiered, on the state the script returned.
func (s tieredState) waitUntilBelow(window time.Duration, limit int) time.Duration {
	room := float64(limit - 1) // the estimate must be at most limit-1 before a request
	w := float64(window)
	elapsed := float64(s.elapsed)
	// Inside the current window the estimate falls as the previous
	// window's share shrinks.
	if float64(s.curr) <= room && s.prev > 0 {
		x := w * (1 - (room-float64(s.curr))/float64(s.prev))
		if x <= elapsed {
			return 0
		}
		if x < w {
			return time.Duration(x - elapsed)
		}
	}
	// In the next window the current count becomes the previous one.
	y := 0.0
	if s.curr > 0 && float64(s.curr) > room {
		y = w * (1 - room/float64(s.curr))
	}
	return time.Duration(w - elapsed + y)
}
