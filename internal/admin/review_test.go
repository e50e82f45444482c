package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/admin"
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

// keep keeps n turns of workspace ws, a minute apart from the clock's
// time, and returns their ids, oldest first.
func (e *env) keep(t *testing.T, ws string, n int) []string {
	t.Helper()
	var ids []string
	for i := range n {
		id := fmt.Sprintf("rev_%s_%03d", ws, i)
		r := assistant.Review{ID: id, Workspace: ws, At: e.clock.Now().Add(time.Duration(i) * time.Minute), KeyID: "key_" + ws,
			Surface: "POST /api/v1/chat", Mode: "operator", Level: "medium", Message: fmt.Sprintf("message %d of %s <b>", i, ws), History: 1,
			Answer:    fmt.Sprintf("Answer %d: protect the bottleneck [framework:theory-of-constraints].", i),
			Trace:     []byte(`[{"hop":0,"tool":"search_knowledge","input_summary":"bottleneck","result_summary":"3 entities"}]`),
			Knowledge: []byte(`[{"title":"Theory of Constraints","source":"framework:theory-of-constraints","url":null,"score":0.9,"snippet":"s"}]`),
			Verdicts: []byte(`{"score":0.5,"level":"medium","totalClaims":2,"verifiedClaims":1,"verdicts":[` +
				`{"claim":"Protect the bottleneck.","status":"verified","citations":["framework:theory-of-constraints"],"evidence":{"type":"framework","slug":"theory-of-constraints","snippet":"the constraint"},"score":0.9,"reason":"r"},` +
				`{"claim":"Hire more staff.","status":"unsupported","citations":[],"evidence":null,"score":0.1,"reason":"r"}]}`)}
		if ok, err := e.db.KeepReview(context.Background(), r); err != nil || !ok {
			t.Fatalf("KeepReview(%s) = %v, %v", id, ok, err)
		}
		ids = append(ids, id)
	}
	return ids
}

