package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/api"
)

const asyncBody = `{"message":"Our packing station cannot keep up and orders ship late","mode":"operator","vertical":"ecommerce"}`

// TestAsyncTurn: Prefer: respond-async is answered 202 with the turn's
// id and Location; polling shows it queued, then, once a runner ran it,
// succeeded with the same chat response object the synchronous form
// answers; another workspace's key cannot see it.
func TestAsyncTurn(t *testing.T) {
	f := newFixture(t, 0, 0)
	key, other := f.newKey(t, "acme"), f.newKey(t, "globex")
	r := f.chat(t, key, asyncBody, "Prefer", "respond-async")
	if r.Code != 202 || r.Header().Get("Preference-Applied") != "respond-async" || r.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("async submission: %d %v %s", r.Code, r.Header(), r.Body)
	}
	var st struct{ ID, State string }
	r.json(t, &st)
	if st.State != "queued" || !strings.HasPrefix(st.ID, "turn_") || r.Header().Get("Location") != "/api/v1/chat/turns/"+st.ID {
		t.Fatalf("202 body %s, Location %q", r.Body, r.Header().Get("Location"))
	}
	// It counted against the key's limit, like any chat request.
	if r.Header().Get("RateLimit") == "" {
		t.Error("the 202 carries no RateLimit header")
	}
	get := func(key, id string) response {
		return f.do(t, "GET", "/api/v1/chat/turns/"+id, "", "Authorization", "Bearer "+key)
	}
	if p := get(key, st.ID); p.Code != 200 || !strings.Contains(p.Body.String(), `"state":"queued"`) {
		t.Errorf("poll before running: %d %s", p.Code, p.Body)
	}
	for _, id := range []string{st.ID, "turn_nope"} {
		p := get(other, id)
		if id == st.ID && p.Code != 404 {
			t.Errorf("another workspace polled the turn: %d", p.Code)
		}
		if p.Code != 404 || p.Header().Get("Content-Type") != "application/problem+json" {
			t.Errorf("poll of %s by another workspace: %d %s", id, p.Code, p.Header().Get("Content-Type"))
		}
	}

	runner := &api.AsyncRunner{Server: f.srv, Owner: "test", Workers: 1, Poll: 10 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { runner.Run(ctx); close(done) }()
	var polled struct {
		State       string          `json:"state"`
		Response    json.RawMessage `json:"response"`
		CompletedAt *time.Time      `json:"completed_at"`
	}
	deadline := time.Now().Add(60 * time.Second)
	for polled.State != "succeeded" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		get(key, st.ID).json(t, &polled)
	}
	cancel()
	<-done
	if polled.State != "succeeded" || polled.CompletedAt == nil {
		t.Fatalf("the turn did not succeed: %+v", polled)
	}
	// The same object as the synchronous answer to the same request.
	sync := f.chat(t, key, asyncBody)
	var a, b map[string]any
	json.Unmarshal(polled.Response, &a)
	json.Unmarshal(sync.Body.Bytes(), &b)
	if a["response"] != b["response"] || a["confidence"] == nil || a["reasoning_trace"] == nil {
		t.Errorf("async response differs from the synchronous one:\n%s\n%s", polled.Response, sync.Body)
	}
}

// TestAsyncTurnRefusals: invalid input is a 400 whatever Prefer says and
// stores nothing; a workspace's queue past its bound is a 429 with
// Retry-After.
func TestAsyncTurnRefusals(t *testing.T) {
	f := newFixture(t, 0, 0)
	f.srv.AsyncQueue = 2 // read per request
	key := f.newKey(t, "acme")
	if r := f.chat(t, key, `{"message":"  "}`, "Prefer", "respond-async"); r.Code != 400 {
		t.Errorf("empty message with Prefer: %d", r.Code)
	}
	if r := f.chat(t, key, `{"message":"hi","vertical":"nope"}`, "Prefer", "respond-async"); r.Code != 400 {
		t.Errorf("unknown vertical with Prefer: %d", r.Code)
	}
	for i := range 3 {
		r := f.chat(t, key, asyncBody, "Prefer", "wait=10, respond-async")
		want := 202
		if i == 2 {
			want = 429
		}
		if r.Code != want {
			t.Fatalf("submission %d: %d %s", i+1, r.Code, r.Body)
		}
		if want == 429 {
			var p struct {
				RetryAfterSeconds int `json:"retry_after_seconds"`
			}
			r.json(t, &p)
			if r.Header().Get("Retry-After") == "" || p.RetryAfterSeconds < 1 {
				t.Errorf("429 without Retry-After: %v %s", r.Header(), r.Body)
			}
		}
	}
	// Another preference is ignored: the turn is answered at once.
	if r := f.chat(t, key, asyncBody, "Prefer", "return=minimal"); r.Code != 200 {
		t.Errorf("Prefer: return=minimal: %d", r.Code)
	}
}
