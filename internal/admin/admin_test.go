package admin_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alexedwards/scs/sqlite3store"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/constraintlab/assistant/internal/access"
	"github.com/constraintlab/assistant/internal/admin"
	"github.com/constraintlab/assistant/internal/api"
	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/diagnose"
	"github.com/constraintlab/assistant/internal/ratelimit"
	"github.com/constraintlab/assistant/internal/retrieval"
	"github.com/constraintlab/assistant/internal/sqlite"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

type env struct {
	srv   *httptest.Server
	db    *sqlite.DB
	clock *clock
	// ip is the client address the admin area sees for the next request
	// (a request's X-Test-Client header, when set, wins).
	ip *string
	// dir holds the database and its WAL.
	dir string
	h   *admin.Handler
}

// newEnv starts the API with the admin area; tweak, if given, adjusts the
// admin handler before its routes are built.
func newEnv(t *testing.T, tweak ...func(*admin.Handler)) *env {
	t.Helper()
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 6, 15, 9, 30, 0, 0, time.UTC)}
	dir := t.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "admin.db"), clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	verifier := access.NewVerifier(db, clk.Now, logger)
	ip := "192.0.2.10"
	h := &admin.Handler{
		Store: db, Keys: verifier, Sessions: admin.NewSessions(sqlite3store.NewWithCleanupInterval(db.SQL(), 0)),
		Throttle: access.NewLoginThrottle(clk.Now), Logger: logger, Now: clk.Now,
		ClientIP: func(r *http.Request) string {
			if c := r.Header.Get("X-Test-Client"); c != "" {
				return c
			}
			return ip
		},
	}
	for _, f := range tweak {
		f(h)
	}
	adminHandler, err := h.Routes()
	if err != nil {
		t.Fatal(err)
	}
	cat, _ := diagnose.LoadCatalog()
	apiServer := &api.Server{Knowledge: db, Retriever: retrieval.NewIndex(db, retrieval.WithCheckInterval(0)), Citations: db, Ready: db, Catalog: cat, Logger: logger,
		Now: clk.Now, Version: "test", PublicLimiter: ratelimit.NewTiered(0, 0, time.Minute, clk.Now),
		Metrics: prometheus.NewRegistry(), Access: db, Keys: verifier, Admin: adminHandler}
	srv := httptest.NewServer(apiServer.Handler())
	t.Cleanup(srv.Close)
	return &env{srv: srv, db: db, clock: clk, ip: &ip, dir: dir, h: h}
}

// browser is an HTTP client with its own cookies that does not follow
// redirects, so tests see each step.
type browser struct {
	t      *testing.T
	e      *env
	client *http.Client
}

func (e *env) browser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, e: e, client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

type page struct {
	status   int
	body     string
	location string
	header   http.Header
}