// The review page lists the kept turns newest first, a page at a time;
// a turn is shown in full (message escaped, citations marked, trace,
// knowledge, verdicts); one is deleted, then all (only when confirmed);
// another workspace's turns can be neither read nor deleted; an expired
// turn is not shown before the purge; deletions are audited and
// cross-origin posts refused.
func TestReviewTurns(t *testing.T) {
	e := newEnv(t)
	e.createUser(t, "acme", "a@acme.test", "acme password 1")
	e.createUser(t, "other", "o@other.test", "other password 1")
	ctx := context.Background()
	start := e.clock.Now()
	for _, ws := range []string{"acme", "other"} {
		if err := e.db.SetReviewSetting(ctx, ws, assistant.ReviewSetting{Enabled: true, RetentionDays: 3}, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	ids := e.keep(t, "acme", admin.ReviewPageSize+2)
	foreign := e.keep(t, "other", 1)[0]
	b := e.browser(t)
	b.login("a@acme.test", "acme password 1")

	p := b.get("/admin/review")
	newest, oldest := ids[len(ids)-1], ids[0]
	if p.status != 200 || strings.Count(p.body, "data-review-id=") != admin.ReviewPageSize || !strings.Contains(p.body, newest) ||
		strings.Contains(p.body, oldest) || !strings.Contains(p.body, `href="/admin/review?page=2"`) || strings.Contains(p.body, foreign) {
		t.Fatalf("first page: %d\n%s", p.status, p.body)
	}
	if strings.Index(p.body, newest) > strings.Index(p.body, ids[len(ids)-2]) {
		t.Error("the list is not newest first")
	}
	if p := b.get("/admin/review?page=2"); strings.Count(p.body, "data-review-id=") != 2 || !strings.Contains(p.body, oldest) {
		t.Errorf("second page:\n%s", p.body)
	}
	if p := b.get("/admin/review?page=0"); p.status != http.StatusBadRequest {
		t.Errorf("page 0: %d", p.status)
	}

	p = b.get("/admin/review/" + newest)
	for _, want := range []string{fmt.Sprintf("message %d of acme &lt;b&gt;", len(ids)-1), `<mark class="citation" title="Theory of Constraints">[framework:theory-of-constraints]</mark>`,
		"search_knowledge", "Protect the bottleneck.", "unsupported", "Hire more staff.", "1 of 2 claims verified", "key_acme", "framework:theory-of-constraints"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the turn's page lacks %q", want)
		}
	}
	if p.status != 200 || strings.Contains(p.body, "<b>") {
		t.Errorf("the turn's page: %d\n%s", p.status, p.body)
	}
	if p := b.get("/admin/review/" + foreign); p.status != http.StatusNotFound {
		t.Errorf("another workspace's turn: %d", p.status)
	}
	if p := b.post("/admin/review/"+foreign+"/delete", url.Values{}); p.status != http.StatusNotFound {
		t.Errorf("deleting another workspace's turn: %d", p.status)
	}
	if _, err := e.db.Review(ctx, "other", foreign, e.clock.Now()); err != nil {
		t.Errorf("another workspace's turn went: %v", err)
	}

	cross := b.do("POST", "/admin/review/"+newest+"/delete", url.Values{}, "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site")
	if cross.status != http.StatusForbidden {
		t.Errorf("cross-origin delete: %d", cross.status)
	}
	if p := b.post("/admin/review/"+newest+"/delete", url.Values{}); p.status != http.StatusSeeOther {
		t.Fatalf("delete: %d %s", p.status, p.body)
	}
	if p := b.get("/admin/review/" + newest); p.status != http.StatusNotFound {
		t.Errorf("a deleted turn: %d", p.status)
	}
	if p := b.post("/admin/review/delete-all", url.Values{}); p.status != http.StatusBadRequest {
		t.Errorf("delete all unconfirmed: %d", p.status)
	}
	if kept, _ := e.db.Reviews(ctx, "acme", e.clock.Now(), 0, 100); len(kept) != len(ids)-1 {
		t.Errorf("%d kept after one deletion, want %d", len(kept), len(ids)-1)
	}

	// Past its expiry a turn is not shown, purged or not.
	e.clock.mu.Lock()
	e.clock.t = e.clock.t.Add(3*24*time.Hour + 30*time.Second) // the first turn (and only it) expired
	e.clock.mu.Unlock()
	if p := b.get("/admin/review/" + oldest); p.status != http.StatusNotFound {
		t.Errorf("an expired turn: %d", p.status)
	}
	if p := b.get("/admin/review?page=2"); strings.Contains(p.body, oldest) {
		t.Error("an expired turn is listed")
	}

	if p := b.post("/admin/review/delete-all", url.Values{"confirm": {"on"}}); p.status != http.StatusSeeOther {
		t.Fatalf("delete all: %d", p.status)
	}
	if p := b.get("/admin/review"); !strings.Contains(p.body, "No turns kept.") || !strings.Contains(p.body, "kept turn(s) deleted") {
		t.Errorf("after deleting all:\n%s", p.body)
	}
	if kept, _ := e.db.Reviews(ctx, "other", start, 0, 100); len(kept) != 1 {
		t.Errorf("deleting all touched another workspace: %d left", len(kept))
	}
	audit := b.get("/admin/audit").body
	for _, want := range []string{"review.deleted", "review.deleted_all"} {
		if !strings.Contains(audit, want) {
			t.Errorf("the audit log lacks %s", want)
		}
	}
}

// Turning review off from the page deletes the workspace's kept turns.
func TestReviewTurnedOffDeletesTurns(t *testing.T) {
	e := newEnv(t)
	e.createUser(t, "acme", "a@acme.test", "acme password 1")
	b := e.browser(t)
	b.login("a@acme.test", "acme password 1")
	if p := b.post("/admin/review", url.Values{"enabled": {"on"}, "days": {"7"}}); p.status != http.StatusSeeOther {
		t.Fatalf("turning review on: %d", p.status)
	}
	e.keep(t, "acme", 3)
	if p := b.get("/admin/review"); strings.Count(p.body, "data-review-id=") != 3 {
		t.Fatalf("kept turns not listed:\n%s", p.body)
	}
	if p := b.post("/admin/review", url.Values{"days": {"7"}}); p.status != http.StatusSeeOther {
		t.Fatalf("turning review off: %d", p.status)
	}
	if p := b.get("/admin/review"); !strings.Contains(p.body, "No turns kept.") || !strings.Contains(p.body, "Any turns kept were deleted.") {
		t.Errorf("after turning review off:\n%s", p.body)
	}
}

// The playground's turns are kept like the API's when review is on,
// with no key id, and not when it is off.
func TestPlaygroundTurnIsKeptForReview(t *testing.T) {
	e := newPlaygroundEnv(t)
	e.createUser(t, "alpha", "a@alpha.test", "alpha password 1")
	b := e.browser(t)
	b.login("a@alpha.test", "alpha password 1")
	ctx := context.Background()
	turn := `{"message":"Our packing station cannot keep up","mode":"operator"}`
	if p := b.playground(turn); p.status != 200 {
		t.Fatalf("playground: %d %s", p.status, p.body)
	}
	if kept, _ := e.db.Reviews(ctx, "alpha", e.clock.Now(), 0, 10); len(kept) != 0 {
		t.Fatalf("kept with review off: %+v", kept)
	}
	if err := e.db.SetReviewSetting(ctx, "alpha", assistant.ReviewSetting{Enabled: true, RetentionDays: 1}, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if p := b.playground(turn); p.status != 200 {
		t.Fatalf("playground: %d %s", p.status, p.body)
	}
	kept, _ := e.db.Reviews(ctx, "alpha", e.clock.Now(), 0, 10)
	if len(kept) != 1 || kept[0].Surface != assistant.ReviewSurfacePlayground || kept[0].KeyID != "" ||
		kept[0].Message != "Our packing station cannot keep up" || kept[0].Answer == "" {
		t.Fatalf("kept %+v", kept)
	}
	if p := b.get("/admin/review/" + kept[0].ID); p.status != 200 || !strings.Contains(p.body, "admin (playground)") {
		t.Errorf("the playground turn's page: %d", p.status)
	}
}
