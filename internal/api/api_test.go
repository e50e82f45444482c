package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/constraintlab/assistant/internal/access"
	"github.com/constraintlab/assistant/internal/api"
	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/diagnose"
	"github.com/constraintlab/assistant/internal/knowledge"
	"github.com/constraintlab/assistant/internal/ratelimit"
	"github.com/constraintlab/assistant/internal/retrieval"
	"github.com/constraintlab/assistant/internal/sqlite"
	"github.com/constraintlab/assistant/internal/verify"
)

// clock is a settable fake clock.
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

type fixture struct {
	srv     *api.Server
	h       http.Handler
	routes  []string
	db      *sqlite.DB
	clock   *clock
	limiter *ratelimit.Tiered
}

func newFixture(t *testing.T, soft, hard int) *fixture {
	t.Helper()
	clk := &clock{t: fixtureStart}
	db, shared := loadedDB(t, clk.Now)
	cat, dg := shared.catalog, shared.diagnoser
	lim := ratelimit.NewTiered(soft, hard, time.Minute, clk.Now)
	srv := &api.Server{
		Knowledge: db, Retriever: retrieval.NewIndex(db, retrieval.WithCheckInterval(0)), Citations: db, Ready: db, Catalog: cat, Diagnosis: dg,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: clk.Now, Version: "test",
		PublicLimiter: lim, Metrics: prometheus.NewRegistry(),
		Access: db, Keys: access.NewVerifier(db, clk.Now, slog.New(slog.NewTextHandler(io.Discard, nil))),
		Chat: newChatService(t, db, dg, clk.Now), Verifier: verify.New(), ChatLimiter: ratelimit.NewSlidingWindow(60, time.Minute, clk.Now), ChatRateLimit: 60,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
		Async:          db,
	}
	h, routes := srv.HandlerAndRoutes()
	return &fixture{srv: srv, h: h, routes: routes, db: db, clock: clk, limiter: lim}
}

// fixtureStart is the fake clock's start in every fixture; the template
// database is loaded at the same instant, so its rows carry the times a
// fixture loading the corpus itself would give them.
var fixtureStart = time.Date(2026, 11, 20, 12, 0, 30, 0, time.UTC)

// embeddedKnowledge is what every fixture shares, built once per test
// binary because under the race detector it takes seconds and ninety
// fixtures would pay it each: a database holding the embedded corpus (as
// the bytes of its file: each fixture opens a copy), and the catalog and
// diagnoser built from that corpus, which nothing changes after they are
// built.
type embeddedKnowledge struct {
	database  []byte
	catalog   *diagnose.Catalog
	diagnoser *diagnose.Diagnoser
}

var embedded = sync.OnceValues(func() (embeddedKnowledge, error) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "api-test-template-")
	if err != nil {
		return embeddedKnowledge{}, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "template.db")
	db, err := sqlite.Open(ctx, path, func() time.Time { return fixtureStart })
	if err != nil {
		return embeddedKnowledge{}, err
	}
	defer db.Close()
	if _, err := knowledge.LoadEmbedded(ctx, db); err != nil {
		return embeddedKnowledge{}, err
	}
	cat, err := diagnose.LoadCatalog()
	if err != nil {
		return embeddedKnowledge{}, err
	}
	dg, err := diagnose.Load(ctx, cat, db)
	if err != nil {
		return embeddedKnowledge{}, err
	}
	if err := db.Close(); err != nil { // checkpoints the write-ahead log into the file
		return embeddedKnowledge{}, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return embeddedKnowledge{}, err
	}
	return embeddedKnowledge{database: data, catalog: cat, diagnoser: dg}, nil
})

// loadedDB opens a test's own copy of the template database (the
// embedded corpus loaded, as knowledge.LoadEmbedded would leave it) and
// returns it with what the fixtures share.
func loadedDB(tb testing.TB, now func() time.Time) (*sqlite.DB, embeddedKnowledge) {
	tb.Helper()
	shared, err := embedded()
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), "test.db")
	if err := os.WriteFile(path, shared.database, 0o600); err != nil {
		tb.Fatal(err)
	}
	db, err := sqlite.Open(context.Background(), path, now)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db, shared
}

