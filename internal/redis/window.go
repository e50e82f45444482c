package redis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/constraintlab/assistant/internal/assistant"
)

// The per-key limit of D2b across instances, and what bounds it when
// Redis fails (docs/operations.md, "The per-key limit through Redis
// faults"):
//
//   - Redis holds the shared window: per key, a sorted set of the
//     admission times (Redis clock) of the last window, checked and
//     updated by one Lua script. While Redis answers, a key gets exactly
//     Limit admissions in any window, whichever instances serve it.
//   - Each instance also keeps its own ledger of the admissions it made
//     for the key in the last window, by either path, and never admits
//     when its ledger already holds Limit. So in any window, whatever
//     Redis does (down, hung, slow, restarted empty), N instances admit at
//     most N x Limit.
//   - While Redis cannot answer, an instance admits from its ledger alone.
//     Those admissions are carried into the shared window, with their age,
//     by the instance's next call that Redis answers, so the shared window
//     counts them once Redis is back.
//   - Redis's state has an epoch (a key created with a random value when
//     missing). A Redis that restarted empty, or lost its keys, has a new
//     one; an instance that finds the epoch changed carries its whole
//     ledger again before deciding, so the shared window again knows every
//     admission of the instances that call it.
//   - A call that timed out may have run, and Redis may hold the window
//     full: its request is refused (Retry-After 1 s), never admitted past
//     the limit, and its member is removed from Redis's window by the next
//     call, in case the call did add it. Only calls that cannot have run
//     (a refused connection, the breaker open) leave the decision to the
//     ledger.

// windowScript decides one request. KEYS[1] the sorted set; KEYS[2] the
// epoch key. ARGV[1] the limit; ARGV[2] the window in microseconds;
// ARGV[3] this request's member; ARGV[4] the epoch the caller's ledger was
// carried under; ARGV[5] a new epoch value, used when none exists; ARGV[6]
// the epoch's time to live in milliseconds; ARGV[7] n, then n pairs
// (member, age in microseconds) of admissions to carry in, then the
// members of refused requests whose call may have added them (removed).
// It returns {admitted 1|0,
// admissions in the window, microseconds until the window admits one more,
// the epoch}, or {-1, 0, 0, epoch} without deciding when the caller's
// epoch is not the current one.
var windowScript = goredis.NewScript(`
local epoch = redis.call('GET', KEYS[2])
if not epoch then
  epoch = ARGV[5]
  redis.call('SET', KEYS[2], epoch, 'PX', ARGV[6])
end
if epoch ~= ARGV[4] then
  return {-1, 0, 0, epoch}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local carried = tonumber(ARGV[7])
for i = 8, 7 + 2 * carried, 2 do
  local at = now - tonumber(ARGV[i + 1])
  if at > now - window then
    redis.call('ZADD', KEYS[1], 'NX', string.format('%d', at), ARGV[i])
  end
end
for i = 8 + 2 * carried, #ARGV do
  redis.call('ZREM', KEYS[1], ARGV[i])
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now - window))
local count = redis.call('ZCARD', KEYS[1])
local admitted = 0
if count < limit then
  redis.call('ZADD', KEYS[1], string.format('%d', now), ARGV[3])
  count = count + 1
  admitted = 1
end
if count > 0 then
  redis.call('PEXPIRE', KEYS[1], string.format('%d', math.ceil(window / 1000) + 1000))
end
-- Reset: when the admission whose leaving lets one more request in
-- leaves: the oldest, or further on if the window holds more than the
-- limit (carried admissions, or a limit lowered while instances ran).
local nth = 0
if admitted == 0 then nth = count - limit end
local reset = 0
local oldest = redis.call('ZRANGE', KEYS[1], nth, nth, 'WITHSCORES')
if oldest[2] then
  reset = tonumber(oldest[2]) + window - now
end
return {admitted, count, reset, epoch}
`)

// unknownRetryAfter is the Retry-After of a request refused because Redis
// did not answer in time and the outcome is unknown.
const unknownRetryAfter = time.Second

// maxAbandoned bounds the members of refused requests a ledger waits to
// remove from Redis.
const maxAbandoned = 1000

// epochTTL is how long the epoch key lives; when it expires the instances
// carry their ledgers again, as after a restart of Redis.
const epochTTL = 10 * time.Minute

var _ assistant.Limiter = (*SlidingWindow)(nil)

// SlidingWindow is the exact per-key limit of D2b shared by every instance
// using the same Redis, with this instance's ledger as its bound when
// Redis fails (see the comment at the top of the file). Its decisions have
// the fields and meaning of ratelimit.SlidingWindow's; while Redis answers
// they are Redis's, on Redis's clock.
type SlidingWindow struct {
	c      *Client
	name   string
	limit  int
	window time.Duration
	now    func() time.Time

	mu        sync.Mutex
	ledgers   map[string]*ledger
	lastSweep time.Time
}

