package storetest

import (
	"crypto/sha256"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
)

func workspace(t *testing.T, s Store, ids ...string) {
	t.Helper()
	for _, id := range ids {
		must(t, s.EnsureWorkspace(t.Context(), id))
	}
}

func key(id, ws string, created time.Time) assistant.APIKey {
	return assistant.APIKey{ID: id, Workspace: ws, Name: "key " + id, Hash: sha256.Sum256([]byte(id)), CreatedAt: created, CreatedBy: "cli"}
}

func ptr(t time.Time) *time.Time { return &t }

func getKey(t *testing.T, s Store, id string) assistant.APIKey {
	t.Helper()
	k, err := s.KeyByID(t.Context(), id)
	must(t, err)
	return k
}

func sameTime(t *testing.T, what string, got, want *time.Time) {
	t.Helper()
	switch {
	case got == nil && want == nil:
	case got == nil || want == nil || !got.Equal(*want):
		t.Errorf("%s = %v, want %v", what, got, want)
	case got.Location() != time.UTC:
		t.Errorf("%s is in %v, want UTC", what, got.Location())
	}
}

func testWorkspaces(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	for _, bad := range []string{"", "Bad Id", "-leading", "UPPER"} {
		wantCode(t, fmt.Sprintf("EnsureWorkspace(%q)", bad), s.EnsureWorkspace(ctx, bad), assistant.EInvalid)
	}
	workspace(t, s, "a", "b_2", "a")
	for id, want := range map[string]bool{"a": true, "b_2": true, "nope": false, "A": false} {
		if got, err := s.WorkspaceExists(ctx, id); err != nil || got != want {
			t.Errorf("WorkspaceExists(%q) = %v, %v; want %v", id, got, err, want)
		}
	}
}

func testKeys(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	workspace(t, s, "a", "b")

	// Times are kept to the millisecond and read back in UTC.
	created := day.Add(1234567891 * time.Nanosecond).In(time.FixedZone("X", 3600))
	k := key("key000000001", "a", created)
	k.ExpiresAt = ptr(day.Add(48 * time.Hour))
	must(t, s.CreateKey(ctx, k))
	got := getKey(t, s, k.ID)
	if got.ID != k.ID || got.Workspace != "a" || got.Name != k.Name || got.Hash != k.Hash || got.CreatedBy != "cli" {
		t.Errorf("KeyByID = %+v, want %+v", got, k)
	}
	sameTime(t, "created", &got.CreatedAt, ptr(day.Add(1234*time.Millisecond)))
	sameTime(t, "expires", got.ExpiresAt, k.ExpiresAt)
	sameTime(t, "revoked", got.RevokedAt, nil)
	sameTime(t, "last used", got.LastUsedAt, nil)
	if got.RateLimit != 0 {
		t.Errorf("a key created without a limit has RateLimit %d, want 0 (the default)", got.RateLimit)
	}

	// A key's own limit is kept, and listed.
	limited := key("key0000000l5", "a", day.Add(-2*time.Hour))
	limited.RateLimit = 5
	must(t, s.CreateKey(ctx, limited))
	if got := getKey(t, s, limited.ID); got.RateLimit != 5 {
		t.Errorf("KeyByID of a key with its own limit: RateLimit %d, want 5", got.RateLimit)
	}
	limits, err := s.ListKeys(ctx, "a")
	must(t, err)
	if len(limits) != 2 || limits[1].ID != limited.ID || limits[1].RateLimit != 5 || limits[0].RateLimit != 0 {
		t.Errorf("ListKeys(a) = %+v, want key000000001 (no limit) then key0000000l5 (limit 5)", limits)
	}

	wantCode(t, "a duplicate key id", s.CreateKey(ctx, key(k.ID, "a", day)), assistant.EConflict)
	wantCode(t, "a key in a missing workspace", s.CreateKey(ctx, key("key000000002", "nope", day)), assistant.ENotFound)
	_, err = s.KeyByID(ctx, "key000000404")
	wantCode(t, "KeyByID of a missing key", err, assistant.ENotFound)

	// Newest first; keys created at the same time by id.
	for _, k := range []assistant.APIKey{key("key0000000b2", "a", day.Add(time.Hour)), key("key0000000b1", "a", day.Add(time.Hour)),
		key("key0000000c0", "a", day.Add(-time.Hour)), key("key0000000x0", "b", day.Add(2*time.Hour))} {
		must(t, s.CreateKey(ctx, k))
	}
	list, err := s.ListKeys(ctx, "a")
	must(t, err)
	var ids []string
	for _, k := range list {
		ids = append(ids, k.ID)
	}
	if want := []string{"key0000000b1", "key0000000b2", "key000000001", "key0000000c0", "key0000000l5"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("ListKeys(a) = %v, want %v", ids, want)
	}
	if list, err := s.ListKeys(ctx, "empty"); err != nil || len(list) != 0 {
		t.Errorf("ListKeys of a workspace without keys = %v, %v", list, err)
	}
}