type response struct {
	*httptest.ResponseRecorder
}

func (r response) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body.Bytes(), v); err != nil {
		t.Fatalf("decoding %s: %v", r.Body.String(), err)
	}
}

func (f *fixture) do(t *testing.T, method, target, body string, header ...string) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	return response{rec}
}

// assertProblem checks the D1 shape of an error response.
func assertProblem(t *testing.T, r response, status int) map[string]any {
	t.Helper()
	if r.Code != status {
		t.Fatalf("status = %d, want %d; body %s", r.Code, status, r.Body)
	}
	if ct := r.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type = %q, want application/problem+json", ct)
	}
	if cc := r.Header().Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control = %q, want no-store", cc)
	}
	var p map[string]any
	r.json(t, &p)
	for _, k := range []string{"type", "title", "status", "detail", "request_id"} {
		if _, ok := p[k]; !ok {
			t.Errorf("problem lacks %q: %v", k, p)
		}
	}
	if p["status"] != float64(status) {
		t.Errorf("problem status = %v, want %d", p["status"], status)
	}
	return p
}

func TestKnowledgeStats(t *testing.T) {
	f := newFixture(t, 0, 0)
	r := f.do(t, "GET", "/api/assistant/v1/knowledge-stats", "")
	if r.Code != 200 {
		t.Fatalf("status %d: %s", r.Code, r.Body)
	}
	var st struct{ Total, Frameworks, Papers, Blogs int }
	r.json(t, &st)
	if st.Total != st.Frameworks+st.Papers+st.Blogs {
		t.Errorf("total %d != %d + %d + %d", st.Total, st.Frameworks, st.Papers, st.Blogs)
	}
	if st.Frameworks < 86 || st.Papers < 48 || st.Blogs < 48 { // two essays were merged into their frameworks
		t.Errorf("stats = %+v, want at least 86/48/48", st)
	}
}

type card struct {
	Type, Slug, Token, Title, Summary string
	URL                               *string
	Year                              *int
	Authors, Tags                     []string
}

type resolveBody struct {
	Resolved   []card
	Unresolved []struct{ Type, Slug, Reason string }
}

func tokensBody(tokens ...string) string {
	var parts []string
	for _, tok := range tokens {
		typ, slug, _ := strings.Cut(tok, ":")
		parts = append(parts, fmt.Sprintf(`{"type":%q,"slug":%q}`, typ, slug))
	}
	return `{"tokens":[` + strings.Join(parts, ",") + `]}`
}