// ledger is this instance's record of its admissions of one key in the
// last window, oldest first, and of the requests it refused after a call
// that may have admitted them in Redis (abandoned: their members are
// removed from Redis's window by the next call).
type ledger struct {
	entries   []admission
	abandoned []string
}

type admission struct {
	at     time.Time
	member string
	// epoch is the Redis epoch whose window holds this admission; "" when
	// none does yet (admitted while Redis could not answer).
	epoch string
	// deciding marks a request reserved while Redis decides it.
	deciding bool
}

// NewSlidingWindow returns a limiter named name (its keys' namespace and
// its label in the metrics) admitting limit requests per window and key;
// limit 0 admits everything. now is the clock of the instance's ledger
// (time.Now when nil).
func NewSlidingWindow(c *Client, name string, limit int, window time.Duration, now func() time.Time) *SlidingWindow {
	if now == nil {
		now = time.Now
	}
	return &SlidingWindow{c: c, name: name, limit: limit, window: window, now: now, ledgers: map[string]*ledger{}}
}

// Allow implements assistant.Limiter. It does not fail: when Redis cannot
// decide, the instance's ledger does.
func (s *SlidingWindow) Allow(ctx context.Context, key string) (assistant.Decision, error) {
	return s.AllowLimit(ctx, key, s.limit)
}

// AllowLimit implements assistant.Limiter: Allow under limit, which every
// instance passes to the script with the key (a key's own limit is stored
// with the key, so all instances agree on it). Limit 0 admits everything.
func (s *SlidingWindow) AllowLimit(ctx context.Context, key string, limit int) (assistant.Decision, error) {
	if limit <= 0 {
		return assistant.Decision{Allowed: true}, nil
	}
	now := s.now()
	member := s.c.member()
	s.mu.Lock()
	l := s.ledger(key, now)
	if len(l.entries) >= limit {
		d := s.localDecision(l, now, false, limit)
		s.mu.Unlock()
		return d, nil
	}
	l.entries = append(l.entries, admission{at: now, member: member, deciding: true})
	s.mu.Unlock()

	res, err := s.ask(ctx, key, member, limit)
	s.mu.Lock()
	defer s.mu.Unlock()
	l = s.ledger(key, now)
	i := slices.IndexFunc(l.entries, func(a admission) bool { return a.member == member })
	if err != nil {
		s.c.fellBack(s.name)
		if timedOut(err) || ctx.Err() != nil {
			// The call may have run, and Redis's window may be full: an
			// unknown outcome is refused, so that a slow answer never
			// admits past the limit. (Once the breaker opens, calls fail
			// at once without running, and the ledger admits.)
			if i >= 0 {
				l.entries = slices.Delete(l.entries, i, i+1)
			}
			if len(l.abandoned) >= maxAbandoned {
				l.abandoned = l.abandoned[1:] // its entry ages out of Redis's window by itself
			}
			l.abandoned = append(l.abandoned, member)
			return assistant.Decision{Limit: limit, Reset: unknownRetryAfter, RetryAfter: unknownRetryAfter}, nil
		}
		// Redis could not run the call: the ledger admits (it had room),
		// and the admission is carried into Redis by a later call.
		if i >= 0 {
			l.entries[i].deciding = false
		}
		return s.localDecision(l, now, true, limit), nil
	}
	if res.admitted {
		if i >= 0 {
			l.entries[i].deciding, l.entries[i].epoch = false, res.epoch
		}
	} else if i >= 0 {
		l.entries = slices.Delete(l.entries, i, i+1)
	}
	// Never more than a window: an admission carried in from a ledger can
	// carry a time a little ahead of Redis's clock.
	d := assistant.Decision{Limit: limit, Reset: min(res.reset, s.window)}
	if res.admitted {
		d.Allowed = true
		d.Remaining = max(0, limit-res.count)
	} else {
		d.RetryAfter = d.Reset
	}
	return d, nil
}

// localDecision is the ledger's verdict: admitted (the request is already
// in it) or refused.
func (s *SlidingWindow) localDecision(l *ledger, now time.Time, admitted bool, limit int) assistant.Decision {
	d := assistant.Decision{Limit: limit, Allowed: admitted, Remaining: max(0, limit-len(l.entries))}
	if len(l.entries) > 0 {
		// An entry stamped by Redis's clock can be a little ahead of this
		// process's now: never more than a window.
		d.Reset = min(l.entries[0].at.Add(s.window).Sub(now), s.window)
	}
	if !admitted {
		d.RetryAfter = d.Reset
	}
	return d
}

