package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
)

func TestAuditLogPage(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.createUser(t, "alpha", "a@alpha.test", "alpha password 1")
	e.createUser(t, "beta", "b@beta.test", "beta password 12")
	// 60 older events in alpha, one in beta.
	base := e.clock.Now().Add(-time.Hour)
	for i := range 60 {
		if err := e.db.RecordAudit(ctx, assistant.AuditEvent{At: base.Add(time.Duration(i) * time.Second), Workspace: "alpha",
			Actor: "cli", Action: "key.created", Target: fmt.Sprintf("old%03d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	e.db.RecordAudit(ctx, assistant.AuditEvent{At: base, Workspace: "beta", Actor: "cli", Action: "key.created", Target: "betasecret1"})

	if p := e.browser(t).get("/admin/audit"); p.status != http.StatusSeeOther || p.location != "/admin/login" {
		t.Errorf("audit page without a session: %d %s", p.status, p.location)
	}
	a := e.browser(t)
	a.login("a@alpha.test", "alpha password 1")
	first := a.get("/admin/audit")
	if first.status != 200 {
		t.Fatalf("audit page: %d", first.status)
	}
	// Newest first: the login just made, then old059 … old011 (50 rows).
	if n := strings.Count(first.body, `data-label="Time"`); n != 50 {
		t.Errorf("first page has %d rows, want 50", n)
	}
	login := strings.Index(first.body, "login.succeeded")
	if login < 0 || login > strings.Index(first.body, "old059") || strings.Index(first.body, "old059") > strings.Index(first.body, "old058") {
		t.Errorf("the audit page is not newest first")
	}
	if !strings.Contains(first.body, "old011") || strings.Contains(first.body, "old010") {
		t.Errorf("the first page holds the wrong entries")
	}
	if !strings.Contains(first.body, `href="/admin/audit?page=2"`) || strings.Contains(first.body, `rel="prev"`) {
		t.Errorf("the first page links no older page, or a newer one")
	}
	second := a.get("/admin/audit?page=2")
	if !strings.Contains(second.body, "old010") || !strings.Contains(second.body, "old000") || strings.Contains(second.body, "old011") {
		t.Errorf("the second page holds the wrong entries")
	}
	if strings.Contains(second.body, `rel="next"`) || !strings.Contains(second.body, `href="/admin/audit?page=1"`) {
		t.Errorf("the last page's links are wrong")
	}
	for _, p := range []string{first.body, second.body} {
		if strings.Contains(p, "betasecret1") {
			t.Error("alpha sees beta's audit entries")
		}
	}
	if !strings.Contains(first.body, `href="/admin/audit"`) {
		t.Error("the nav does not link the audit log")
	}
	for _, bad := range []string{"0", "-1", "x", "100001"} {
		if p := a.get("/admin/audit?page=" + bad); p.status != http.StatusBadRequest {
			t.Errorf("page=%s: %d", bad, p.status)
		}
	}
}

func TestPasswordChange(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.createUser(t, "alpha", "a@alpha.test", "alpha password 1")
	e.createUser(t, "beta", "b@beta.test", "beta password 12")
	a, other, beta := e.browser(t), e.browser(t), e.browser(t)
	a.login("a@alpha.test", "alpha password 1")
	other.login("a@alpha.test", "alpha password 1")
	beta.login("b@beta.test", "beta password 12")

	if p := e.browser(t).get("/admin/password"); p.status != http.StatusSeeOther || p.location != "/admin/login" {
		t.Errorf("password page without a session: %d %s", p.status, p.location)
	}
	if p := a.get("/admin/password"); p.status != 200 || !strings.Contains(p.body, `name="current"`) || !strings.Contains(p.body, "at least 12") {
		t.Fatalf("password form: %d", p.status)
	}
	change := func(b *browser, current, password, confirm string, header ...string) page {
		return b.do("POST", "/admin/password", url.Values{"current": {current}, "password": {password}, "confirm": {confirm}}, header...)
	}
	for _, c := range []struct {
		current, password, confirm string
		status                     int
		want                       string
	}{
		{"wrong password!", "a new long passphrase", "a new long passphrase", 401, "current password is wrong"},
		{"alpha password 1", "a new long passphrase", "another passphrase", 400, "differ"},
		{"alpha password 1", "short", "short", 400, "at least 12"},
	} {
		if p := change(a, c.current, c.password, c.confirm); p.status != c.status || !strings.Contains(p.body, c.want) {
			t.Errorf("change(%q, %q, %q): %d, want %d and %q", c.current, c.password, c.confirm, p.status, c.status, c.want)
		}
	}
	if p := change(a, "alpha password 1", "a new long passphrase", "a new long passphrase", "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"); p.status != 403 {
		t.Errorf("cross-origin password change: %d", p.status)
	}
	if p := change(a, "alpha password 1", "a new long passphrase", "a new long passphrase"); p.status != http.StatusSeeOther {
		t.Fatalf("password change: %d %s", p.status, p.body)
	}
	// This session goes on, the other session of the user is logged out,
	// another user's is not.
	if p := a.get("/admin/integrations"); p.status != 200 || !strings.Contains(p.body, "password is changed") {
		t.Errorf("the changing session: %d", p.status)
	}
	if p := other.get("/admin/integrations"); p.status != http.StatusSeeOther || p.location != "/admin/login" {
		t.Errorf("the user's other session survived the change: %d", p.status)
	}
	if p := beta.get("/admin/integrations"); p.status != 200 {
		t.Errorf("another user's session ended: %d", p.status)
	}
	if p := e.browser(t).login("a@alpha.test", "alpha password 1"); p.status != http.StatusUnauthorized {
		t.Errorf("the old password still logs in: %d", p.status)
	}
	if p := e.browser(t).login("a@alpha.test", "a new long passphrase"); p.status != http.StatusSeeOther {
		t.Errorf("the new password does not log in: %d", p.status)
	}
	u, _ := e.db.UserByEmail(ctx, "a@alpha.test")
	if !strings.HasPrefix(u.PasswordHash, "$argon2id$") {
		t.Errorf("the new hash is not argon2id: %.20s", u.PasswordHash)
	}
	audit, _ := e.db.ListAudit(ctx, "alpha", 20)
	var actions []string
	for _, ev := range audit {
		actions = append(actions, ev.Action+":"+ev.Detail)
	}
	joined := strings.Join(actions, " ")
	for _, want := range []string{"password.changed:1 other session(s) ended", "password.change_failed"} {
		if !strings.Contains(joined, want) {
			t.Errorf("audit log %v lacks %s", actions, want)
		}
	}
}

func TestWorkspaceUsagePage(t *testing.T) {
	e := newEnv(t)
	e.createUser(t, "alpha", "a@alpha.test", "alpha password 1")
	e.createUser(t, "beta", "b@beta.test", "beta password 12")
	b, bb := e.browser(t), e.browser(t)
	b.login("a@alpha.test", "alpha password 1")
	bb.login("b@beta.test", "beta password 12")
	k1, _ := b.createKey("one")
	k2, _ := b.createKey("two")
	kb, _ := bb.createKey("beta")
	ctx := context.Background()
	day := time.Date(2026, 6, 14, 0, 0, 0, 0, time.UTC)
	for _, s := range []struct {
		at      time.Time
		ws, key string
		status  int
		source  string
	}{
		{day.Add(time.Hour), "alpha", k1, 200, "web"}, {day.Add(2 * time.Hour), "alpha", k2, 200, "crm"},
		{day.Add(3 * time.Hour), "alpha", k2, 429, "web"}, {day.Add(26 * time.Hour), "alpha", k1, 502, "web"},
		{day.Add(time.Hour), "beta", kb, 200, "betasource"},
		{day.Add(-40 * 24 * time.Hour), "alpha", k1, 200, "ancient"},
	} {
		e.db.RecordUsage(ctx, assistant.UsageRecord{At: s.at, Workspace: s.ws, KeyID: s.key, Endpoint: "POST /api/v1/chat", Status: s.status, Source: s.source})
	}
	p := b.get("/admin/usage")
	compact := regexp.MustCompile(`\s+`).ReplaceAllString(p.body, "")
	for _, want := range []string{
		"<th>2xx</th><th>4xx</th><th>5xx</th><th>Total</th>",
		"<tr><td>2026-06-14</td><td>2</td><td>1</td><td>0</td><td>3</td></tr>",
		"<tr><td>2026-06-15</td><td>0</td><td>0</td><td>1</td><td>1</td></tr>",
		"<th>crm</th><th>web</th>",
		"<tr><td>2026-06-14</td><td>1</td><td>2</td></tr>",
		`href="/admin/usage"`,
	} {
		if !strings.Contains(compact, want) {
			t.Errorf("workspace usage page lacks %s", want)
		}
	}
	if strings.Contains(p.body, "ancient") || strings.Contains(p.body, "betasource") {
		t.Error("the workspace usage page shows old usage or another workspace's")
	}
}

func TestRollKey(t *testing.T) {
	e := newEnv(t)
	e.createUser(t, "alpha", "a@alpha.test", "alpha password 1")
	e.createUser(t, "beta", "b@beta.test", "beta password 12")
	b, bb := e.browser(t), e.browser(t)
	b.login("a@alpha.test", "alpha password 1")
	bb.login("b@beta.test", "beta password 12")
	oldID, oldKey := b.createKey("widget")
	betaID, _ := bb.createKey("beta")

	if p := b.get("/admin/integrations"); !strings.Contains(p.body, "/admin/integrations/keys/"+oldID+"/roll") {
		t.Error("the key list has no Roll link")
	}
	if p := b.get("/admin/integrations/keys/" + oldID + "/roll"); p.status != 200 || !strings.Contains(p.body, `name="grace"`) {
		t.Fatalf("roll form: %d", p.status)
	}
	if p := b.get("/admin/integrations/keys/" + betaID + "/roll"); p.status != 404 {
		t.Errorf("rolling another workspace's key: %d", p.status)
	}
	if p := b.post("/admin/integrations/keys/"+oldID+"/roll", url.Values{"grace": {"5y"}}); p.status != 400 {
		t.Errorf("a grace period not in the list: %d", p.status)
	}
	roll := func(id, grace string) (string, string) {
		p := b.post("/admin/integrations/keys/"+id+"/roll", url.Values{"grace": {grace}})
		if p.status != http.StatusSeeOther || !strings.HasSuffix(p.location, "/created") {
			t.Fatalf("roll: %d %s", p.status, p.location)
		}
		shown := b.get(p.location)
		plaintext := keyPattern.FindString(shown.body)
		if plaintext == "" || !strings.Contains(shown.body, "is rolled") {
			t.Fatalf("the rolled key's page does not show the new key")
		}
		return plaintext[11:23], plaintext
	}
	newID, newKey := roll(oldID, "1h")
	if e.apiStatus(t, newKey) != 200 || e.apiStatus(t, oldKey) != 200 {
		t.Fatal("during the grace period both keys must work")
	}
	e.clock.mu.Lock()
	e.clock.t = e.clock.t.Add(time.Hour)
	e.clock.mu.Unlock()
	if s := e.apiStatus(t, oldKey); s != 401 {
		t.Errorf("the old key after the grace period: %d", s)
	}
	if e.apiStatus(t, newKey) != 200 {
		t.Error("the new key stopped working")
	}
	if p := b.post("/admin/integrations/keys/"+oldID+"/roll", url.Values{"grace": {"0"}}); p.status != http.StatusConflict {
		t.Errorf("rolling an expired key: %d", p.status)
	}
	_, newest := roll(newID, "0")
	if s := e.apiStatus(t, newKey); s != 401 {
		t.Errorf("a key rolled with no grace still works: %d", s)
	}
	if e.apiStatus(t, newest) != 200 {
		t.Error("the replacement does not work")
	}
	audit, _ := e.db.ListAudit(context.Background(), "alpha", 20)
	var actions []string
	for _, ev := range audit {
		actions = append(actions, ev.Action+":"+ev.Target)
	}
	for _, want := range []string{"key.rolled:" + oldID, "key.rolled:" + newID, "key.revoked:" + newID} {
		if !strings.Contains(strings.Join(actions, " "), want) {
			t.Errorf("audit log %v lacks %s", actions, want)
		}
	}
}