func TestResolve(t *testing.T) {
	f := newFixture(t, 0, 0)

	t.Run("order, duplicates and unresolved reasons", func(t *testing.T) {
		r := f.do(t, "POST", "/api/assistant/v1/resolve", tokensBody(
			"paper:kingman-1961-heavy-traffic", "framework:theory-of-constraints", "framework:does-not-exist",
			"framework:theory-of-constraints", "essay:theory-of-constraints", "framework:Bad Slug", "paper:kingman-1961-heavy-traffic"))
		if r.Code != 200 {
			t.Fatalf("status %d: %s", r.Code, r.Body)
		}
		if cc := r.Header().Get("Cache-Control"); cc != "no-store" {
			t.Errorf("POST Cache-Control = %q, want no-store", cc)
		}
		var b resolveBody
		r.json(t, &b)
		var got []string
		for _, c := range b.Resolved {
			got = append(got, c.Token)
			if c.Token != c.Type+":"+c.Slug || c.Title == "" || c.Summary == "" || c.Authors == nil || c.Tags == nil {
				t.Errorf("incomplete card %+v", c)
			}
		}
		if want := "paper:kingman-1961-heavy-traffic,framework:theory-of-constraints"; strings.Join(got, ",") != want {
			t.Errorf("resolved = %v, want %s", got, want)
		}
		var reasons []string
		for _, u := range b.Unresolved {
			reasons = append(reasons, u.Type+":"+u.Slug+"="+u.Reason)
		}
		if want := "framework:does-not-exist=not_found,essay:theory-of-constraints=invalid,framework:Bad Slug=invalid"; strings.Join(reasons, ",") != want {
			t.Errorf("unresolved = %v, want %s", reasons, want)
		}
	})

	t.Run("D10 field types", func(t *testing.T) {
		r := f.do(t, "POST", "/api/assistant/v1/resolve", tokensBody("framework:swot-analysis", "paper:kingman-1961-heavy-traffic"))
		var raw struct{ Resolved []map[string]any }
		r.json(t, &raw)
		for _, c := range raw.Resolved {
			for _, k := range []string{"type", "slug", "token", "title", "summary", "url", "year", "authors", "tags"} {
				if _, ok := c[k]; !ok {
					t.Errorf("%v lacks %q", c["token"], k)
				}
			}
			if y := c["year"]; y != nil {
				if _, ok := y.(float64); !ok {
					t.Errorf("%v year = %#v, want integer or null", c["token"], y)
				}
			}
			if _, ok := c["authors"].([]any); !ok {
				t.Errorf("%v authors = %#v, want an array", c["token"], c["authors"])
			}
		}
	})

	t.Run("1 to 100 tokens", func(t *testing.T) {
		var hundred []string
		for i := range 100 {
			hundred = append(hundred, fmt.Sprintf("framework:missing-%d", i))
		}
		if r := f.do(t, "POST", "/api/assistant/v1/resolve", tokensBody(hundred...)); r.Code != 200 {
			t.Errorf("100 tokens: status %d", r.Code)
		}
		p := assertProblem(t, f.do(t, "POST", "/api/assistant/v1/resolve", tokensBody(append(hundred, "framework:one-more")...)), 400)
		if !strings.Contains(fmt.Sprint(p["detail"]), "tokens") {
			t.Errorf("detail should name the field: %v", p["detail"])
		}
		assertProblem(t, f.do(t, "POST", "/api/assistant/v1/resolve", `{"tokens":[]}`), 400)
	})

	t.Run("bodies that are not {tokens:[...]}", func(t *testing.T) {
		for _, body := range []string{`{}`, `{"tokens":"framework:x"}`, `[1,2]`, `not json`, `{"tokens":[{"type":1,"slug":"x"}]}`} {
			assertProblem(t, f.do(t, "POST", "/api/assistant/v1/resolve", body), 400)
		}
	})

	t.Run("unknown fields are ignored", func(t *testing.T) {
		r := f.do(t, "POST", "/api/assistant/v1/resolve", `{"tokens":[{"type":"framework","slug":"okrs","x":1}],"extra":true}`)
		if r.Code != 200 {
			t.Fatalf("status %d: %s", r.Code, r.Body)
		}
	})
}

type leaderboardBody struct {
	Days, Limit  int
	Since, Until string
	Entries      []struct {
		Rank      int
		Token     string
		Citations int
	}
}

