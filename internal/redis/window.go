package redis

import (
	"context"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/constraintlab/assistant/internal/assistant"
)

// windowScript is the exact sliding window of D2b, atomic in Redis. The
// key is a sorted set of the admission times (microseconds of the Redis
// clock) of the requests admitted in the last window; a request is
// admitted when fewer than limit remain in (now-window, now], and only an
// admitted request is added. It returns {admitted 0|1, admissions in the
// window, microseconds until the window admits one more request}.
//
// KEYS[1] the sorted set; ARGV[1] the limit; ARGV[2] the window in
// microseconds; ARGV[3] a member name unique to this request.
var windowScript = goredis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now - window))
local count = redis.call('ZCARD', KEYS[1])
local admitted = 0
if count < limit then
  redis.call('ZADD', KEYS[1], string.format('%d', now), ARGV[3])
  redis.call('PEXPIRE', KEYS[1], string.format('%d', math.ceil(window / 1000) + 1000))
  count = count + 1
  admitted = 1
end
-- Reset: when the admission whose leaving lets one more request in
-- leaves: the oldest, or further on if the window holds more than the
-- limit (the limit was lowered while instances ran).
local nth = 0
if admitted == 0 then nth = count - limit end
local reset = 0
local oldest = redis.call('ZRANGE', KEYS[1], nth, nth, 'WITHSCORES')
if oldest[2] then
  reset = tonumber(oldest[2]) + window - now
end
return {admitted, count, reset}
`)

var _ assistant.Limiter = (*SlidingWindow)(nil)

// SlidingWindow is the exact per-key limit of D2b shared by every instance
// using the same Redis: at most Limit admitted requests per key in any
// rolling window. Its decisions have the fields and meaning of
// ratelimit.SlidingWindow's; time is the Redis server's. Memory in Redis
// is at most Limit entries per key active in the last window.
type SlidingWindow struct {
	c        *Client
	name     string
	limit    int
	window   time.Duration
	fallback assistant.Limiter
}

// NewSlidingWindow returns a limiter named name (its keys' namespace and
// its label in the metrics) admitting limit requests per window and key;
// limit 0 admits everything. While Redis cannot answer, fallback decides
// (a per-instance limiter); with no fallback, Allow returns the error and
// the caller fails open.
func NewSlidingWindow(c *Client, name string, limit int, window time.Duration, fallback assistant.Limiter) *SlidingWindow {
	return &SlidingWindow{c: c, name: name, limit: limit, window: window, fallback: fallback}
}

// Allow implements assistant.Limiter.
func (s *SlidingWindow) Allow(ctx context.Context, key string) (assistant.Decision, error) {
	if s.limit <= 0 {
		return assistant.Decision{Allowed: true}, nil
	}
	res, err := call(s.c, ctx, s.name, func(ctx context.Context) ([]int64, error) {
		return windowScript.Run(ctx, s.c.rdb, []string{s.c.key("window:"+s.name, key)},
			s.limit, s.window.Microseconds(), s.c.member()).Int64Slice()
	})
	if err == nil && len(res) != 3 {
		err = fmt.Errorf("redis %s: the window script returned %v", s.name, res)
	}
	if err != nil {
		if s.fallback == nil {
			return assistant.Decision{}, err
		}
		s.c.fellBack(s.name)
		return s.fallback.Allow(ctx, key)
	}
	d := assistant.Decision{Limit: s.limit, Reset: time.Duration(res[2]) * time.Microsecond}
	if res[0] == 1 {
		d.Allowed = true
		d.Remaining = max(0, s.limit-int(res[1]))
	} else {
		d.RetryAfter = d.Reset
	}
	return d, nil
}
