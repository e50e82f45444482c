package admin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/constraintlab/assistant/internal/admin"
	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/chat"
	"github.com/constraintlab/assistant/internal/diagnose"
	"github.com/constraintlab/assistant/internal/knowledge"
	"github.com/constraintlab/assistant/internal/llm/builtin"
	"github.com/constraintlab/assistant/internal/retrieval"
	"github.com/constraintlab/assistant/internal/verify"
)

// newPlaygroundEnv is newEnv with the chat service of the API (builtin
// provider, embedded knowledge) behind the playground.
func newPlaygroundEnv(t *testing.T) *env {
	t.Helper()
	holder := &chatHolder{}
	e := newEnv(t, func(h *admin.Handler) { h.Chat = holder })
	holder.svc = e.chat(t) // the database exists only once newEnv has opened it
	return e
}

// chatHolder runs the service set after the admin routes are built.
type chatHolder struct{ svc *chat.Service }

func (c *chatHolder) Run(ctx context.Context, req chat.Request, ev chat.Events) (chat.Response, []assistant.CitationEvent, error) {
	return c.svc.Run(ctx, req, ev)
}

func (e *env) chat(t *testing.T) *chat.Service {
	ctx := context.Background()
	if _, err := knowledge.LoadEmbedded(ctx, e.db); err != nil {
		t.Fatal(err)
	}
	cat, err := diagnose.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	dg, err := diagnose.Load(ctx, cat, e.db)
	if err != nil {
		t.Fatal(err)
	}
	personas, err := chat.LoadPersonas()
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64 // turns run concurrently
	return &chat.Service{Provider: builtin.New(), Knowledge: e.db, Retriever: retrieval.NewIndex(e.db, retrieval.WithCheckInterval(0)), Checker: verify.New(),
		Diagnoser: chat.NewDiagnosisAdapter(dg), Personas: personas, Now: e.clock.Now,
		NewID: func() string { return fmt.Sprintf("resp_%d", n.Add(1)) }}
}

func (b *browser) playground(body string, header ...string) page {
	b.t.Helper()
	h := append([]string{"Content-Type", "application/json"}, header...)
	return b.doBody("POST", "/admin/playground/chat", body, h...)
}

// doBody sends a raw body with the given headers.
func (b *browser) doBody(method, path, body string, header ...string) page {
	b.t.Helper()
	req, _ := http.NewRequest(method, b.e.srv.URL+path, strings.NewReader(body))
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := b.client.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return page{resp.StatusCode, string(data), resp.Header.Get("Location"), resp.Header}
}

func TestPlaygroundNeedsLogin(t *testing.T) {
	e := newPlaygroundEnv(t)
	b := e.browser(t)
	if p := b.get("/admin/playground"); p.status != http.StatusSeeOther || p.location != "/admin/login" {
		t.Errorf("GET /admin/playground logged out: %d %q, want a redirect to the login", p.status, p.location)
	}
	p := b.playground(`{"message":"Our packing station cannot keep up"}`)
	if p.status != http.StatusUnauthorized || !strings.Contains(p.body, `"error"`) {
		t.Errorf("POST /admin/playground/chat logged out: %d %s", p.status, p.body)
	}
}

func TestPlaygroundChat(t *testing.T) {
	e := newPlaygroundEnv(t)
	e.createUser(t, "alpha", "a@alpha.test", "alpha password 1")
	b := e.browser(t)
	if p := b.login("a@alpha.test", "alpha password 1"); p.status != http.StatusSeeOther {
		t.Fatalf("login: %d", p.status)
	}
	page := b.get("/admin/playground")
	if page.status != 200 || !strings.Contains(page.body, `id="pg-form"`) || !strings.Contains(page.body, "/admin/static/playground.js") {
		t.Fatalf("playground page: %d", page.status)
	}
	if strings.Contains(page.body, "<script>") {
		t.Errorf("the playground page has an inline script")
	}

	p := b.playground(`{"message":"Our packing station cannot keep up and orders ship late","mode":"operator","vertical":"ecommerce",
		"history":[{"role":"user","content":"Hello"},{"role":"assistant","content":"Hi. What is slowing you down?"}]}`)
	if p.status != 200 || p.header.Get("Content-Type") != "application/json" {
		t.Fatalf("playground chat: %d %s", p.status, p.body)
	}
	var resp chat.Response
	if err := json.Unmarshal([]byte(p.body), &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Response == "" || resp.Confidence.Level == "" || resp.ReasoningTrace == nil {
		t.Errorf("playground answer incomplete: %s", p.body)
	}

	// Recorded like an API turn, with source playground and no key.
	var rows int
	var source, keyID, workspace string
	if err := e.db.SQL().QueryRow(`SELECT count(*), max(source), max(key_id), max(workspace) FROM usage`).Scan(&rows, &source, &keyID, &workspace); err != nil {
		t.Fatal(err)
	}
	if rows != 1 || source != "playground" || keyID != "" || workspace != "alpha" {
		t.Errorf("usage: %d rows, source %q, key %q, workspace %q", rows, source, keyID, workspace)
	}

	// Cross-site requests are refused, even with the session cookie.
	if p := b.playground(`{"message":"hello"}`, "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"); p.status != http.StatusForbidden {
		t.Errorf("cross-site playground chat: %d, want 403", p.status)
	}
}

func TestPlaygroundBadInput(t *testing.T) {
	e := newPlaygroundEnv(t)
	e.createUser(t, "alpha", "a@alpha.test", "alpha password 1")
	b := e.browser(t)
	b.login("a@alpha.test", "alpha password 1")
	long := strings.Repeat("x", 8001)
	history := strings.Repeat(`{"role":"user","content":"x"},`, 51)
	for _, c := range []struct {
		name, body, want string
		status           int
	}{
		{"empty message", `{"message":"   "}`, "Type a message", 400},
		{"long message", `{"message":"` + long + `"}`, "at most 8000", 400},
		{"long history", `{"message":"hi","history":[` + strings.TrimSuffix(history, ",") + `]}`, "at most 50", 400},
		{"unknown mode", `{"message":"hi","mode":"pirate"}`, "Unknown mode", 400},
		{"unknown vertical", `{"message":"hi","vertical":"space-mining"}`, "Unknown vertical", 400},
		{"bad role", `{"message":"hi","history":[{"role":"system","content":"x"}]}`, "role", 400},
		{"not JSON", `message=hi`, "not valid JSON", 400},
	} {
		p := b.playground(c.body)
		var out struct{ Error string }
		json.Unmarshal([]byte(p.body), &out)
		if p.status != c.status || !strings.Contains(out.Error, c.want) {
			t.Errorf("%s: %d %s, want %d with %q", c.name, p.status, p.body, c.status, c.want)
		}
	}
	if p := b.doBody("POST", "/admin/playground/chat", `{"message":"hi"}`, "Content-Type", "text/plain"); p.status != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain: %d, want 415", p.status)
	}
	// Other admin forms still accept only url-encoded bodies.
	if p := b.doBody("POST", "/admin/integrations/keys", `{"name":"x"}`, "Content-Type", "application/json"); p.status != http.StatusUnsupportedMediaType {
		t.Errorf("JSON to a form: %d, want 415", p.status)
	}
}