func TestLeaderboard(t *testing.T) {
	f := newFixture(t, 0, 0)
	now := f.clock.Now()
	tok := func(s string) assistant.Token { t, _ := assistant.ParseToken(s); return t }
	var events []assistant.CitationEvent
	cite := func(resp string, at time.Time, tokens ...string) {
		for _, s := range tokens {
			events = append(events, assistant.CitationEvent{ResponseID: resp, Token: tok(s), At: at})
		}
	}
	// Inside the 30-day window: okrs 3, kaizen 2, pdca 2 (tie: kaizen < pdca), smed 1.
	cite("r1", now.Add(-time.Hour), "framework:okrs", "framework:kaizen", "framework:okrs") // okrs twice in one response counts once
	cite("r2", now.Add(-48*time.Hour), "framework:okrs", "framework:pdca")
	cite("r3", now.AddDate(0, 0, -29), "framework:okrs", "framework:kaizen", "framework:pdca")
	cite("r4", now.AddDate(0, 0, -10), "framework:smed")
	// Outside the window: would make smed the leader if counted.
	cite("r5", now.AddDate(0, 0, -31), "framework:smed")
	cite("r6", now.AddDate(0, 0, -40), "framework:smed")
	cite("r7", now.AddDate(0, 0, -60), "framework:smed")
	if err := f.db.RecordCitations(context.Background(), events); err != nil {
		t.Fatal(err)
	}

	r := f.do(t, "GET", "/api/assistant/v1/leaderboard", "")
	if r.Code != 200 {
		t.Fatalf("status %d: %s", r.Code, r.Body)
	}
	var b leaderboardBody
	r.json(t, &b)
	if b.Days != 30 || b.Limit != 10 {
		t.Errorf("defaults = %d/%d, want 30/10", b.Days, b.Limit)
	}
	if b.Until != "2026-11-20T12:00:00Z" || b.Since != "2026-10-21T12:00:00Z" {
		t.Errorf("window = %s..%s", b.Since, b.Until)
	}
	var got []string
	for _, e := range b.Entries {
		got = append(got, fmt.Sprintf("%d %s %d", e.Rank, e.Token, e.Citations))
	}
	want := []string{"1 framework:okrs 3", "2 framework:kaizen 2", "3 framework:pdca 2", "4 framework:smed 1"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("entries = %q, want %q", got, want)
	}

	r = f.do(t, "GET", "/api/assistant/v1/leaderboard?days=365&limit=2", "")
	r.json(t, &b)
	if len(b.Entries) != 2 || b.Entries[0].Token != "framework:smed" || b.Entries[0].Citations != 4 {
		t.Errorf("days=365 limit=2 entries = %+v", b.Entries)
	}

	for _, q := range []string{"days=0", "days=366", "limit=0", "limit=101", "days=abc", "limit=1.5", "days=-1", "limit=1e2"} {
		t.Run(q, func(t *testing.T) {
			assertProblem(t, f.do(t, "GET", "/api/assistant/v1/leaderboard?"+q, ""), 400)
		})
	}
}

// TestLeaderboardIsReadOncePerMinute: within a minute the ranking cannot
// change (the window ends at the minute), so it is computed once; a new
// minute takes in the citations of the last one.
func TestLeaderboardIsReadOncePerMinute(t *testing.T) {
	f := newFixture(t, 0, 0)
	tok, _ := assistant.ParseToken("framework:okrs")
	record := func(resp string, at time.Time) {
		t.Helper()
		if err := f.db.RecordCitations(context.Background(), []assistant.CitationEvent{{ResponseID: resp, Token: tok, At: at}}); err != nil {
			t.Fatal(err)
		}
	}
	count := func() int {
		t.Helper()
		var b leaderboardBody
		f.do(t, "GET", "/api/assistant/v1/leaderboard", "").json(t, &b)
		if len(b.Entries) == 0 {
			return 0
		}
		return b.Entries[0].Citations
	}
	record("r1", f.clock.Now().Add(-time.Hour))
	if n := count(); n != 1 {
		t.Fatalf("%d citations, want 1", n)
	}
	// A citation inside the window recorded behind the cache's back (as a
	// turn that began before the minute and ended after it) waits for the
	// next minute.
	record("r2", f.clock.Now().Add(-2*time.Hour))
	if n := count(); n != 1 {
		t.Errorf("within the minute: %d citations, want the cached 1", n)
	}
	f.clock.Add(time.Minute)
	if n := count(); n != 2 {
		t.Errorf("next minute: %d citations, want 2", n)
	}
}

