package access

import (
	"strings"
	"sync"
	"time"
)

// LoginThrottle slows down password guessing in the admin area without
// letting anyone lock an admin out from elsewhere:
//
//   - per (account, IP) pair: after MaxFailures failed logins within
//     Window, that pair is locked for LockFor: even the right password from
//     that IP is refused until then;
//   - per account, across IPs: past MaxFailures failures within Window,
//     every attempt on the account is delayed (AccountDelay per excess
//     failure, at most MaxDelay), but never refused, so the owner can still
//     log in from their own address.
//
// State lives in memory, bounded by MaxEntries (oldest windows dropped
// first).
type LoginThrottle struct {
	MaxFailures  int
	Window       time.Duration
	LockFor      time.Duration
	AccountDelay time.Duration
	MaxDelay     time.Duration
	MaxEntries   int
	now          func() time.Time

	mu       sync.Mutex
	pairs    map[string]*failures
	accounts map[string]*failures
}

type failures struct {
	count       int
	first       time.Time
	lockedUntil time.Time
}

// NewLoginThrottle returns a throttle with the defaults: 10 failures in 15
// minutes lock the pair for 15 minutes; each account failure past 10 adds
// 200 ms, up to 3 s.
func NewLoginThrottle(now func() time.Time) *LoginThrottle {
	return &LoginThrottle{
		MaxFailures: 10, Window: 15 * time.Minute, LockFor: 15 * time.Minute,
		AccountDelay: 200 * time.Millisecond, MaxDelay: 3 * time.Second, MaxEntries: 100_000,
		now: now, pairs: map[string]*failures{}, accounts: map[string]*failures{},
	}
}

func pairKey(account, ip string) string { return strings.ToLower(account) + "\x00" + ip }

// Check says whether a login attempt may proceed: lockedFor > 0 means the
// pair is locked for that long; delay is how long to wait before checking
// the password.
func (t *LoginThrottle) Check(account, ip string) (lockedFor, delay time.Duration) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if p := t.current(t.pairs, pairKey(account, ip), now); p != nil && now.Before(p.lockedUntil) {
		lockedFor = p.lockedUntil.Sub(now)
	}
	if a := t.current(t.accounts, strings.ToLower(account), now); a != nil && a.count > t.MaxFailures {
		delay = min(t.MaxDelay, time.Duration(a.count-t.MaxFailures)*t.AccountDelay)
	}
	return lockedFor, delay
}

// Failure records a failed login.
func (t *LoginThrottle) Failure(account, ip string) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.bump(t.pairs, pairKey(account, ip), now)
	if p.count >= t.MaxFailures && !now.Before(p.lockedUntil) {
		p.lockedUntil = now.Add(t.LockFor)
	}
	t.bump(t.accounts, strings.ToLower(account), now)
}

// Success clears the pair's failures.
func (t *LoginThrottle) Success(account, ip string) {
	t.mu.Lock()
	delete(t.pairs, pairKey(account, ip))
	t.mu.Unlock()
}

// current returns the live entry for key, dropping it if its window and
// lock are over.
func (t *LoginThrottle) current(m map[string]*failures, key string, now time.Time) *failures {
	f := m[key]
	if f != nil && now.Sub(f.first) >= t.Window && !now.Before(f.lockedUntil) {
		delete(m, key)
		return nil
	}
	return f
}

func (t *LoginThrottle) bump(m map[string]*failures, key string, now time.Time) *failures {
	f := t.current(m, key, now)
	if f == nil {
		if len(m) >= t.MaxEntries {
			t.evictOldest(m, now)
		}
		f = &failures{first: now}
		m[key] = f
	}
	f.count++
	return f
}

// evictOldest drops expired entries, or, if none, the one whose window
// started first.
func (t *LoginThrottle) evictOldest(m map[string]*failures, now time.Time) {
	var oldestKey string
	var oldest time.Time
	for k, f := range m {
		if now.Sub(f.first) >= t.Window && !now.Before(f.lockedUntil) {
			delete(m, k)
			continue
		}
		if oldestKey == "" || f.first.Before(oldest) {
			oldestKey, oldest = k, f.first
		}
	}
	if len(m) >= t.MaxEntries && oldestKey != "" {
		delete(m, oldestKey)
	}
}
