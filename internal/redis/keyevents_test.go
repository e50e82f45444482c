package redis_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	goredis "github.com/redis/go-redis/v9"

	"github.com/constraintlab/assistant/internal/access"
	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/redis"
)

// keyStore is the database the instances share, reduced to what the
// verifier reads. It reports no revocations to polling, so that only the
// Redis notices can evict a cached key in these tests.
type keyStore struct {
	mu   sync.Mutex
	keys map[string]assistant.APIKey
}

func (s *keyStore) KeyByID(_ context.Context, id string) (assistant.APIKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[id]
	if !ok {
		return assistant.APIKey{}, assistant.Errorf(assistant.ENotFound, "no key")
	}
	return k, nil
}

func (s *keyStore) RevokedSince(context.Context, time.Time) ([]string, error) { return nil, nil }
func (s *keyStore) TouchKeys(context.Context, map[string]time.Time) error     { return nil }

func (s *keyStore) create() (plaintext, id string) {
	plaintext, id, hash := access.NewKey()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys[id] = assistant.APIKey{ID: id, Workspace: "w", Name: "n", Hash: hash, CreatedAt: time.Now()}
	return plaintext, id
}

func (s *keyStore) revoke(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.keys[id]
	now := time.Now()
	k.RevokedAt = &now
	s.keys[id] = k
}

// startVerifier runs an instance's key verifier with Redis key events and
// polling switched off (an hour apart).
func startVerifier(t *testing.T, store *keyStore, url, prefix string) *access.Verifier {
	c := newClient(t, url, prefix, slow)
	v := access.NewVerifier(store, time.Now, slog.New(slog.NewTextHandler(io.Discard, nil)))
	v.PollInterval, v.FlushInterval = time.Hour, time.Hour
	events := redis.NewKeyEvents(c.Client)
	events.HealthCheck = 100 * time.Millisecond
	v.Events = events
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { v.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return v
}

// subscribers waits until n instances listen on the prefix's channel. The
// bound is generous: after Redis comes back, the client's pool may wait
// between dial attempts, and under the race detector with every package's
// tests running at once, 10 s was once not enough in CI.
func subscribers(t *testing.T, url, prefix string, n int64) {
	t.Helper()
	opt, _ := goredis.ParseURL(url)
	raw := goredis.NewClient(opt)
	defer raw.Close()
	waitFor(t, 60*time.Second, func() bool {
		got, err := raw.PubSubNumSub(context.Background(), prefix+"keys:changed").Result()
		return err == nil && got[prefix+"keys:changed"] >= n
	})
}

// refusedWithin checks that v refuses plaintext within limit, and returns
// how long it took.
func refusedWithin(t *testing.T, v *access.Verifier, plaintext string, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		_, err := v.Verify(context.Background(), plaintext)
		if assistant.ErrorCode(err) == assistant.EUnauthorized {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			t.Fatalf("the revoked key is still accepted after %v", limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRevocationReachesEveryInstance is D18 across instances: a key
// revoked through instance 1 is refused by instances 2 and 3 within a
// second, by the Redis notice alone (polling is off), though both had it
// cached.
func TestRevocationReachesEveryInstance(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		prefix := uniquePrefix(t)
		store := &keyStore{keys: map[string]assistant.APIKey{}}
		var vs []*access.Verifier
		for range 3 {
			vs = append(vs, startVerifier(t, store, b.url, prefix))
		}
		subscribers(t, b.url, prefix, 3)
		ctx := context.Background()
		plaintext, id := store.create()
		for _, v := range vs {
			if _, err := v.Verify(ctx, plaintext); err != nil {
				t.Fatalf("a new key is refused: %v", err)
			}
		}
		store.revoke(id)
		vs[0].Announce(ctx, id)
		for i, v := range vs {
			took := refusedWithin(t, v, plaintext, time.Second)
			t.Logf("instance %d refused the key after %v", i+1, took)
		}

		if b.mini == nil {
			return
		}
		// Redis restarts: the subscriptions come back by themselves.
		b.mini.Close()
		if err := b.mini.Restart(); err != nil {
			t.Fatal(err)
		}
		subscribers(t, b.url, prefix, 3)
		plaintext, id = store.create()
		for _, v := range vs {
			v.Verify(ctx, plaintext)
		}
		store.revoke(id)
		vs[2].Announce(ctx, id)
		for _, v := range vs {
			refusedWithin(t, v, plaintext, time.Second)
		}
	})
}

// TestSubscriptionWaitsForRedis: an instance that starts while Redis is
// down subscribes once Redis is up, and then hears notices.
func TestSubscriptionWaitsForRedis(t *testing.T) {
	m := miniredis.RunT(t)
	url := "redis://" + m.Addr()
	m.Close()
	prefix := uniquePrefix(t)
	store := &keyStore{keys: map[string]assistant.APIKey{}}
	listener := startVerifier(t, store, url, prefix)
	time.Sleep(200 * time.Millisecond) // a few failed connection attempts
	if err := m.Restart(); err != nil {
		t.Fatal(err)
	}
	subscribers(t, url, prefix, 1)
	announcer := startVerifier(t, store, url, prefix)
	noticeReaches(t, store, announcer, listener)
}

// TestIdleSubscriptionKeepsItsConnection: an idle subscriber pings Redis
// every HealthCheck and keeps its connection while the pongs come back
// (a ping unanswered in time would replace it). Over twenty health checks
// a few replacements are tolerated for a loaded machine; reading every
// idle read's timeout as a failure makes about eighteen (two subscribers).
func TestIdleSubscriptionKeepsItsConnection(t *testing.T) {
	m := miniredis.RunT(t)
	url := "redis://" + m.Addr()
	prefix := uniquePrefix(t)
	store := &keyStore{keys: map[string]assistant.APIKey{}}
	listener := startVerifier(t, store, url, prefix)
	announcer := startVerifier(t, store, url, prefix)
	subscribers(t, url, prefix, 2)
	before := m.TotalConnectionCount()
	time.Sleep(2 * time.Second) // twenty health checks
	if extra := m.TotalConnectionCount() - before; extra > 5 {
		t.Errorf("%d new connections over twenty idle health checks, want at most 5", extra)
	}
	noticeReaches(t, store, announcer, listener)
}

// noticeReaches checks that a key the listener accepted and the announcer
// then revoked is refused by the listener within a second, by the notice.
func noticeReaches(t *testing.T, store *keyStore, announcer, listener *access.Verifier) {
	t.Helper()
	plaintext, id := store.create()
	if _, err := listener.Verify(context.Background(), plaintext); err != nil {
		t.Fatal(err)
	}
	store.revoke(id)
	announcer.Announce(context.Background(), id)
	refusedWithin(t, listener, plaintext, time.Second)
}