func TestSearch(t *testing.T) {
	f := newFixture(t, 0, 0)
	t.Run("plain-language query", func(t *testing.T) {
		r := f.do(t, "GET", "/api/assistant/v1/search?q="+urlEncode("customers cancel their subscription and leave"), "")
		var b struct {
			Query   string
			Results []struct {
				Token string
				Score float64
			}
		}
		r.json(t, &b)
		if r.Code != 200 || len(b.Results) == 0 {
			t.Fatalf("status %d, %d results", r.Code, len(b.Results))
		}
		for i := 1; i < len(b.Results); i++ {
			if b.Results[i].Score > b.Results[i-1].Score {
				t.Errorf("results not ranked: %v", b.Results)
			}
		}
	})
	t.Run("type filter and limit", func(t *testing.T) {
		r := f.do(t, "GET", "/api/assistant/v1/search?q=pricing&type=paper&limit=3", "")
		var b struct{ Results []struct{ Type string } }
		r.json(t, &b)
		if len(b.Results) == 0 || len(b.Results) > 3 {
			t.Fatalf("got %d results", len(b.Results))
		}
		for _, res := range b.Results {
			if res.Type != "paper" {
				t.Errorf("type %q in a paper-only search", res.Type)
			}
		}
	})
	t.Run("hostile FTS syntax never fails", func(t *testing.T) {
		for _, q := range []string{`"`, `"unbalanced`, `*`, `a*`, `NEAR(a b)`, `NEAR`, `((`, `)`, `churn) OR (`, `-`, `^title:x`,
			`title:churn`, `AND OR NOT`, `'; DROP TABLE entities; --`, `{}[]`, "\x00", `™ ☃ 𝄞`, strings.Repeat("x", 500)} {
			r := f.do(t, "GET", "/api/assistant/v1/search?q="+urlEncode(q), "")
			if r.Code != 200 {
				t.Errorf("q=%q: status %d: %s", q, r.Code, r.Body)
			}
		}
	})
	t.Run("bad parameters are 400", func(t *testing.T) {
		for _, q := range []string{"", "q=", "q=" + strings.Repeat("x", 501), "q=a&type=essay", "q=a&limit=0", "q=a&limit=51", "q=a&limit=x"} {
			assertProblem(t, f.do(t, "GET", "/api/assistant/v1/search?"+q, ""), 400)
		}
	})
}

func urlEncode(s string) string {
	return strings.NewReplacer("%", "%25", " ", "%20", "&", "%26", "#", "%23", "+", "%2B", "\x00", "%00", "\"", "%22").Replace(s)
}

func TestCatalog(t *testing.T) {
	f := newFixture(t, 0, 0)
	r := f.do(t, "GET", "/api/assistant/v1/catalog", "")
	var b struct {
		Verticals, Archetypes []struct{ ID, Name, Description string }
	}
	r.json(t, &b)
	if len(b.Verticals) != len(assistant.VerticalIDs) || len(b.Archetypes) != len(assistant.ArchetypeIDs) {
		t.Fatalf("catalog has %d verticals, %d archetypes", len(b.Verticals), len(b.Archetypes))
	}
	for i, a := range b.Archetypes {
		if a.ID != assistant.ArchetypeIDs[i] || a.Name == "" || a.Description == "" {
			t.Errorf("archetype %d = %+v", i, a)
		}
	}
}

func TestErrorsAreProblems(t *testing.T) {
	f := newFixture(t, 0, 0)
	cases := []struct {
		method, path string
		status       int
	}{
		{"GET", "/api/nothing-here", 404},
		{"GET", "/api/assistant/v2/knowledge-stats", 404},
		{"POST", "/api/assistant/v1/knowledge-stats", 405},
		{"DELETE", "/api/assistant/v1/resolve", 405},
		{"GET", "/api/assistant/v1/resolve", 405},
		{"PUT", "/api/assistant/openapi.json", 405},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			assertProblem(t, f.do(t, c.method, c.path, ""), c.status)
		})
	}
	t.Run("body too large", func(t *testing.T) {
		big := `{"tokens":[{"type":"framework","slug":"` + strings.Repeat("a", 300<<10) + `"}]}`
		assertProblem(t, f.do(t, "POST", "/api/assistant/v1/resolve", big), 413)
	})
	t.Run("request id is echoed", func(t *testing.T) {
		r := f.do(t, "GET", "/api/nothing", "", "X-Request-Id", "abc-123")
		p := assertProblem(t, r, 404)
		if p["request_id"] != "abc-123" || r.Header().Get("X-Request-Id") != "abc-123" {
			t.Errorf("request id not echoed: %v / %q", p["request_id"], r.Header().Get("X-Request-Id"))
		}
	})
}

