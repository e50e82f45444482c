package redis

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/constraintlab/assistant/internal/assistant"
)

// throttleLib holds what both throttle scripts share. An entry (a pair or
// an account) is a hash {count, first, locked} (microseconds of the Redis
// clock) and a sorted set of the attempts in flight, scored by when each
// stops counting (an instance that dies mid-attempt leaves nothing behind
// for longer than the attempt TTL).
const throttleLib = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local function num(x) return string.format('%d', x) end
local function load(h, inf)
  if inf then redis.call('ZREMRANGEBYSCORE', inf, '-inf', num(now)) end
  local v = redis.call('HMGET', h, 'count', 'first', 'locked')
  local f = {exists = v[2] and true or false, count = tonumber(v[1]) or 0, first = tonumber(v[2]) or now,
    locked = tonumber(v[3]) or 0, inflight = 0}
  if inf then f.inflight = redis.call('ZCARD', inf) end
  return f
end
local function save(h, inf, f, window, ttl)
  redis.call('HSET', h, 'count', f.count, 'first', num(f.first), 'locked', num(f.locked))
  local keep = math.max(f.first + window, f.locked, now + ttl) - now
  redis.call('PEXPIRE', h, num(math.ceil(keep / 1000) + 1000))
  if inf and redis.call('EXISTS', inf) == 1 then
    redis.call('PEXPIRE', inf, num(math.ceil(ttl / 1000) + 1000))
  end
end
-- A window that is over (and no lock) starts afresh.
local function roll(f, window)
  if f.count > 0 and now - f.first >= window and now >= f.locked then
    f.count, f.first = 0, now
  end
end
`

// throttleBeginScript is access.LoginThrottle.Begin in one atomic step.
// It returns {1, 0} when the attempt is admitted (and now in flight), or
// {0, microseconds to wait}.
//
// KEYS: pair hash, pair in-flight set, account hash, account in-flight
// set. ARGV: pair limit, account limit, window, lock, attempt TTL (both in
// microseconds), attempt id.
var throttleBeginScript = goredis.NewScript(throttleLib + `
local pairMax, acctMax = tonumber(ARGV[1]), tonumber(ARGV[2])
local window, lockFor, ttl = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
-- live returns the entry's state, or nil when it holds nothing any more.
local function live(h, inf)
  local f = load(h, inf)
  if not f.exists and f.inflight == 0 then return nil end
  if f.inflight == 0 and (f.count == 0 or now - f.first >= window) and now >= f.locked then
    redis.call('DEL', h)
    return nil
  end
  if f.count > 0 and now - f.first >= window and now >= f.locked then
    roll(f, window)
    redis.call('HSET', h, 'count', 0, 'first', num(now))
  end
  return f
end
local function retry(f)
  return math.max(f.first + window - now, f.locked - now, 1000000)
end
local p = live(KEYS[1], KEYS[2])
local a = live(KEYS[3], KEYS[4])
if p then
  if now < p.locked then return {0, p.locked - now} end
  -- The attempts in flight would lock the pair if they all failed.
  if p.count + p.inflight >= pairMax then return {0, retry(p)} end
end
if a and a.count + a.inflight >= acctMax then
  -- The account's budget is spent: only an address that has not failed
  -- on it (and has nothing in flight) may try.
  if p and (p.count > 0 or p.inflight > 0) then return {0, retry(a)} end
end
p = p or {count = 0, first = now, locked = 0}
a = a or {count = 0, first = now, locked = 0}
redis.call('ZADD', KEYS[2], num(now + ttl), ARGV[6])
redis.call('ZADD', KEYS[4], num(now + ttl), ARGV[6])
save(KEYS[1], KEYS[2], p, window, ttl)
save(KEYS[3], KEYS[4], a, window, ttl)
return {1, 0}
`)

// throttleEndScript ends an attempt: ARGV[5] is fail, succeed or cancel.
//
// KEYS as throttleBeginScript's. ARGV: pair limit, window, lock, attempt
// TTL, how it ended, attempt id.
var throttleEndScript = goredis.NewScript(throttleLib + `
local pairMax = tonumber(ARGV[1])
local window, lockFor, ttl = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('ZREM', KEYS[2], ARGV[6])
redis.call('ZREM', KEYS[4], ARGV[6])
if ARGV[5] == 'succeed' then
  -- The pair's failures are cleared; the account's stay.
  local p = load(KEYS[1], nil)
  if p.exists then
    p.count, p.locked = 0, 0
    save(KEYS[1], KEYS[2], p, window, ttl)
  end
elseif ARGV[5] == 'fail' then
  local p, a = load(KEYS[1], nil), load(KEYS[3], nil)
  for _, f in ipairs({p, a}) do
    roll(f, window)
    if f.count == 0 then f.first = now end -- the window starts at the first failure
    f.count = f.count + 1
  end
  if p.count >= pairMax and now >= p.locked then p.locked = now + lockFor end
  save(KEYS[1], KEYS[2], p, window, ttl)
  save(KEYS[3], KEYS[4], a, window, ttl)
