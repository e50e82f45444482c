package admin_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/assistant"
)

// The review page shows the workspace's setting (off by default, 30
// days offered), turns it on and off with a retention period, refuses a
// bad period without changing anything, and records the change in the
// audit log; another workspace's setting is untouched.
func TestReviewSetting(t *testing.T) {
	e := newEnv(t)
	e.createUser(t, "acme", "a@acme.test", "acme password 1")
	e.createUser(t, "other", "o@other.test", "other password 1")
	b := e.browser(t)
	b.login("a@acme.test", "acme password 1")
	ctx := context.Background()

	p := b.get("/admin/review")
	if p.status != 200 || strings.Contains(p.body, "checked") || !strings.Contains(p.body, `value="30"`) {
		t.Fatalf("the review page before any setting: %d\n%s", p.status, p.body)
	}
	if p := b.post("/admin/review", url.Values{"enabled": {"on"}, "days": {"7"}}); p.status != http.StatusSeeOther {
		t.Fatalf("turning review on: %d", p.status)
	}
	if got, err := e.db.ReviewSetting(ctx, "acme"); err != nil || got != (assistant.ReviewSetting{Enabled: true, RetentionDays: 7}) {
		t.Errorf("stored %+v %v, want on for 7 days", got, err)
	}
	if p := b.get("/admin/review"); !strings.Contains(p.body, "checked") || !strings.Contains(p.body, `value="7"`) || !strings.Contains(p.body, "on, 7 days") {
		t.Errorf("the page after turning it on:\n%s", p.body)
	}
	for _, bad := range []string{"0", "366", "x", ""} {
		if p := b.post("/admin/review", url.Values{"days": {bad}}); p.status != http.StatusBadRequest {
			t.Errorf("days %q: %d", bad, p.status)
		}
	}
	if got, _ := e.db.ReviewSetting(ctx, "acme"); !got.Enabled || got.RetentionDays != 7 {
		t.Errorf("a refused form changed the setting: %+v", got)
	}
	if got, _ := e.db.ReviewSetting(ctx, "other"); got.Enabled {
		t.Error("another workspace's setting changed")
	}
	if p := b.post("/admin/review", url.Values{"days": {"7"}}); p.status != http.StatusSeeOther {
		t.Fatalf("turning review off: %d", p.status)
	}
	if got, _ := e.db.ReviewSetting(ctx, "acme"); got.Enabled {
		t.Errorf("review still on: %+v", got)
	}
	if p := b.get("/admin/audit"); !strings.Contains(p.body, "review.changed") {
		t.Error("the change is not in the audit log")
	}
}