func testRevoke(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	workspace(t, s, "a", "b")
	must(t, s.CreateKey(ctx, key("key000000001", "a", day)))
	must(t, s.CreateKey(ctx, key("key000000002", "a", day)))
	must(t, s.CreateKey(ctx, key("key000000003", "b", day)))

	_, err := s.RevokeKey(ctx, "b", "key000000001", day)
	wantCode(t, "revoking another workspace's key", err, assistant.ENotFound)
	_, err = s.RevokeKey(ctx, "", "key000000404", day)
	wantCode(t, "revoking a missing key", err, assistant.ENotFound)
	if got := getKey(t, s, "key000000001"); got.RevokedAt != nil {
		t.Error("a refused revocation revoked the key")
	}

	at := day.Add(time.Minute)
	k, err := s.RevokeKey(ctx, "a", "key000000001", at)
	must(t, err)
	sameTime(t, "revoked (returned)", k.RevokedAt, &at)
	if k.ID != "key000000001" || k.Workspace != "a" {
		t.Errorf("RevokeKey returned %+v", k)
	}
	// Revoking twice keeps the first time; an empty workspace matches any.
	k, err = s.RevokeKey(ctx, "", "key000000001", day.Add(time.Hour))
	must(t, err)
	sameTime(t, "revoked twice", k.RevokedAt, &at)
	sameTime(t, "revoked (stored)", getKey(t, s, "key000000001").RevokedAt, &at)
	_, err = s.RevokeKey(ctx, "", "key000000003", day.Add(2*time.Minute))
	must(t, err)

	revokedSince := func(since time.Time) []string {
		ids, err := s.RevokedSince(ctx, since)
		must(t, err)
		slices.Sort(ids)
		return ids
	}
	if got := revokedSince(at); !reflect.DeepEqual(got, []string{"key000000001", "key000000003"}) {
		t.Errorf("RevokedSince(at) = %v: the bound is inclusive", got)
	}
	if got := revokedSince(at.Add(time.Millisecond)); !reflect.DeepEqual(got, []string{"key000000003"}) {
		t.Errorf("RevokedSince(later) = %v", got)
	}
	if got := revokedSince(day.Add(time.Hour)); len(got) != 0 {
		t.Errorf("RevokedSince(after all) = %v", got)
	}
}

func testExpireBy(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	workspace(t, s, "a", "b")
	must(t, s.CreateKey(ctx, key("key000000001", "a", day)))

	_, err := s.ExpireKeyBy(ctx, "b", "key000000001", day)
	wantCode(t, "another workspace's key", err, assistant.ENotFound)
	_, err = s.ExpireKeyBy(ctx, "a", "key000000404", day)
	wantCode(t, "a missing key", err, assistant.ENotFound)

	// No expiry: it gets one. A later one leaves it; an earlier one wins.
	for _, step := range []struct {
		by, want time.Time
	}{{day.Add(24 * time.Hour), day.Add(24 * time.Hour)}, {day.Add(48 * time.Hour), day.Add(24 * time.Hour)}, {day.Add(time.Hour), day.Add(time.Hour)}} {
		k, err := s.ExpireKeyBy(ctx, "a", "key000000001", step.by)
		must(t, err)
		sameTime(t, fmt.Sprintf("expiry after ExpireKeyBy(%v)", step.by), k.ExpiresAt, &step.want)
		sameTime(t, "stored expiry", getKey(t, s, "key000000001").ExpiresAt, &step.want)
	}
}

