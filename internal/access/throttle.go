package access

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
)

// LoginThrottle limits password guessing in the admin area without letting
// anyone lock an admin out from elsewhere. Unknown accounts are counted
// exactly like known ones, so the throttle reveals nothing about which
// accounts exist. Two limits, each over a fixed window that starts at the
// first failure:
//
//   - per (account, address) pair: after MaxFailures failed logins within
//     Window the pair is locked for LockFor; even the right password from
//     that address is refused until then;
//   - per account, across addresses: once MaxAccountFailures logins of the
//     account failed within Window, every address that has itself failed
//     on the account in that window is refused until the window ends. An
//     address with no failure on the account may still try, one attempt at
//     a time, so the owner's right password is accepted at once from their
//     own address; each address gets at most one failure there before it
//     is refused too.
//
// Attempts in flight count as failures until they end, so the limits hold
// under concurrency: a burst of simultaneous guesses cannot slip past a
// limit before the first of them is recorded. Callers take an Attempt with
// Begin and end it with exactly one of Fail, Succeed or Cancel.
//
// It is the in-process implementation of assistant.LoginThrottle (the
// shared one is in internal/redis, which uses this one as its fallback).
// State lives in memory, bounded by MaxEntries per map (expired windows
// dropped first, then the oldest).
type LoginThrottle struct {
	MaxFailures        int
	MaxAccountFailures int
	Window             time.Duration
	LockFor            time.Duration
	MaxEntries         int
	now                func() time.Time

	mu       sync.Mutex
	pairs    map[string]*failures
	accounts map[string]*failures
}

type failures struct {
	count       int // failures in the window
	inflight    int // attempts begun and not ended
	first       time.Time
	lockedUntil time.Time
}

// Login throttle defaults.
const (
	DefaultPairFailures    = 10
	DefaultAccountFailures = 20
	DefaultLoginWindow     = 15 * time.Minute
)

// NewLoginThrottle returns a throttle with the defaults: 10 failures of one
// account from one address in 15 minutes lock that pair for 15 minutes; 20
// failures of one account from any addresses in 15 minutes refuse every
// address that has failed on it until the window ends.
func NewLoginThrottle(now func() time.Time) *LoginThrottle {
	return &LoginThrottle{
		MaxFailures: DefaultPairFailures, MaxAccountFailures: DefaultAccountFailures,
		Window: DefaultLoginWindow, LockFor: DefaultLoginWindow, MaxEntries: 100_000,
		now: now, pairs: map[string]*failures{}, accounts: map[string]*failures{},
	}
}

func pairKey(account, ip string) string { return strings.ToLower(account) + "\x00" + ip }

var _ assistant.LoginThrottle = (*LoginThrottle)(nil)

// Attempt is one login attempt admitted by Begin.
type Attempt struct {
	t          *LoginThrottle
	pair, acct *failures
	done       bool
}

// Begin implements assistant.LoginThrottle: it admits a login attempt or
// refuses it. When refused it returns nil and how long to wait before
// trying again.
func (t *LoginThrottle) Begin(_ context.Context, account, ip string) (assistant.LoginAttempt, time.Duration) {
	a, retry := t.begin(account, ip)
	if a == nil {
		return nil, retry // never a nil *Attempt in a non-nil interface
	}
	return a, 0
}

func (t *LoginThrottle) begin(account, ip string) (*Attempt, time.Duration) {
	now := t.now()
	account = strings.ToLower(account)
	t.mu.Lock()
	defer t.mu.Unlock()
	pk := pairKey(account, ip)
	p := t.current(t.pairs, pk, now)
	a := t.current(t.accounts, account, now)
	if p != nil {
		if now.Before(p.lockedUntil) {
			return nil, p.lockedUntil.Sub(now)
		}
		// The attempts in flight would lock the pair if they all failed.
		if p.count+p.inflight >= t.MaxFailures {
			return nil, t.retryAfter(p, now)
		}
	}
	if a != nil && a.count+a.inflight >= t.MaxAccountFailures {
		// The account's budget is spent: only an address that has not
		// failed on it (and has nothing in flight) may try.
		if p != nil && (p.count > 0 || p.inflight > 0) {
			return nil, t.retryAfter(a, now)
		}
	}
	if p == nil {
		p = t.add(t.pairs, pk, now)
	}
	if a == nil {
		a = t.add(t.accounts, account, now)
	}
	p.inflight++
	a.inflight++
	return &Attempt{t: t, pair: p, acct: a}, 0
}

// retryAfter is how long until f's window or lock is over, at least a
// second.
func (t *LoginThrottle) retryAfter(f *failures, now time.Time) time.Duration {
	d := f.first.Add(t.Window).Sub(now)
	if l := f.lockedUntil.Sub(now); l > d {
		d = l
	}
	return max(d, time.Second)
}

// Fail records the attempt as a failed login.
func (a *Attempt) Fail() {
	a.end(func(now time.Time) {
		t := a.t
		for _, f := range []*failures{a.pair, a.acct} {
			if f.count > 0 && now.Sub(f.first) >= t.Window && !now.Before(f.lockedUntil) {
				f.count = 0 // the window ended while the attempt was in flight
			}
			if f.count == 0 {
				f.first = now // the window starts at the first failure
			}
			f.count++
		}
		if a.pair.count >= t.MaxFailures && !now.Before(a.pair.lockedUntil) {
			a.pair.lockedUntil = now.Add(t.LockFor)
		}
	})
}

// Succeed records a successful login: the pair's failures are cleared (the
// account's stay: they were someone's guesses).
func (a *Attempt) Succeed() {
	a.end(func(time.Time) {
		a.pair.count, a.pair.lockedUntil = 0, time.Time{}
	})
}

// Cancel ends an attempt that checked no password (the server was busy).
func (a *Attempt) Cancel() { a.end(func(time.Time) {}) }

func (a *Attempt) end(fn func(now time.Time)) {
	now := a.t.now()
	a.t.mu.Lock()
	defer a.t.mu.Unlock()
	if a.done {
		return
	}
	a.done = true
	a.pair.inflight--
	a.acct.inflight--
	fn(now)
}

// Len returns how many pairs and accounts are tracked.
func (t *LoginThrottle) Len() (pairs, accounts int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.pairs), len(t.accounts)
}

// expired says whether f holds nothing any more.
func (t *LoginThrottle) expired(f *failures, now time.Time) bool {
	return f.inflight == 0 && (f.count == 0 || now.Sub(f.first) >= t.Window) && !now.Before(f.lockedUntil)
}

// current returns the live entry for key, dropping it if its window and
// lock are over; an entry whose window is over but which has attempts in
// flight starts afresh.
func (t *LoginThrottle) current(m map[string]*failures, key string, now time.Time) *failures {
	f := m[key]
	if f == nil {
		return nil
	}
	if t.expired(f, now) {
		delete(m, key)
		return nil
	}
	if f.count > 0 && now.Sub(f.first) >= t.Window && !now.Before(f.lockedUntil) {
		f.count, f.first = 0, now
	}
	return f
}

func (t *LoginThrottle) add(m map[string]*failures, key string, now time.Time) *failures {
	if len(m) >= t.MaxEntries {
		t.evictOldest(m, now)
	}
	f := &failures{first: now}
	m[key] = f
	return f
}

// evictOldest drops expired entries, or, if none, the one whose window
// started first.
func (t *LoginThrottle) evictOldest(m map[string]*failures, now time.Time) {
	var oldestKey string
	var oldest time.Time
	for k, f := range m {
		if t.expired(f, now) {
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