func (b *browser) do(method, path string, form url.Values, header ...string) page {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, b.e.srv.URL+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
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

func (b *browser) get(path string) page                { return b.do("GET", path, nil) }
func (b *browser) post(path string, f url.Values) page { return b.do("POST", path, f) }

func (e *env) createUser(t *testing.T, workspace, email, password string) {
	t.Helper()
	ctx := context.Background()
	if err := e.db.EnsureWorkspace(ctx, workspace); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.CreateUser(ctx, assistant.User{Workspace: workspace, Email: email, PasswordHash: access.HashPassword(password)}); err != nil {
		t.Fatal(err)
	}
}

func (b *browser) login(email, password string) page {
	return b.post("/admin/login", url.Values{"email": {email}, "password": {password}})
}

var keyPattern = regexp.MustCompile(`sk_service_[0-9A-Za-z]{50}`)

// createKey creates a key through the form and returns its id and the
// plaintext from the one page that shows it.
func (b *browser) createKey(name string) (id, plaintext string) {
	b.t.Helper()
	p := b.post("/admin/integrations/keys", url.Values{"name": {name}})
	if p.status != http.StatusSeeOther || !strings.HasSuffix(p.location, "/created") {
		b.t.Fatalf("create key: %d %s", p.status, p.location)
	}
	shown := b.get(p.location)
	plaintext = keyPattern.FindString(shown.body)
	if plaintext == "" {
		b.t.Fatalf("the created page does not show the key")
	}
	if shown.header.Get("Cache-Control") != "no-store" {
		b.t.Errorf("the page showing a key is cacheable: %q", shown.header.Get("Cache-Control"))
	}
	return plaintext[11:23], plaintext
}

func (e *env) apiStatus(t *testing.T, key string) int {
	req, _ := http.NewRequest("GET", e.srv.URL+"/api/v1/key", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestSetupCreateShowOnceRevoke(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	token := access.RandomToken(32)
	e.db.SetSetupToken(ctx, access.HashSetupToken(token), e.clock.Now().Add(time.Hour))
	b := e.browser(t)

	if p := b.get("/admin/setup?token=wrong"); !strings.Contains(p.body, "not valid") {
		t.Errorf("a wrong setup token shows the form")
	}
	if p := b.get("/admin/setup?token=" + token); p.status != 200 || !strings.Contains(p.body, `name="password"`) {
		t.Fatalf("setup form: %d", p.status)
	}
	weak := b.post("/admin/setup", url.Values{"token": {token}, "email": {"owner@example.com"}, "password": {"short"}, "confirm": {"short"}})
	if weak.status != 400 || !strings.Contains(weak.body, "at least 12") {
		t.Errorf("weak password: %d", weak.status)
	}
	p := b.post("/admin/setup", url.Values{"token": {token}, "email": {"owner@example.com"}, "password": {"a long passphrase"}, "confirm": {"a long passphrase"}})
	if p.status != http.StatusSeeOther || p.location != "/admin/integrations" {
		t.Fatalf("setup: %d %s %s", p.status, p.location, p.body)
	}
	if again := e.browser(t).get("/admin/setup?token=" + token); !strings.Contains(again.body, "not valid") {
		t.Errorf("the setup link works twice")
	}

	id, plaintext := b.createKey("website widget")
	if e.apiStatus(t, plaintext) != 200 {
		t.Fatalf("new key does not authenticate")
	}
	// Shown once: the same page again no longer has it.
	if reload := b.get("/admin/integrations/keys/" + id + "/created"); keyPattern.MatchString(reload.body) || !strings.Contains(reload.body, "cannot be shown again") {
		t.Errorf("the key is shown a second time")
	}
	list := b.get("/admin/integrations")
	for _, want := range []string{id, "website widget", "owner@example.com", "active"} {
		if !strings.Contains(list.body, want) {
			t.Errorf("the key list lacks %q", want)
		}
	}
	if strings.Contains(list.body, plaintext) {
		t.Errorf("the key list shows the plaintext")
	}

	if confirm := b.get("/admin/integrations/keys/" + id + "/revoke"); !strings.Contains(confirm.body, "cannot be undone") {
		t.Errorf("revoke does not ask for confirmation")
	}
	if p := b.post("/admin/integrations/keys/"+id+"/revoke", url.Values{}); p.status != http.StatusSeeOther {
		t.Fatalf("revoke: %d", p.status)
	}
	if s := e.apiStatus(t, plaintext); s != 401 {
		t.Errorf("revoked key: status %d on the next request", s)
	}
	audit, _ := e.db.ListAudit(ctx, "default", 10)
	var actions []string
	for _, a := range audit {
		actions = append(actions, a.Action+":"+a.Actor+":"+a.IP)
	}
	for _, want := range []string{"key.revoked:owner@example.com:192.0.2.10", "key.created:owner@example.com:192.0.2.10", "user.created:owner@example.com:192.0.2.10"} {
		if !strings.Contains(strings.Join(actions, " "), want) {
			t.Errorf("audit log %v lacks %s", actions, want)
		}
	}
}

func TestWorkspaceIsolation(t *testing.T) {
	e := newEnv(t)
	e.createUser(t, "alpha", "a@alpha.test", "alpha password 1")
	e.createUser(t, "beta", "b@beta.test", "beta password 12")
	a, bb := e.browser(t), e.browser(t)
	a.login("a@alpha.test", "alpha password 1")
	bb.login("b@beta.test", "beta password 12")
	betaID, betaKey := bb.createKey("beta key")

	if list := a.get("/admin/integrations"); strings.Contains(list.body, betaID) {
		t.Error("alpha sees beta's key")
	}
	for _, path := range []string{"/admin/integrations/keys/" + betaID + "/usage", "/admin/integrations/keys/" + betaID + "/revoke", "/admin/integrations/keys/" + betaID + "/created"} {
		if p := a.get(path); p.status != 404 {
			t.Errorf("alpha GET %s: %d", path, p.status)
		}
	}
	if p := a.post("/admin/integrations/keys/"+betaID+"/revoke", url.Values{}); p.status != 404 {
		t.Errorf("alpha revoking beta's key: %d", p.status)
	}
	if e.apiStatus(t, betaKey) != 200 {
		t.Error("beta's key stopped working")
	}
}

func TestCrossOriginPostsAreRefused(t *testing.T) {
	e := newEnv(t)
	e.createUser(t, "alpha", "a@alpha.test", "alpha password 1")
	b := e.browser(t)
	b.login("a@alpha.test", "alpha password 1")
	cross := b.do("POST", "/admin/integrations/keys", url.Values{"name": {"evil"}}, "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site")
	if cross.status != 403 || !strings.Contains(cross.body, "another site") {
		t.Errorf("cross-origin form post: %d", cross.status)
	}
	cross = b.do("POST", "/admin/logout", url.Values{}, "Origin", "https://evil.example")
	if cross.status != 403 {
		t.Errorf("cross-origin logout (Origin only): %d", cross.status)
	}
	same := b.do("POST", "/admin/integrations/keys", url.Values{"name": {"fine"}}, "Origin", e.srv.URL, "Sec-Fetch-Site", "same-origin")
	if same.status != http.StatusSeeOther {
		t.Errorf("same-origin form post: %d", same.status)
	}
	if keys, _ := e.db.ListKeys(context.Background(), "alpha"); len(keys) != 1 || keys[0].Name != "fine" {
		t.Errorf("keys after the posts: %+v", keys)
	}
}

func TestLoginLockout(t *testing.T) {
	e := newEnv(t)
	e.createUser(t, "alpha", "a@alpha.test", "alpha password 1")
	attacker := e.browser(t)
	for i := range 10 {
		if p := attacker.login("a@alpha.test", "wrong password"); p.status != 401 {
			t.Fatalf("wrong password %d: %d", i, p.status)
		}
	}
	locked := attacker.login("a@alpha.test", "alpha password 1")
	if locked.status != 429 || !strings.Contains(locked.body, "Too many failed logins") {
		t.Errorf("right password from the locked IP: %d", locked.status)
	}
	*e.ip = "198.51.100.20"
	owner := e.browser(t)
	if p := owner.login("a@alpha.test", "alpha password 1"); p.status != http.StatusSeeOther {
		t.Errorf("right password from another IP: %d", p.status)
	}
	if p := owner.get("/admin/integrations"); p.status != 200 {
		t.Errorf("owner's session: %d", p.status)
	}
}

func TestUsagePage(t *testing.T) {
	e := newEnv(t)
	e.createUser(t, "alpha", "a@alpha.test", "alpha password 1")
	b := e.browser(t)
	b.login("a@alpha.test", "alpha password 1")
	id, _ := b.createKey("usage key")
	ctx := context.Background()
	day := time.Date(2026, 6, 14, 0, 0, 0, 0, time.UTC)
	seed := []struct {
		at     time.Time
		status int
		source string
	}{
		{day.Add(time.Hour), 200, "web"}, {day.Add(2 * time.Hour), 200, "web"}, {day.Add(3 * time.Hour), 429, "web"},
		{day.Add(4 * time.Hour), 200, "crm"}, {day.Add(26 * time.Hour), 502, "crm"},
		{day.Add(-40 * 24 * time.Hour), 200, "ancient"}, // outside 30 days
	}
	for _, s := range seed {
		e.db.RecordUsage(ctx, assistant.UsageRecord{At: s.at, Workspace: "alpha", KeyID: id, Endpoint: "POST /api/v1/chat", Status: s.status, Source: s.source})
	}
	p := b.get("/admin/integrations/keys/" + id + "/usage")
	compact := regexp.MustCompile(`\s+`).ReplaceAllString(p.body, "")
	for _, want := range []string{
		"<th>2xx</th><th>4xx</th><th>5xx</th><th>Total</th>",
		"<tr><td>2026-06-14</td><td>3</td><td>1</td><td>0</td><td>4</td></tr>",
		"<tr><td>2026-06-15</td><td>0</td><td>0</td><td>1</td><td>1</td></tr>",
		"<th>crm</th><th>web</th>",
		"<tr><td>2026-06-14</td><td>1</td><td>3</td></tr>",
		"<tr><td>2026-06-15</td><td>1</td><td>0</td></tr>",
	} {
		if !strings.Contains(compact, want) {
			t.Errorf("usage page lacks %s", want)
		}
	}
	if strings.Contains(p.body, "ancient") {
		t.Error("usage older than 30 days is shown")
	}
}

func TestPagesNeedLoginAndSendSecurityHeaders(t *testing.T) {
	e := newEnv(t)
	b := e.browser(t)
	if p := b.get("/admin/integrations"); p.status != http.StatusSeeOther || p.location != "/admin/login" {
		t.Errorf("anonymous: %d %s", p.status, p.location)
	}
	p := b.get("/admin/login")
	csp := p.header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP = %q", csp)
	}
	if strings.Contains(p.body, "<script>") {
		t.Error("inline script on a page")
	}
	if p := b.get("/admin/nothing"); p.status != 404 || !strings.Contains(p.header.Get("Content-Type"), "text/html") {
		t.Errorf("unknown admin page: %d %s", p.status, p.header.Get("Content-Type"))
	}
	e.createUser(t, "alpha", "a@alpha.test", "alpha password 1")
	loggedIn := b.login("a@alpha.test", "alpha password 1")
	setCookie := loggedIn.header.Get("Set-Cookie")
	if !strings.Contains(setCookie, "HttpOnly") || !strings.Contains(setCookie, "SameSite=Lax") || strings.Contains(setCookie, "Secure") {
		t.Errorf("session cookie over plain HTTP: %q", setCookie)
	}
	var cookie *http.Cookie
	u, _ := url.Parse(e.srv.URL + "/admin/")
	for _, c := range b.client.Jar.Cookies(u) {
		cookie = c
	}
	if cookie == nil {
		t.Fatal("no session cookie")
	}
	resp := b.do("POST", "/admin/logout", url.Values{})
	if resp.status != http.StatusSeeOther {
		t.Errorf("logout: %d", resp.status)
	}
	if p := b.get("/admin/integrations"); p.status != http.StatusSeeOther {
		t.Errorf("after logout: %d", p.status)
	}
}