func TestCaching(t *testing.T) {
	f := newFixture(t, 0, 0)
	for _, path := range []string{"/api/assistant/v1/knowledge-stats", "/api/assistant/v1/leaderboard", "/api/assistant/v1/catalog",
		"/api/assistant/v1/search?q=bottleneck", "/api/assistant/openapi.json"} {
		t.Run(path, func(t *testing.T) {
			r := f.do(t, "GET", path, "")
			if r.Code != 200 {
				t.Fatalf("status %d", r.Code)
			}
			if cc := r.Header().Get("Cache-Control"); cc != "public, max-age=60, stale-while-revalidate=60" {
				t.Errorf("Cache-Control = %q", cc)
			}
			etag := r.Header().Get("ETag")
			if !strings.HasPrefix(etag, `"`) || len(etag) < 8 {
				t.Fatalf("ETag = %q, want a strong tag", etag)
			}
			again := f.do(t, "GET", path, "", "If-None-Match", etag)
			if again.Code != 304 || again.Body.Len() != 0 || again.Header().Get("ETag") != etag {
				t.Errorf("If-None-Match: status %d, %d bytes, ETag %q", again.Code, again.Body.Len(), again.Header().Get("ETag"))
			}
			if other := f.do(t, "GET", path, "", "If-None-Match", `"other"`); other.Code != 200 {
				t.Errorf("non-matching If-None-Match: status %d", other.Code)
			}
			if try := f.do(t, "GET", path, "", "X-Try-It-Now", "1"); try.Header().Get("Cache-Control") != "no-store" {
				t.Errorf("try-it-now Cache-Control = %q", try.Header().Get("Cache-Control"))
			}
		})
	}
	t.Run("POST with try-it-now", func(t *testing.T) {
		r := f.do(t, "POST", "/api/assistant/v1/resolve", tokensBody("framework:okrs"), "X-Try-It-Now", "1")
		if r.Header().Get("Cache-Control") != "no-store" {
			t.Errorf("Cache-Control = %q", r.Header().Get("Cache-Control"))
		}
	})
}

func TestCORS(t *testing.T) {
	f := newFixture(t, 0, 0)
	r := f.do(t, "OPTIONS", "/api/assistant/v1/resolve", "", "Origin", "https://example.org",
		"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "content-type")
	if r.Code != 204 || r.Header().Get("Access-Control-Allow-Origin") != "*" ||
		!strings.Contains(r.Header().Get("Access-Control-Allow-Methods"), "POST") {
		t.Errorf("preflight: %d %v", r.Code, r.Header())
	}
	r = f.do(t, "GET", "/api/assistant/v1/knowledge-stats", "", "Origin", "https://example.org")
	if r.Header().Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("GET lacks Access-Control-Allow-Origin: %v", r.Header())
	}
	r = f.do(t, "GET", "/api/v1/chat", "", "Origin", "https://example.org")
	if r.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("/api/v1/ answers CORS without configured origins")
	}
}

