package api_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/constraintlab/assistant/internal/access"
	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/redis"
)

// keyWithLimit creates the same key (workspace acme, its own limit) in
// each fixture's store, as instances sharing one database see it.
func keyWithLimit(t *testing.T, limit int, fs ...*fixture) string {
	t.Helper()
	plain, id, hash := access.NewKey()
	for _, f := range fs {
		ctx := context.Background()
		if err := f.db.EnsureWorkspace(ctx, "acme"); err != nil {
			t.Fatal(err)
		}
		if err := f.db.CreateKey(ctx, assistant.APIKey{ID: id, Workspace: "acme", Name: "limited", Hash: hash,
			CreatedAt: f.clock.Now(), RateLimit: limit}); err != nil {
			t.Fatal(err)
		}
	}
	return plain
}

const verifyBody = `{"text":"Waiting time explodes as utilization approaches one."}`

// A key created with a limit of 5 gets its sixth request in a minute
// refused with 429, with its own policy in the headers, while another
// key of the same workspace keeps the default of 60.
func TestKeyOwnLimit(t *testing.T) {
	f := newFixture(t, 0, 0)
	five := keyWithLimit(t, 5, f)
	other := f.newKey(t, "acme")
	for i := range 5 {
		r := f.verify(t, five, verifyBody)
		if r.Code != http.StatusOK || r.Header().Get("RateLimit-Policy") != `"chat";q=5;w=60` ||
			r.Header().Get("RateLimit") != fmt.Sprintf(`"chat";r=%d;t=60`, 4-i) {
			t.Fatalf("request %d: %d %v", i+1, r.Code, r.Header())
		}
	}
	r := f.verify(t, five, verifyBody)
	p := assertProblem(t, r, http.StatusTooManyRequests)
	if p["detail"] != "This key made 5 requests in the last 60 seconds. Retry after 60 seconds." {
		t.Errorf("429 detail %q", p["detail"])
	}
	r = f.verify(t, other, verifyBody)
	if r.Code != http.StatusOK || r.Header().Get("RateLimit-Policy") != `"chat";q=60;w=60` || r.Header().Get("RateLimit") != `"chat";r=59;t=60` {
		t.Errorf("another key of the workspace: %d %v", r.Code, r.Header())
	}
	// The OpenAI facade shares the key's budget, in its own error shape.
	r = f.do(t, "POST", "/api/v1/openai/chat/completions", `{"model":"assistant-operator","messages":[{"role":"user","content":"hello"}]}`,
		"Authorization", "Bearer "+five)
	if r.Code != http.StatusTooManyRequests || r.Header().Get("Retry-After") == "" {
		t.Errorf("the completions past the key's limit: %d %s", r.Code, r.Body)
	}
}

// The same with three instances sharing Redis: five admitted in all.
func TestKeyOwnLimitAcrossInstances(t *testing.T) {
	urls := map[string]func(t *testing.T) string{"miniredis": func(t *testing.T) string { return "redis://" + miniredis.RunT(t).Addr() }}
	if u := os.Getenv("ASSISTANT_TEST_REDIS_URL"); u != "" {
		urls["redis"] = func(*testing.T) string { return u }
	}
	for name, url := range urls {
		t.Run(name, func(t *testing.T) {
			u := url(t)
			prefix := fmt.Sprintf("test-keylimit-%d:", time.Now().UnixNano())
			var fs []*fixture
			for range 3 {
				f := newFixture(t, 0, 0)
				// A generous timeout: on a loaded machine a call that times out
				// is refused (its outcome is unknown), which is not what this
				// test is about (internal/redis tests the faults).
				c, err := redis.New(redis.Options{URL: u, Prefix: prefix, Timeout: 5 * time.Second, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				f.srv.ChatLimiter = redis.NewSlidingWindow(c, "chat", 60, time.Minute, nil)
				f.srv.Metrics = prometheus.NewRegistry()
				f.h, f.routes = f.srv.HandlerAndRoutes()
				fs = append(fs, f)
			}
			five := keyWithLimit(t, 5, fs...)
			other := keyWithLimit(t, 0, fs...)
			admitted, refused := 0, 0
			for i := range 9 {
				switch r := fs[i%3].verify(t, five, verifyBody); r.Code {
				case http.StatusOK:
					admitted++
				case http.StatusTooManyRequests:
					refused++
				default:
					t.Fatalf("request %d: %d %s", i+1, r.Code, r.Body)
				}
			}
			if admitted != 5 || refused != 4 {
				t.Errorf("%d admitted and %d refused across three instances, want 5 and 4", admitted, refused)
			}
			for i := range 3 {
				if r := fs[i].verify(t, other, verifyBody); r.Code != http.StatusOK {
					t.Errorf("another key of the workspace on instance %d: %d", i+1, r.Code)
				}
			}
		})
	}
}
