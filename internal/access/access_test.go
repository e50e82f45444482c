package access_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/access"
	"github.com/constraintlab/assistant/internal/assistant"
)

var keyPattern = regexp.MustCompile(`\bsk_service_[0-9A-Za-z]{50}\b`)

func TestKeyFormat(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		plaintext, id, hash := access.NewKey()
		if len(plaintext) != 61 || !keyPattern.MatchString(plaintext) {
			t.Fatalf("key %q does not match the D16 format", plaintext)
		}
		got, err := access.ParseKey(plaintext)
		if err != nil || got != id || !access.ValidKeyID(id) {
			t.Fatalf("ParseKey(%q) = %q, %v; want %q", plaintext, got, err, id)
		}
		if hash != access.HashKey(plaintext) {
			t.Fatal("hash is not SHA-256 of the key")
		}
		if seen[plaintext] || seen[id] {
			t.Fatal("generated a duplicate key or id")
		}
		seen[plaintext], seen[id] = true, true
	}
}

// TestChecksumCatchesEverySingleCharacterChange: any one character changed
// anywhere after the prefix is rejected by the checksum alone.
func TestChecksumCatchesEverySingleCharacterChange(t *testing.T) {
	plaintext, _, _ := access.NewKey()
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	for i := len(access.KeyPrefix); i < len(plaintext); i++ {
		for _, c := range alphabet {
			if byte(c) == plaintext[i] {
				continue
			}
			changed := plaintext[:i] + string(c) + plaintext[i+1:]
			if _, err := access.ParseKey(changed); err == nil {
				t.Fatalf("changing position %d to %q was not detected", i, c)
			}
		}
	}
	for _, bad := range []string{"", "sk_service_", plaintext + "x", plaintext[:60], strings.Replace(plaintext, "sk_service_", "sk_servicf_", 1), strings.Replace(plaintext, plaintext[20:21], "-", 1)} {
		if _, err := access.ParseKey(bad); assistant.ErrorCode(err) != assistant.EUnauthorized {
			t.Errorf("ParseKey(%q) = %v, want unauthorized", bad, err)
		}
	}
}

// countingStore is an in-memory KeyLookup that counts its calls.
type countingStore struct {
	mu       sync.Mutex
	keys     map[string]assistant.APIKey
	lookups  int
	touches  int
	lastUsed map[string]time.Time
}

func (s *countingStore) KeyByID(_ context.Context, id string) (assistant.APIKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lookups++
	k, ok := s.keys[id]
	if !ok {
		return k, assistant.Errorf(assistant.ENotFound, "no key")
	}
	return k, nil
}

func (s *countingStore) RevokedSince(_ context.Context, since time.Time) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id, k := range s.keys {
		if k.RevokedAt != nil && !k.RevokedAt.Before(since) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

func (s *countingStore) TouchKeys(_ context.Context, used map[string]time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.touches++
	for id, at := range used {
		s.lastUsed[id] = at
	}
	return nil
}

func (s *countingStore) revoke(id string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.keys[id]
	k.RevokedAt = &at
	s.keys[id] = k
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func setup(t *testing.T) (*countingStore, *access.Verifier, *clock, string, string) {
	clk := &clock{t: time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)}
	plaintext, id, hash := access.NewKey()
	store := &countingStore{keys: map[string]assistant.APIKey{
		id: {ID: id, Workspace: "w", Name: "n", Hash: hash, CreatedAt: clk.Now()},
	}, lastUsed: map[string]time.Time{}}
	v := access.NewVerifier(store, clk.Now, slog.New(slog.NewTextHandler(io.Discard, nil)))
	return store, v, clk, plaintext, id
}

func TestVerify(t *testing.T) {
	store, v, clk, plaintext, id := setup(t)
	ctx := context.Background()

	k, err := v.Verify(ctx, plaintext)
	if err != nil || k.ID != id || k.Workspace != "w" {
		t.Fatalf("Verify = %+v, %v", k, err)
	}
	if store.lookups != 1 {
		t.Fatalf("first verification: %d lookups", store.lookups)
	}
	for range 100 {
		if _, err := v.Verify(ctx, plaintext); err != nil {
			t.Fatal(err)
		}
	}
	if store.lookups != 1 {
		t.Errorf("cached verifications made %d lookups", store.lookups-1)
	}

	// One character changed: rejected with no lookup at all.
	repl := "A"
	if plaintext[30] == 'A' {
		repl = "B"
	}
	changed := plaintext[:30] + repl + plaintext[31:]
	before := store.lookups
	if _, err := v.Verify(ctx, changed); assistant.ErrorCode(err) != assistant.EUnauthorized {
		t.Errorf("changed key: %v", err)
	}
	if store.lookups != before {
		t.Errorf("a changed key cost %d lookups", store.lookups-before)
	}

	// A well-formed key with a valid checksum but an unknown id is 401.
	other, _, _ := access.NewKey()
	if _, err := v.Verify(ctx, other); assistant.ErrorCode(err) != assistant.EUnauthorized {
		t.Errorf("unknown key: %v", err)
	}

	// Expiry is checked at every verification, cached or not.
	exp := clk.Now().Add(time.Hour)
	store.mu.Lock()
	k = store.keys[id]
	k.ExpiresAt = &exp
	store.keys[id] = k
	store.mu.Unlock()
	v.Forget(id)
	if _, err := v.Verify(ctx, plaintext); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Hour)
	if _, err := v.Verify(ctx, plaintext); assistant.ErrorCode(err) != assistant.EUnauthorized {
		t.Errorf("expired key: %v", err)
	}
}