func TestPublicRateLimit(t *testing.T) {
	f := newFixture(t, 60, 600)
	get := func(ip string) response {
		req := httptest.NewRequest("GET", "/api/assistant/v1/knowledge-stats", nil)
		req.RemoteAddr = ip + ":5555"
		rec := httptest.NewRecorder()
		f.h.ServeHTTP(rec, req)
		return response{rec}
	}
	for i := 1; i <= 600; i++ {
		r := get("192.0.2.1")
		if r.Code != 200 {
			t.Fatalf("request %d: status %d", i, r.Code)
		}
		hasHeaders := r.Header().Get("RateLimit") != ""
		if i <= 60 && hasHeaders {
			t.Fatalf("request %d under the soft limit carries RateLimit headers", i)
		}
		if i > 60 {
			if !hasHeaders || !strings.Contains(r.Header().Get("RateLimit"), "r=0") || r.Header().Get("RateLimit-Policy") == "" {
				t.Fatalf("request %d past the soft limit: RateLimit %q, policy %q", i, r.Header().Get("RateLimit"), r.Header().Get("RateLimit-Policy"))
			}
			if r.Header().Get("Cache-Control") != "public, max-age=60, stale-while-revalidate=60" {
				t.Fatalf("request %d: Cache-Control %q", i, r.Header().Get("Cache-Control"))
			}
		}
	}
	r := get("192.0.2.1")
	p := assertProblem(t, r, 429)
	secs, ok := p["retry_after_seconds"].(float64)
	if !ok || secs < 1 || r.Header().Get("Retry-After") != fmt.Sprint(int(secs)) {
		t.Fatalf("429: retry_after_seconds %v, Retry-After %q", p["retry_after_seconds"], r.Header().Get("Retry-After"))
	}
	if other := get("192.0.2.2"); other.Code != 200 || other.Header().Get("RateLimit") != "" {
		t.Errorf("another client is affected: %d", other.Code)
	}
	f.clock.Add(time.Duration(secs) * time.Second)
	if again := get("192.0.2.1"); again.Code != 200 {
		t.Errorf("after waiting Retry-After: status %d", again.Code)
	}
}

func TestClientIP(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	cases := []struct{ peer, xff, want string }{
		{"192.0.2.1:1", "", "192.0.2.1"},
		{"192.0.2.1:1", "203.0.113.9", "192.0.2.1"},                // untrusted peer: header ignored
		{"10.1.1.1:1", "203.0.113.9", "203.0.113.9"},               // trusted proxy
		{"10.1.1.1:1", "198.51.100.1, 203.0.113.9", "203.0.113.9"}, // right-most untrusted wins
		{"10.1.1.1:1", "203.0.113.9, 10.2.2.2", "203.0.113.9"},     // skip trusted hops
		{"10.1.1.1:1", "garbage", "10.1.1.1"},                      // malformed: stop at the peer
		{"[2001:db8::1]:1", "", "2001:db8::1"},
	}
	for _, c := range cases {
		req := httptest.NewRequest("GET", "/", nil)
		req.RemoteAddr = c.peer
		if c.xff != "" {
			req.Header.Set("X-Forwarded-For", c.xff)
		}
		if got := api.ClientIP(req, trusted).String(); got != c.want {
			t.Errorf("peer %s xff %q: got %s, want %s", c.peer, c.xff, got, c.want)
		}
	}
}

func TestOpenAPIListsEveryRoute(t *testing.T) {
	f := newFixture(t, 0, 0)
	r := f.do(t, "GET", "/api/assistant/openapi.json", "")
	var doc struct {
		OpenAPI string `json:"openapi"`
		Paths   map[string]map[string]any
	}
	r.json(t, &doc)
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Errorf("openapi = %q, want 3.1.x", doc.OpenAPI)
	}
	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			documented[strings.ToUpper(method)+" "+path] = true
		}
	}
	served := map[string]bool{}
	for _, p := range f.routes {
		method, path, _ := strings.Cut(p, " ")
		if !strings.HasPrefix(path, "/api/") || strings.HasPrefix(path, "/api/assistant/docs") {
			continue // the docs page is a page for people, not an endpoint
		}
		served[method+" "+path] = true
	}
	for op := range served {
		if !documented[op] {
			t.Errorf("served but not documented: %s", op)
		}
	}
	for op := range documented {
		if !served[op] {
			t.Errorf("documented but not served: %s", op)
		}
	}
	if len(served) < 6 {
		t.Errorf("only %d routes served: %v", len(served), f.routes)
	}
}