func TestPlaygroundWithoutChat(t *testing.T) {
	e := newEnv(t)
	e.createUser(t, "alpha", "a@alpha.test", "alpha password 1")
	b := e.browser(t)
	b.login("a@alpha.test", "alpha password 1")
	if p := b.get("/admin/playground"); p.status != 200 || !strings.Contains(p.body, "pg-unavailable") {
		t.Errorf("playground without chat: %d", p.status)
	}
	if p := b.playground(`{"message":"hi"}`); p.status != http.StatusServiceUnavailable {
		t.Errorf("chat without a service: %d, want 503", p.status)
	}
}

// 150 playground turns at once from one admin: the window's worth (the
// chat limit, 60 a minute by default) are answered, the rest get 429 with
// Retry-After; no turn enters the public leaderboard, while each answered
// one keeps its usage row (source playground). Another admin of the same
// workspace has a window of their own.
func TestPlaygroundHasItsOwnWindowAndStaysOffTheLeaderboard(t *testing.T) {
	e := newPlaygroundEnv(t)
	e.createUser(t, "alpha", "a@alpha.test", "alpha password 1")
	e.createUser(t, "alpha", "b@alpha.test", "beta password 1")
	b := e.browser(t)
	b.login("a@alpha.test", "alpha password 1")
	var mu sync.Mutex
	codes := map[int]int{}
	retryAfter := ""
	work := make(chan int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range work {
				p := b.playground(`{"message":"Our packing station cannot keep up and orders ship late","mode":"operator"}`)
				mu.Lock()
				codes[p.status]++
				if p.status == http.StatusTooManyRequests && retryAfter == "" {
					retryAfter = p.header.Get("Retry-After")
				}
				mu.Unlock()
			}
		})
	}
	for i := range 150 {
		work <- i
	}
	close(work)
	wg.Wait()
	if codes[200] != admin.PlaygroundDefaultLimit || codes[429] != 150-admin.PlaygroundDefaultLimit {
		t.Errorf("150 turns: %v, want %d answered and the rest 429", codes, admin.PlaygroundDefaultLimit)
	}
	if retryAfter == "" || retryAfter == "0" {
		t.Errorf("429 without Retry-After (%q)", retryAfter)
	}
	var events, rows int
	if err := e.db.SQL().QueryRow(`SELECT count(*) FROM citation_events`).Scan(&events); err != nil {
		t.Fatal(err)
	}
	if err := e.db.SQL().QueryRow(`SELECT count(*) FROM usage WHERE source = 'playground'`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if events != 0 || rows != admin.PlaygroundDefaultLimit {
		t.Errorf("%d citation events (want 0: the leaderboard does not move), %d usage rows (want %d)", events, rows, admin.PlaygroundDefaultLimit)
	}
	other := e.browser(t)
	other.login("b@alpha.test", "beta password 1")
	if p := other.playground(`{"message":"Our packing station cannot keep up"}`); p.status != 200 {
		t.Errorf("another admin of the workspace: %d %s", p.status, p.body)
	}
}

// The playground takes the API's body limit: exactly 256 KiB is read, one
// byte more is 413.
func TestPlaygroundBodyLimit(t *testing.T) {
	e := newPlaygroundEnv(t)
	e.createUser(t, "alpha", "a@alpha.test", "alpha password 1")
	b := e.browser(t)
	b.login("a@alpha.test", "alpha password 1")
	body := func(n int) string {
		head := `{"message":"Our packing station cannot keep up","pad":"`
		return head + strings.Repeat("x", n-len(head)-2) + `"}`
	}
	if p := b.playground(body(admin.PlaygroundMaxBytes)); p.status != 200 {
		t.Errorf("a body of exactly 256 KiB: %d %.200s", p.status, p.body)
	}
	if p := b.playground(body(admin.PlaygroundMaxBytes + 1)); p.status != http.StatusRequestEntityTooLarge {
		t.Errorf("a body of 256 KiB + 1: %d", p.status)
	}
	if admin.PlaygroundMaxBytes != 256<<10 {
		t.Errorf("PlaygroundMaxBytes = %d", admin.PlaygroundMaxBytes)
	}
}