func testTouch(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	workspace(t, s, "a")
	must(t, s.CreateKey(ctx, key("key000000001", "a", day)))
	must(t, s.CreateKey(ctx, key("key000000002", "a", day)))
	must(t, s.TouchKeys(ctx, nil))
	must(t, s.TouchKeys(ctx, map[string]time.Time{"key000000001": day.Add(3 * time.Minute), "key000000002": day.Add(time.Minute), "key000000404": day}))
	must(t, s.TouchKeys(ctx, map[string]time.Time{"key000000001": day, "key000000002": day.Add(2 * time.Minute)})) // the older time is ignored
	sameTime(t, "last used 1", getKey(t, s, "key000000001").LastUsedAt, ptr(day.Add(3*time.Minute)))
	sameTime(t, "last used 2", getKey(t, s, "key000000002").LastUsedAt, ptr(day.Add(2*time.Minute)))
}

func testUsers(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	workspace(t, s, "a", "b")
	if n, err := s.CountUsers(ctx); err != nil || n != 0 {
		t.Errorf("CountUsers of an empty store = %d, %v", n, err)
	}
	u, err := s.CreateUser(ctx, assistant.User{Workspace: "a", Email: "Admin@A.test", PasswordHash: "h1"})
	must(t, err)
	if u.ID == 0 || u.CreatedAt.IsZero() {
		t.Errorf("CreateUser = %+v: no id or creation time", u)
	}
	created := day.Add(5 * time.Millisecond)
	v, err := s.CreateUser(ctx, assistant.User{Workspace: "b", Email: "other@b.test", PasswordHash: "h2", CreatedAt: created})
	must(t, err)
	if v.ID == u.ID {
		t.Error("two users share an id")
	}
	_, err = s.CreateUser(ctx, assistant.User{Workspace: "a", Email: "admin@a.TEST", PasswordHash: "h"})
	wantCode(t, "a duplicate email in another case", err, assistant.EConflict)
	_, err = s.CreateUser(ctx, assistant.User{Workspace: "nope", Email: "x@nope.test", PasswordHash: "h"})
	wantCode(t, "a user in a missing workspace", err, assistant.ENotFound)

	got, err := s.UserByEmail(ctx, "ADMIN@a.test")
	must(t, err)
	if got.ID != u.ID || got.Email != "Admin@A.test" || got.Workspace != "a" || got.PasswordHash != "h1" {
		t.Errorf("UserByEmail (another case) = %+v", got)
	}
	got, err = s.UserByEmail(ctx, "other@b.test")
	must(t, err)
	sameTime(t, "created", &got.CreatedAt, &created)
	_, err = s.UserByEmail(ctx, "nobody@a.test")
	wantCode(t, "UserByEmail of a missing user", err, assistant.ENotFound)

	must(t, s.SetPasswordHash(ctx, "admin@A.TEST", "h3"))
	if got, _ := s.UserByEmail(ctx, "admin@a.test"); got.PasswordHash != "h3" {
		t.Errorf("SetPasswordHash did not replace the hash: %+v", got)
	}
	if got, _ := s.UserByEmail(ctx, "other@b.test"); got.PasswordHash != "h2" {
		t.Errorf("SetPasswordHash changed another user: %+v", got)
	}
	wantCode(t, "SetPasswordHash of a missing user", s.SetPasswordHash(ctx, "nobody@a.test", "h"), assistant.ENotFound)
	if n, err := s.CountUsers(ctx); err != nil || n != 2 {
		t.Errorf("CountUsers = %d, %v; want 2 across workspaces", n, err)
	}
}

func audit(at time.Time, ws, action string) assistant.AuditEvent {
	return assistant.AuditEvent{At: at, Workspace: ws, Actor: "admin@a.test", Action: action, Target: "key000000001", IP: "192.0.2.1", Detail: "d"}
}

