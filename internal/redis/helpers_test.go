package redis_test

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/constraintlab/assistant/internal/redis"
)

func TestMain(m *testing.M) {
	// go-redis logs every failed dial on stderr; the tests kill Redis.
	redis.RouteDriverLogs(slog.New(slog.DiscardHandler))
	os.Exit(m.Run())
}

// realRedisURL returns ASSISTANT_TEST_REDIS_URL. Without it the test is
// skipped, except in CI (CI=true), where it fails: CI always provides
// Redis.
func realRedisURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("ASSISTANT_TEST_REDIS_URL")
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("ASSISTANT_TEST_REDIS_URL is not set, and CI must run the Redis tests")
		}
		t.Skip("ASSISTANT_TEST_REDIS_URL is not set")
	}
	return u
}

// backend is one Redis server a test runs against.
type backend struct {
	name string
	url  string
	mini *miniredis.Miniredis // nil for the real server
}

// eachBackend runs test against miniredis, and against the real Redis of
// ASSISTANT_TEST_REDIS_URL (see realRedisURL).
func eachBackend(t *testing.T, test func(t *testing.T, b backend)) {
	t.Run("miniredis", func(t *testing.T) {
		m := miniredis.RunT(t)
		test(t, backend{name: "miniredis", url: "redis://" + m.Addr(), mini: m})
	})
	t.Run("redis", func(t *testing.T) {
		test(t, backend{name: "redis", url: realRedisURL(t)})
	})
}

// logBuffer collects a client's log lines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// count returns how many lines contain s.
func (l *logBuffer) count(s string) int { return strings.Count(l.String(), s) }

// testClient is a client with the pieces a test inspects.
type testClient struct {
	*redis.Client
	logs *logBuffer
	reg  *prometheus.Registry
}

// uniquePrefix keeps the keys of one test (and one run) apart from every
// other's on a shared server.
func uniquePrefix(t *testing.T) string {
	var b [6]byte
	rand.Read(b[:])
	return "test:" + strings.ReplaceAll(t.Name(), "/", ":") + ":" + hex.EncodeToString(b[:]) + ":"
}

// newClient returns a client of url with prefix, closed at the end of the
// test; opts may change its options.
func newClient(t *testing.T, url, prefix string, opts ...func(*redis.Options)) *testClient {
	t.Helper()
	logs := &logBuffer{}
	reg := prometheus.NewRegistry()
	o := redis.Options{URL: url, Prefix: prefix, Logger: slog.New(slog.NewJSONHandler(logs, nil)), Metrics: reg}
	for _, f := range opts {
		f(&o)
	}
	c, err := redis.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &testClient{Client: c, logs: logs, reg: reg}
}

// metric returns the value of the counter or gauge name (summed over its
// labels) in reg.
func metric(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			switch {
			case m.GetCounter() != nil:
				sum += m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				sum += m.GetGauge().GetValue()
			}
		}
	}
	return sum
}

// clock is a fake clock for the in-process limiters, kept in step with
// miniredis's TIME.
type clock struct {
	mu   sync.Mutex
	t    time.Time
	mini *miniredis.Miniredis
}

func newClock(m *miniredis.Miniredis, start time.Time) *clock {
	c := &clock{t: start, mini: m}
	if m != nil {
		m.SetTime(start)
	}
	return c
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	if c.mini != nil {
		c.mini.SetTime(c.t)
	}
}