func TestOperationalEndpoints(t *testing.T) {
	f := newFixture(t, 0, 0)
	if r := f.do(t, "GET", "/healthz", ""); r.Code != 200 {
		t.Errorf("healthz %d", r.Code)
	}
	if r := f.do(t, "GET", "/readyz", ""); r.Code != 200 {
		t.Errorf("readyz %d", r.Code)
	}
	f.do(t, "GET", "/api/assistant/v1/knowledge-stats", "")
	r := f.do(t, "GET", "/metrics", "")
	if !strings.Contains(r.Body.String(), `assistant_http_requests_total{method="GET",route="GET /api/assistant/v1/knowledge-stats",status="200"} 1`) {
		t.Errorf("metrics lack the request counter:\n%s", r.Body)
	}
	if !strings.Contains(r.Body.String(), "assistant_http_request_duration_seconds_bucket") {
		t.Errorf("metrics lack the latency histogram")
	}
	// A degradable dependency that fails is reported, and the instance
	// stays ready.
	f.srv.Degradable = map[string]assistant.Pinger{"redis": pingFunc(func() error { return errors.New("down") })}
	f.srv.Metrics = prometheus.NewRegistry()
	h, _ := f.srv.HandlerAndRoutes()
	f.h = h
	if r := f.do(t, "GET", "/readyz", ""); r.Code != 200 || r.Body.String() != `{"checks":{"database":"ok","redis":"degraded"},"status":"degraded"}`+"\n" {
		t.Errorf("readyz with Redis down: %d %s", r.Code, r.Body)
	}
	f.db.Close()
	if r := f.do(t, "GET", "/readyz", ""); r.Code != 503 || !strings.Contains(r.Body.String(), `"database":"failing"`) {
		t.Errorf("readyz with a closed database: %d %s", r.Code, r.Body)
	}
}

type pingFunc func() error

func (f pingFunc) Ping(context.Context) error { return f() }

func TestDocsPage(t *testing.T) {
	f := newFixture(t, 0, 0)
	if r := f.do(t, "GET", "/api/assistant/docs", ""); r.Code != 301 {
		t.Errorf("docs redirect: %d", r.Code)
	}
	r := f.do(t, "GET", "/api/assistant/docs/", "")
	if r.Code != 200 || !strings.Contains(r.Body.String(), "swagger-ui-bundle.js") {
		t.Fatalf("docs page: %d", r.Code)
	}
	if strings.Contains(r.Body.String(), "://") {
		t.Errorf("docs page loads something from another host")
	}
	if r.Header().Get("ETag") == "" || r.Header().Get("Cache-Control") != "public, max-age=60, stale-while-revalidate=60" {
		t.Errorf("docs page: ETag %q, Cache-Control %q", r.Header().Get("ETag"), r.Header().Get("Cache-Control"))
	}
	for _, asset := range []string{"init.js", "swagger-ui/swagger-ui-bundle.js", "swagger-ui/swagger-ui.css"} {
		r := f.do(t, "GET", "/api/assistant/docs/"+asset, "")
		if r.Code != 200 {
			t.Errorf("%s: %d", asset, r.Code)
		}
		// The ETag was computed at start and is the hash of what is served.
		if tag := r.Header().Get("ETag"); tag != api.StrongETag(r.Body.Bytes()) {
			t.Errorf("%s: ETag %q is not the body's", asset, tag)
		}
		again := f.do(t, "GET", "/api/assistant/docs/"+asset, "", "If-None-Match", r.Header().Get("ETag"))
		if again.Code != 304 || again.Body.Len() != 0 {
			t.Errorf("%s with If-None-Match: %d, %d bytes", asset, again.Code, again.Body.Len())
		}
	}
}