func testAudit(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	if got, err := s.ListAudit(ctx, "a", 10); err != nil || len(got) != 0 {
		t.Errorf("ListAudit of an empty store = %v, %v", got, err)
	}
	events := []assistant.AuditEvent{
		audit(day, "a", "first"), audit(day.Add(time.Minute), "a", "second"), audit(day.Add(time.Minute), "a", "third"), // same time: written later comes first
		audit(day.Add(-time.Hour), "a", "earliest"), audit(day.Add(time.Hour), "b", "other workspace"), audit(day.Add(2*time.Hour), "", "no workspace"),
	}
	for _, e := range events {
		must(t, s.RecordAudit(ctx, e))
	}
	actions := func(list []assistant.AuditEvent) []string {
		var out []string
		for _, e := range list {
			out = append(out, e.Action)
		}
		return out
	}
	got, err := s.ListAudit(ctx, "a", 10)
	must(t, err)
	if want := []string{"third", "second", "first", "earliest"}; !reflect.DeepEqual(actions(got), want) {
		t.Errorf("ListAudit(a) = %v, want %v", actions(got), want)
	}
	if len(got) > 0 && !reflect.DeepEqual(got[0], events[2]) {
		t.Errorf("the event came back as %+v, want %+v", got[0], events[2])
	}
	got, err = s.ListAudit(ctx, "a", 2)
	must(t, err)
	if want := []string{"third", "second"}; !reflect.DeepEqual(actions(got), want) {
		t.Errorf("ListAudit(a, 2) = %v", actions(got))
	}
	var pages []string
	for offset := 0; offset < 6; offset += 3 {
		page, err := s.ListAuditPage(ctx, "a", offset, 3)
		must(t, err)
		pages = append(pages, actions(page)...)
	}
	if want := []string{"third", "second", "first", "earliest"}; !reflect.DeepEqual(pages, want) {
		t.Errorf("pages of 3 = %v, want %v", pages, want)
	}
	if got, _ := s.ListAudit(ctx, "", 10); !reflect.DeepEqual(actions(got), []string{"no workspace"}) {
		t.Errorf("ListAudit of no workspace = %v", actions(got))
	}
}

type usageRow struct {
	offset time.Duration
	ws     string
	key    string
	status int
	source string
}

func recordUsage(t *testing.T, s Store, rows []usageRow) {
	t.Helper()
	for _, r := range rows {
		must(t, s.RecordUsage(t.Context(), assistant.UsageRecord{At: day.Add(r.offset), Workspace: r.ws, KeyID: r.key,
			Endpoint: "POST /api/v1/chat", Mode: "advisor", Status: r.status, Source: r.source, Latency: 1500 * time.Microsecond}))
	}
}

