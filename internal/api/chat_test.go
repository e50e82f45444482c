package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/constraintlab/assistant/internal/access"
	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/chat"
	"github.com/constraintlab/assistant/internal/diagnose"
	"github.com/constraintlab/assistant/internal/llm/builtin"
	"github.com/constraintlab/assistant/internal/ratelimit"
	"github.com/constraintlab/assistant/internal/retrieval"
	"github.com/constraintlab/assistant/internal/sqlite"
	"github.com/constraintlab/assistant/internal/verify"
)

func newChatService(t *testing.T, db *sqlite.DB, d *diagnose.Diagnoser, now func() time.Time) *chat.Service {
	t.Helper()
	personas, err := chat.LoadPersonas()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	return &chat.Service{Provider: builtin.New(), Knowledge: db, Retriever: retrieval.NewIndex(db, retrieval.WithCheckInterval(0)), Checker: verify.New(),
		Diagnoser: chat.NewDiagnosisAdapter(d),
		Personas:  personas, Now: now, NewID: func() string { n++; return fmt.Sprintf("resp_%d", n) }}
}

// newKey creates an API key in workspace w and returns its plaintext.
func (f *fixture) newKey(t *testing.T, w string) string {
	t.Helper()
	ctx := context.Background()
	if err := f.db.EnsureWorkspace(ctx, w); err != nil {
		t.Fatal(err)
	}
	plain, id, hash := access.NewKey()
	if err := f.db.CreateKey(ctx, assistant.APIKey{ID: id, Workspace: w, Name: "test", Hash: hash, CreatedAt: f.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	return plain
}

func (f *fixture) chat(t *testing.T, key, body string, header ...string) response {
	return f.do(t, "POST", "/api/v1/chat", body, append([]string{"Authorization", "Bearer " + key}, header...)...)
}

func TestChatSpecFields(t *testing.T) {
	f := newFixture(t, 0, 0)
	key := f.newKey(t, "acme")
	for _, mode := range []string{"", "operator", "customer", "support", "success"} {
		body := `{"message":"We get plenty of demos but few deals close","source":"crm"`
		if mode != "" {
			body += `,"mode":"` + mode + `"`
		}
		r := f.chat(t, key, body+"}")
		if r.Code != 200 {
			t.Fatalf("mode %q: %d %s", mode, r.Code, r.Body)
		}
		var raw map[string]json.RawMessage
		r.json(t, &raw)
		for _, field := range []string{"response", "reasoning_trace", "rag_hits", "confidence"} {
			if _, ok := raw[field]; !ok {
				t.Errorf("mode %q: no %s", mode, field)
			}
		}
		var conf map[string]any
		json.Unmarshal(raw["confidence"], &conf)
		for _, field := range []string{"score", "level", "totalClaims", "verifiedClaims", "verdicts"} {
			if _, ok := conf[field]; !ok {
				t.Errorf("confidence lacks %s", field)
			}
		}
		if r.Header().Get("RateLimit") == "" || r.Header().Get("RateLimit-Policy") != `"chat";q=60;w=60` {
			t.Errorf("RateLimit headers: %q %q", r.Header().Get("RateLimit"), r.Header().Get("RateLimit-Policy"))
		}
		if r.Header().Get("Cache-Control") != "no-store" {
			t.Errorf("Cache-Control %q", r.Header().Get("Cache-Control"))
		}
	}
	// The chats cited entities: the leaderboard counts each once per
	// response, from the next minute on (its window ends at the current
	// minute, D12).
	f.clock.Add(time.Minute)
	lb := f.do(t, "GET", "/api/assistant/v1/leaderboard", "")
	var board leaderboardBody
	lb.json(t, &board)
	if len(board.Entries) == 0 || board.Entries[0].Citations > 5 || board.Entries[0].Citations < 1 {
		t.Errorf("leaderboard after 5 chats: %+v", board.Entries)
	}
}

func TestChatValidation(t *testing.T) {
	f := newFixture(t, 0, 0)
	key := f.newKey(t, "acme")
	history51 := make([]string, 51)
	for i := range history51 {
		history51[i] = `{"role":"user","content":"hi"}`
	}
	cases := []struct {
		name, body, field string
		status            int
	}{
		{"missing message", `{"mode":"operator"}`, "message", 400},
		{"empty message", `{"message":"   "}`, "message", 400},
		{"8001 characters", `{"message":"` + strings.Repeat("x", 8001) + `"}`, "message", 400},
		{"unknown mode", `{"message":"hi","mode":"pirate"}`, "mode", 400},
		{"unknown vertical", `{"message":"hi","vertical":"bakery"}`, "saas, ecommerce, agency", 400},
		{"system role in history", `{"message":"hi","history":[{"role":"system","content":"x"}]}`, "history", 400},
		{"51 history items", `{"message":"hi","history":[` + strings.Join(history51, ",") + `]}`, "history", 400},
		{"not json", `hello`, "body", 400},
		{"257 KiB", `{"message":"hi","source":"` + strings.Repeat("x", 257<<10) + `"}`, "", 413},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := assertProblem(t, f.chat(t, key, c.body), c.status)
			if c.field != "" && !strings.Contains(fmt.Sprint(p["detail"], p["errors"]), c.field) {
				t.Errorf("problem does not name %s: %v", c.field, p)
			}
		})
	}
	if r := f.chat(t, key, `{"message":"`+strings.Repeat("x", 8000)+`  "}`); r.Code != 200 {
		t.Errorf("8000 characters plus spaces: %d", r.Code)
	}
	if p := assertProblem(t, f.do(t, "POST", "/api/v1/chat", `{"message":"hi"}`), 401); p["type"] != "urn:assistant:problem:unauthorized" {
		t.Errorf("no key: %v", p)
	}
	// Checked before a stream starts: an ordinary problem, not an error event.
	if p := assertProblem(t, f.chat(t, key, `{"message":"hi","vertical":"Retail"}`, "Accept", "text/event-stream"), 400); !strings.Contains(fmt.Sprint(p["detail"]), "Allowed values") {
		t.Errorf("unknown vertical on a stream: %v", p)
	}
	if r := f.chat(t, key, `{"message":"Our margins shrink every quarter","vertical":"retail"}`); r.Code != 200 {
		t.Errorf("a known vertical: %d %s", r.Code, r.Body)
	}
	if r := f.chat(t, key, `{"message":"hello","unknown_field":1}`); r.Code != 200 {
		t.Errorf("unknown fields are not ignored: %d", r.Code)
	}
}

