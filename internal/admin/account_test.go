package admin_test

import (
	"context"
	"fmt"
	"net/http"
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