// TestRevocationByAnotherProcess: a key revoked directly in the store (as
// `assistant keys revoke` does) stops working once the verifier polls,
// within one second (D18).
func TestRevocationByAnotherProcess(t *testing.T) {
	store, v, clk, plaintext, id := setup(t)
	v.PollInterval = 10 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { v.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	if _, err := v.Verify(ctx, plaintext); err != nil {
		t.Fatal(err)
	}
	store.revoke(id, clk.Now())
	deadline := time.Now().Add(time.Second)
	for {
		_, err := v.Verify(ctx, plaintext)
		if assistant.ErrorCode(err) == assistant.EUnauthorized {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("revoked key still accepted after one second")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestLastUsedIsBatched(t *testing.T) {
	store, v, clk, plaintext, id := setup(t)
	for range 50 {
		v.Verify(context.Background(), plaintext)
		clk.Add(time.Second)
	}
	if store.touches != 0 {
		t.Fatalf("%d writes before a flush", store.touches)
	}
	v.Flush(context.Background())
	if store.touches != 1 || !store.lastUsed[id].Equal(clk.Now().Add(-time.Second)) {
		t.Errorf("flush: %d writes, last used %v", store.touches, store.lastUsed[id])
	}
	v.Flush(context.Background())
	if store.touches != 1 {
		t.Errorf("an empty flush wrote")
	}
}

func TestPasswords(t *testing.T) {
	h := access.HashPassword("correct horse battery")
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Errorf("hash %q is not an argon2id PHC string", h)
	}
	if !access.CheckPassword(h, "correct horse battery") || access.CheckPassword(h, "correct horse batterz") {
		t.Error("CheckPassword is wrong")
	}
	if h == access.HashPassword("correct horse battery") {
		t.Error("two hashes of one password are equal: no salt")
	}
	for _, bad := range []string{"", "$argon2id$", "$bcrypt$x$y$z$w", "$argon2id$v=19$m=x$a$b"} {
		if access.CheckPassword(bad, "x") {
			t.Errorf("malformed hash %q matched", bad)
		}
	}
	if access.CheckPasswordPolicy("short") == nil || access.CheckPasswordPolicy("long enough pw") != nil {
		t.Error("password policy")
	}
}

func TestLoginThrottle(t *testing.T) {
	clk := &clock{t: time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)}
	th := access.NewLoginThrottle(clk.Now)
	fail := func(account, ip string) {
		t.Helper()
		a, _ := th.Begin(context.Background(), account, ip)
		if a == nil {
			t.Fatalf("%s from %s refused", account, ip)
		}
		a.Fail()
	}
	for range 10 {
		fail("admin@x.test", "192.0.2.1")
	}
	a, retry := th.Begin(context.Background(), "ADMIN@x.test", "192.0.2.1")
	if a != nil || retry <= 0 || retry > 15*time.Minute {
		t.Fatalf("after 10 failures: attempt %v, retry %v", a, retry)
	}
	// Another address is not locked out by the pair's failures.
	if a, _ := th.Begin(context.Background(), "admin@x.test", "198.51.100.7"); a == nil {
		t.Fatal("another address is refused")
	} else {
		a.Cancel()
	}
	// Spend the account's budget of 20 from other addresses.
	for i := range 10 {
		fail("admin@x.test", fmt.Sprintf("203.0.113.%d", i))
	}
	// Every address that failed is now refused, whatever it sends...
	if a, retry := th.Begin(context.Background(), "admin@x.test", "203.0.113.1"); a != nil || retry <= 0 {
		t.Errorf("a failed address after the account's budget: %v %v", a, retry)
	}
	// ...a fresh address gets one attempt, and the owner's right password
	// is accepted at once.
	owner, retry := th.Begin(context.Background(), "admin@x.test", "198.51.100.7")
	if owner == nil || retry != 0 {
		t.Fatalf("the owner's address is refused: %v", retry)
	}
	owner.Succeed()
	fail("admin@x.test", "198.51.100.99")
	if a, _ := th.Begin(context.Background(), "admin@x.test", "198.51.100.99"); a != nil {
		t.Error("a fresh address got a second failure past the account's budget")
	}
	// Other accounts, known or not, are untouched.
	if a, _ := th.Begin(context.Background(), "nobody@x.test", "203.0.113.1"); a == nil {
		t.Error("another account is refused")
	} else {
		a.Cancel()
	}
	clk.Add(16 * time.Minute)
	if a, _ := th.Begin(context.Background(), "admin@x.test", "192.0.2.1"); a == nil {
		t.Error("after the window: still refused")
	} else {
		a.Cancel()
	}
}

// TestLoginThrottleUnderConcurrency: attempts in flight count, so 200
// simultaneous guesses from 5 addresses are admitted at most as far as
// the limits allow, before any of them has ended.
func TestLoginThrottleUnderConcurrency(t *testing.T) {
	clk := &clock{t: time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)}
	th := access.NewLoginThrottle(clk.Now)
	var mu sync.Mutex
	var admitted []assistant.LoginAttempt
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if a, _ := th.Begin(context.Background(), "admin@x.test", fmt.Sprintf("192.0.2.%d", i%5)); a != nil {
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
	if a, _ := th.Begin(context.Background(), "admin@x.test", "192.0.2.1"); a != nil {
		t.Error("a failed address is admitted after the budget is spent")
	}
}

func TestHashLimiterBoundsConcurrency(t *testing.T) {
	l := access.NewHashLimiter(3)
	l.MaxWait = time.Hour // nobody gives up in this test
	release := make(chan struct{})
	entered := make(chan struct{}, 100)
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := l.Do(context.Background(), func() {
				entered <- struct{}{}
				<-release
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	for range 3 {
		<-entered
	}
	// Three run; the other 17 wait (queued, not running).
	for l.Stats().Waiting != 17 {
		time.Sleep(time.Millisecond)
	}
	if s := l.Stats(); s.Running != 3 || s.Peak != 3 {
		t.Fatalf("stats while full: %+v", s)
	}
	close(release)
	wg.Wait()
	if s := l.Stats(); s.Peak != 3 || s.Admitted != 20 || s.Busy != 0 {
		t.Errorf("final stats: %+v", s)
	}
}

func TestHashLimiterRefusesWhenBusy(t *testing.T) {
	l := access.NewHashLimiter(1)
	l.MaxWait, l.MaxWaiting = time.Millisecond, 1
	release := make(chan struct{})
	running := make(chan struct{})
	go l.Do(context.Background(), func() { close(running); <-release })
	<-running
	if err := l.Do(context.Background(), func() { t.Error("ran while busy") }); err != access.ErrBusy {
		t.Errorf("Do while busy = %v", err)
	}
	close(release)
}

// TestUnknownKeyIsCachedNegatively: a well-formed key whose id does not
// exist costs one lookup per NegativeTTL, and Forget (called when this
// process creates a key) drops the entry at once.
func TestUnknownKeyIsCachedNegatively(t *testing.T) {
	store, v, clk, _, _ := setup(t)
	ctx := context.Background()
	plaintext, id, hash := access.NewKey()
	before := store.lookups
	for range 50 {
		if _, err := v.Verify(ctx, plaintext); assistant.ErrorCode(err) != assistant.EUnauthorized {
			t.Fatalf("unknown key: %v", err)
		}
	}
	if n := store.lookups - before; n != 1 {
		t.Errorf("50 tries of one unknown key made %d lookups, want 1", n)
	}
	clk.Add(v.NegativeTTL)
	v.Verify(ctx, plaintext)
	if n := store.lookups - before; n != 2 {
		t.Errorf("after the TTL: %d lookups, want 2", n)
	}
	// The key is created now: Forget makes it work at once.
	store.mu.Lock()
	store.keys[id] = assistant.APIKey{ID: id, Workspace: "w", Hash: hash, CreatedAt: clk.Now()}
	store.mu.Unlock()
	v.Forget(id)
	if _, err := v.Verify(ctx, plaintext); err != nil {
		t.Errorf("a key created after a negative entry: %v", err)
	}
	// The cache is bounded.
	v.MaxNegative = 10
	for range 30 {
		k, _, _ := access.NewKey()
		v.Verify(ctx, k)
	}
}

func BenchmarkVerify(b *testing.B) {
	b.Run("cached", func(b *testing.B) {
		_, v, _, plaintext, _ := setup(&testing.T{})
		v.Verify(context.Background(), plaintext)
		b.ResetTimer()
		for b.Loop() {
			if _, err := v.Verify(context.Background(), plaintext); err != nil {
				b.Fatal(err)
			}
		}
	})
	// uncached measures the verifier with an in-memory store; the SQLite
	// lookup is measured by BenchmarkVerifyUncachedSQLite in internal/sqlite.
	b.Run("uncached", func(b *testing.B) {
		_, v, _, plaintext, id := setup(&testing.T{})
		for b.Loop() {
			v.Forget(id)
			if _, err := v.Verify(context.Background(), plaintext); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("rejected-checksum", func(b *testing.B) {
		_, v, _, plaintext, _ := setup(&testing.T{})
		bad := plaintext[:60] + "!"
		for b.Loop() {
			v.Verify(context.Background(), bad)
		}
	})
}