end
return 1
`)

// LoginLimits are a login throttle's limits: PairFailures failures of one
// account from one address within Window lock that pair for LockFor;
// AccountFailures failures of one account from any addresses within
// Window refuse every address that failed on it until the window ends.
type LoginLimits struct {
	PairFailures, AccountFailures int
	Window, LockFor               time.Duration
}

// DefaultAttemptTTL is how long an attempt in flight counts at most: an
// attempt whose instance died before ending it stops counting then.
const DefaultAttemptTTL = 30 * time.Second

var _ assistant.LoginThrottle = (*LoginThrottle)(nil)

// LoginThrottle is the admin login throttle shared by every instance using
// the same Redis, with the semantics of access.LoginThrottle (limits per
// pair and per account, attempts in flight counted as failures). State
// lives in Redis under hashes of the account and the address, never the
// plain email, and expires when its window and lock are over.
//
// While Redis cannot answer, fallback (a per-instance throttle) decides;
// a failure that cannot be recorded in Redis is recorded there instead.
type LoginThrottle struct {
	c          *Client
	limits     LoginLimits
	fallback   assistant.LoginThrottle
	AttemptTTL time.Duration
}

// NewLoginThrottle returns a shared throttle with these limits and its
// per-instance fallback (required).
func NewLoginThrottle(c *Client, limits LoginLimits, fallback assistant.LoginThrottle) *LoginThrottle {
	return &LoginThrottle{c: c, limits: limits, fallback: fallback, AttemptTTL: DefaultAttemptTTL}
}

// loginLimiterName labels the throttle in logs and metrics.
const loginLimiterName = "login_throttle"

// Begin implements assistant.LoginThrottle.
func (t *LoginThrottle) Begin(ctx context.Context, account, address string) (assistant.LoginAttempt, time.Duration) {
	keys := t.keys(account, address)
	id := t.c.member()
	res, err := call(t.c, ctx, loginLimiterName, func(ctx context.Context) ([]int64, error) {
		return throttleBeginScript.Run(ctx, t.c.rdb, keys, t.limits.PairFailures, t.limits.AccountFailures,
			t.limits.Window.Microseconds(), t.limits.LockFor.Microseconds(), t.AttemptTTL.Microseconds(), id).Int64Slice()
	})
	if err == nil && len(res) != 2 {
		err = fmt.Errorf("redis %s: the begin script returned %v", loginLimiterName, res)
	}
	if err != nil {
		t.c.fellBack(loginLimiterName)
		return t.fallback.Begin(ctx, account, address)
	}
	if res[0] != 1 {
		return nil, time.Duration(res[1]) * time.Microsecond
	}
	return &loginAttempt{t: t, ctx: context.WithoutCancel(ctx), keys: keys, id: id, account: account, address: address}, 0
}

// keys returns the pair's and the account's keys, all with the account's
// hash as their hash tag.
func (t *LoginThrottle) keys(account, address string) []string {
	acct := digest(strings.ToLower(account))
	pair := t.c.key("login", acct) + ":pair:" + digest(address)
	whole := t.c.key("login", acct) + ":account"
	return []string{pair, pair + ":inflight", whole, whole + ":inflight"}
}

// digest names an account or address in keys without storing it.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}

type loginAttempt struct {
	t                *LoginThrottle
	ctx              context.Context // Begin's, without its cancellation
	keys             []string
	id               string
	account, address string
	done             atomic.Bool
}

// Fail implements assistant.LoginAttempt. A failure that cannot reach
// Redis is recorded in the fallback throttle, so it still counts on this
// instance.
func (a *loginAttempt) Fail() {
	if a.end("fail") != nil {
		if fa, _ := a.t.fallback.Begin(a.ctx, a.account, a.address); fa != nil {
			fa.Fail()
		}
	}
}

// Succeed implements assistant.LoginAttempt.
func (a *loginAttempt) Succeed() { a.end("succeed") }

// Cancel implements assistant.LoginAttempt.
func (a *loginAttempt) Cancel() { a.end("cancel") }

// end runs the end script once; an attempt it cannot end stays in flight
// in Redis until AttemptTTL.
func (a *loginAttempt) end(how string) error {
	if a.done.Swap(true) {
		return nil
	}
	l := a.t.limits
	_, err := call(a.t.c, a.ctx, loginLimiterName, func(ctx context.Context) (int64, error) {
		return throttleEndScript.Run(ctx, a.t.c.rdb, a.keys, l.PairFailures, l.Window.Microseconds(),
			l.LockFor.Microseconds(), a.t.AttemptTTL.Microseconds(), how, a.id).Int64()
	})
	if err != nil {
		a.t.c.fellBack(loginLimiterName)
	}
	return err
}