func testUsage(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	recordUsage(t, s, []usageRow{
		{time.Hour, "a", "k1", 200, "web"}, {2 * time.Hour, "a", "k1", 201, "web"}, {3 * time.Hour, "a", "k1", 429, "web"},
		{4 * time.Hour, "a", "k1", 200, ""}, {26 * time.Hour, "a", "k1", 502, "app"}, {time.Hour, "a", "k2", 200, "web"},
		{-time.Millisecond, "a", "k1", 200, "old"}, {time.Hour, "b", "k1", 200, "web"}, {5 * time.Hour, "a", "k1", 200, "Web"},
	})
	got, err := s.UsageByDay(ctx, "a", "k1", day)
	must(t, err)
	want := []assistant.UsageDay{
		{Day: "2026-03-01", StatusClass: "2xx", Source: "", Requests: 1}, {Day: "2026-03-01", StatusClass: "2xx", Source: "Web", Requests: 1},
		{Day: "2026-03-01", StatusClass: "2xx", Source: "web", Requests: 2}, {Day: "2026-03-01", StatusClass: "4xx", Source: "web", Requests: 1},
		{Day: "2026-03-02", StatusClass: "5xx", Source: "app", Requests: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("UsageByDay(a, k1)\n got %+v\nwant %+v", got, want)
	}
	got, err = s.UsageByDay(ctx, "a", "k1", day.Add(-time.Millisecond)) // since is inclusive
	must(t, err)
	if len(got) != len(want)+1 || got[0] != (assistant.UsageDay{Day: "2026-02-28", StatusClass: "2xx", Source: "old", Requests: 1}) {
		t.Errorf("UsageByDay from the millisecond before = %+v", got)
	}
	got, err = s.WorkspaceUsageByDay(ctx, "a", day)
	must(t, err)
	want[2].Requests = 3 // k2's request
	if !reflect.DeepEqual(got, want) {
		t.Errorf("WorkspaceUsageByDay(a)\n got %+v\nwant %+v", got, want)
	}
	if got, err := s.UsageByDay(ctx, "a", "k9", day); err != nil || len(got) != 0 {
		t.Errorf("UsageByDay of a key without usage = %v, %v", got, err)
	}
}

func testRecordTurn(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	okrs, kaizen := tok(assistant.Framework, "okrs"), tok(assistant.Framework, "kaizen")
	row := assistant.UsageRecord{At: day, Workspace: "a", KeyID: "k1", Endpoint: "POST /api/v1/chat", Mode: "advisor", Source: "web", Status: 200, Latency: time.Second}
	must(t, s.RecordCitations(ctx, cite("r0", day, kaizen)))
	must(t, s.RecordTurn(ctx, row, append(cite("r1", day, okrs, kaizen, okrs), cite("r0", day, kaizen)...)))
	usage := func() int {
		days, err := s.UsageByDay(ctx, "a", "k1", day.Add(-time.Hour))
		must(t, err)
		n := 0
		for _, d := range days {
			n += d.Requests
		}
		return n
	}
	board := func() []assistant.LeaderboardEntry { return leaderboard(t, s, day, day.Add(time.Hour), 10) }
	want := []assistant.LeaderboardEntry{{Token: kaizen, Citations: 2}, {Token: okrs, Citations: 1}}
	if got := board(); usage() != 1 || !reflect.DeepEqual(got, want) {
		t.Errorf("after a turn: %d usage rows, leaderboard %+v; want 1 and %+v", usage(), got, want)
	}
	must(t, s.RecordTurn(ctx, row, nil))
	if usage() != 2 {
		t.Errorf("a turn without citations: %d usage rows, want 2", usage())
	}
	// Both or neither: a citation the store refuses leaves no usage row.
	err := s.RecordTurn(ctx, row, append(cite("r2", day, okrs), cite("r2", day, tok("video", "x"))...))
	wantCode(t, "a turn citing an invalid token", err, assistant.EInvalid)
	if got := board(); usage() != 2 || !reflect.DeepEqual(got, want) {
		t.Errorf("a failed turn left %d usage rows (want 2) and leaderboard %+v", usage(), got)
	}
}

func testSetupToken(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	h1, h2 := sha256.Sum256([]byte("one")), sha256.Sum256([]byte("two"))
	check := func(what string, h [32]byte, at time.Time, want bool) {
		t.Helper()
		if ok, err := s.CheckSetupToken(ctx, h, at); err != nil || ok != want {
			t.Errorf("%s: CheckSetupToken = %v, %v; want %v", what, ok, err, want)
		}
	}
	check("no token", h1, day, false)
	must(t, s.SetSetupToken(ctx, h1, day.Add(time.Hour)))
	check("valid", h1, day, true)
	check("valid, checked again", h1, day, true)
	check("another hash", h2, day, false)
	check("at the expiry", h1, day.Add(time.Hour), false)
	if ok, err := s.ConsumeSetupToken(ctx, h1, day.Add(time.Hour)); err != nil || ok {
		t.Errorf("consuming an expired token = %v, %v", ok, err)
	}
	// A new token replaces the old one.
	must(t, s.SetSetupToken(ctx, h2, day.Add(time.Hour)))
	check("the replaced token", h1, day, false)
	if ok, err := s.ConsumeSetupToken(ctx, h2, day.Add(time.Hour-time.Millisecond)); err != nil || !ok {
		t.Errorf("consuming a valid token = %v, %v", ok, err)
	}
	if ok, err := s.ConsumeSetupToken(ctx, h2, day); err != nil || ok {
		t.Errorf("consuming a token twice = %v, %v", ok, err)
	}
	check("a consumed token", h2, day, false)
}