// windowAnswer is the script's decision.
type windowAnswer struct {
	admitted bool
	count    int
	reset    time.Duration
	epoch    string
}

// ask has Redis decide, with the ledger's admissions Redis does not hold
// carried in, and again with the whole ledger when Redis's epoch changed.
func (s *SlidingWindow) ask(ctx context.Context, key, member string, limit int) (windowAnswer, error) {
	res, err := s.run(ctx, key, member, limit)
	if err != nil || res.count != -1 {
		return res, err
	}
	s.c.setEpoch(res.epoch) // another epoch: carry everything
	if res, err = s.run(ctx, key, member, limit); err == nil && res.count == -1 {
		return windowAnswer{}, fmt.Errorf("redis %s: the epoch changed twice during one decision", s.name)
	}
	return res, err
}

// run calls the script once, carrying the ledger's admissions that the
// current epoch does not hold.
func (s *SlidingWindow) run(ctx context.Context, key, member string, limit int) (windowAnswer, error) {
	epoch := s.c.currentEpoch()
	now := s.now()
	s.mu.Lock()
	var carried []string
	var pairs []any
	l := s.ledger(key, now)
	for _, a := range l.entries {
		if !a.deciding && a.epoch != epoch {
			pairs = append(pairs, a.member, max(0, now.Sub(a.at).Microseconds()))
			carried = append(carried, a.member)
		}
	}
	abandoned := slices.Clone(l.abandoned)
	s.mu.Unlock()
	args := append([]any{limit, s.window.Microseconds(), member, epoch, s.c.member(), epochTTL.Milliseconds(), len(carried)}, pairs...)
	for _, m := range abandoned {
		args = append(args, m)
	}
	raw, err := call(s.c, ctx, s.name, func(ctx context.Context) ([]any, error) {
		return windowScript.Run(ctx, s.c.rdb, []string{s.c.key("window:"+s.name, key), s.c.prefix + "epoch"}, args...).Slice()
	})
	if err != nil {
		return windowAnswer{}, err
	}
	res, err := parseWindowAnswer(raw)
	if err != nil {
		return windowAnswer{}, fmt.Errorf("redis %s: %w", s.name, err)
	}
	if res.count != -1 {
		s.mu.Lock()
		l := s.ledger(key, now)
		for i := range l.entries {
			if slices.Contains(carried, l.entries[i].member) {
				l.entries[i].epoch = res.epoch
			}
		}
		l.abandoned = slices.DeleteFunc(l.abandoned, func(m string) bool { return slices.Contains(abandoned, m) })
		s.mu.Unlock()
	}
	return res, nil
}

func parseWindowAnswer(raw []any) (windowAnswer, error) {
	if len(raw) != 4 {
		return windowAnswer{}, fmt.Errorf("the window script returned %v", raw)
	}
	admitted, _ := raw[0].(int64)
	count, _ := raw[1].(int64)
	reset, _ := raw[2].(int64)
	epoch, _ := raw[3].(string)
	if admitted == -1 {
		return windowAnswer{count: -1, epoch: epoch}, nil
	}
	return windowAnswer{admitted: admitted == 1, count: int(count), reset: time.Duration(reset) * time.Microsecond, epoch: epoch}, nil
}

// timedOut reports whether a call failed by running out of time, so that
// it may have run in Redis.
func timedOut(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// ledger returns key's ledger without the admissions that left the window
// ((now-window, now] counts), sweeping idle keys at most once per window.
// The caller holds s.mu.
func (s *SlidingWindow) ledger(key string, now time.Time) *ledger {
	if now.Sub(s.lastSweep) >= s.window {
		s.lastSweep = now
		for k, l := range s.ledgers {
			if len(l.entries) == 0 || !l.entries[len(l.entries)-1].at.After(now.Add(-s.window)) {
				delete(s.ledgers, k)
			}
		}
	}
	l := s.ledgers[key]
	if l == nil {
		l = &ledger{}
		s.ledgers[key] = l
	}
	cut := 0
	for cut < len(l.entries) && !l.entries[cut].deciding && !l.entries[cut].at.After(now.Add(-s.window)) {
		cut++
	}
	l.entries = l.entries[cut:]
	return l
}

// epoch helpers on the client: the epoch of Redis's state that this
// instance's ledgers were last carried under.
func (c *Client) currentEpoch() string {
	c.epochMu.Lock()
	defer c.epochMu.Unlock()
	return c.epoch
}

func (c *Client) setEpoch(e string) {
	c.epochMu.Lock()
	c.epoch = e
	c.epochMu.Unlock()
}