func TestChatRateLimit(t *testing.T) {
	f := newFixture(t, 0, 0)
	key, other := f.newKey(t, "acme"), f.newKey(t, "acme")
	for i := 1; i <= 60; i++ {
		// Invalid bodies are cheap and count: a request counts when admitted.
		if r := f.chat(t, key, `{}`); r.Code != 400 {
			t.Fatalf("request %d: %d", i, r.Code)
		}
		f.clock.Add(100 * time.Millisecond)
	}
	r := f.chat(t, key, `{"message":"hi"}`)
	p := assertProblem(t, r, 429)
	secs, _ := p["retry_after_seconds"].(float64)
	if secs < 1 || r.Header().Get("Retry-After") != fmt.Sprint(int(secs)) || !strings.Contains(r.Header().Get("RateLimit"), "r=0") {
		t.Fatalf("429: %v, Retry-After %q, RateLimit %q", p["retry_after_seconds"], r.Header().Get("Retry-After"), r.Header().Get("RateLimit"))
	}
	if r := f.chat(t, other, `{"message":"hello there"}`); r.Code != 200 {
		t.Errorf("another key: %d", r.Code)
	}
	f.clock.Add(time.Duration(secs) * time.Second)
	if r := f.chat(t, key, `{"message":"hello there"}`); r.Code != 200 {
		t.Errorf("after Retry-After: %d", r.Code)
	}
	// A bad key never counts against anyone.
	for range 100 {
		f.chat(t, "sk_service_garbage", `{"message":"hi"}`)
	}
	if r := f.chat(t, other, `{"message":"hello again"}`); r.Code != 200 {
		t.Errorf("after failed authentications: %d", r.Code)
	}
}

// TestChatRateWindow: an operator's shorter window (ASSISTANT_CHAT_RATE_WINDOW)
// is the one the limiter counts over and the one the headers and the 429
// report; waiting the Retry-After admits the next request.
func TestChatRateWindow(t *testing.T) {
	f := newFixture(t, 0, 0)
	f.srv.ChatLimiter = ratelimit.NewSlidingWindow(2, 3*time.Second, f.clock.Now)
	f.srv.ChatRateLimit, f.srv.ChatRateWindow = 2, 3*time.Second
	f.srv.Metrics = prometheus.NewRegistry()
	f.h, f.routes = f.srv.HandlerAndRoutes()
	key := f.newKey(t, "acme")
	for i := 1; i <= 2; i++ {
		r := f.chat(t, key, `{}`)
		if r.Code != 400 || r.Header().Get("RateLimit-Policy") != `"chat";q=2;w=3` {
			t.Fatalf("request %d: %d, RateLimit-Policy %q", i, r.Code, r.Header().Get("RateLimit-Policy"))
		}
		f.clock.Add(500 * time.Millisecond)
	}
	r := f.chat(t, key, `{"message":"hi"}`)
	p := assertProblem(t, r, 429)
	// The first admission was 1 s ago: 2 s are left of its window.
	if r.Header().Get("Retry-After") != "2" || p["retry_after_seconds"] != 2.0 ||
		!strings.Contains(fmt.Sprint(p["detail"]), "2 requests in the last 3 seconds") {
		t.Fatalf("429: Retry-After %q, %v", r.Header().Get("Retry-After"), p)
	}
	f.clock.Add(2 * time.Second)
	if r := f.chat(t, key, `{"message":"hello there"}`); r.Code != 200 {
		t.Errorf("after Retry-After: %d", r.Code)
	}
}

func TestChatStreamMatchesJSON(t *testing.T) {
	f := newFixture(t, 0, 0)
	key := f.newKey(t, "acme")
	body := `{"message":"Our support queue doubled since the last release","mode":"support"}`
	plain := f.chat(t, key, body)
	stream := f.chat(t, key, body, "Accept", "text/event-stream")
	if stream.Code != 200 || !strings.HasPrefix(stream.Header().Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: %d %s", stream.Code, stream.Header().Get("Content-Type"))
	}
	var events []string
	var final, text strings.Builder
	sc := bufio.NewScanner(strings.NewReader(stream.Body.String()))
	sc.Buffer(nil, 1<<20)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
			events = append(events, event)
		case strings.HasPrefix(line, "data: "):
			data := strings.TrimPrefix(line, "data: ")
			switch event {
			case "final":
				final.WriteString(data)
			case "delta":
				var d struct{ Text string }
				json.Unmarshal([]byte(data), &d)
				text.WriteString(d.Text)
			}
		}
	}
	if len(events) < 3 || events[0] != "hop" || events[len(events)-1] != "final" {
		t.Fatalf("events: %v", events)
	}
	var a, b chat.Response
	json.Unmarshal(plain.Body.Bytes(), &a)
	json.Unmarshal([]byte(final.String()), &b)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Errorf("final event differs from the JSON response")
	}
	if text.String() != b.Response {
		t.Errorf("deltas do not add up to the response")
	}
}
