package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
)

// Populate fills s with some of everything a deployment holds: workspaces,
// users, keys (active, expiring, revoked, used), the audit log, usage rows,
// citation events, a setup token, embedded and imported entities, review
// settings (on and off) and kept review turns. It is exported for the
// tests of `assistant migrate`.
func Populate(t *testing.T, s Store) {
	t.Helper()
	ctx := t.Context()
	workspace(t, s, "default", "team-b")
	_, err := s.CreateUser(ctx, assistant.User{Workspace: "default", Email: "Admin@Example.test", PasswordHash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA", CreatedAt: day})
	must(t, err)
	_, err = s.CreateUser(ctx, assistant.User{Workspace: "team-b", Email: "b@example.test", PasswordHash: "$argon2id$b", CreatedAt: day.Add(time.Hour)})
	must(t, err)
	for i, ws := range []string{"default", "default", "team-b", "default"} {
		k := key(fmt.Sprintf("key%09d", i), ws, day.Add(time.Duration(i)*time.Minute))
		switch i {
		case 1:
			k.ExpiresAt = ptr(day.Add(30 * 24 * time.Hour))
		case 2:
			k.RevokedAt = ptr(day.Add(time.Hour))
		case 3:
			k.CreatedBy = "admin@example.test"
			k.RateLimit = 5 // copied with the key
		}
		must(t, s.CreateKey(ctx, k))
	}
	must(t, s.TouchKeys(ctx, map[string]time.Time{"key000000000": day.Add(2 * time.Hour)}))
	for i := range 7 {
		must(t, s.RecordAudit(ctx, audit(day.Add(time.Duration(i%3)*time.Minute), []string{"default", "team-b", ""}[i%3], fmt.Sprint("action-", i))))
	}
	for i := range 25 {
		must(t, s.RecordUsage(ctx, assistant.UsageRecord{At: day.Add(time.Duration(i) * 3 * time.Hour), Workspace: "default",
			KeyID: fmt.Sprintf("key%09d", i%2), Endpoint: "POST /api/v1/chat", Mode: "advisor", Source: []string{"web", "", "app"}[i%3],
			Status: []int{200, 429, 502, 200}[i%4], Latency: time.Duration(i)*time.Millisecond + 123456*time.Nanosecond}))
	}
	okrs, goal := tok(assistant.Framework, "okrs"), tok(assistant.Paper, "the-goal")
	must(t, s.RecordTurn(ctx, assistant.UsageRecord{At: day, Workspace: "default", KeyID: "key000000000", Endpoint: "POST /api/v1/chat", Status: 200},
		cite("r1", day, okrs, goal)))
	must(t, s.RecordCitations(ctx, cite("r2", day.Add(time.Hour), okrs)))
	must(t, s.RecordCitations(ctx, cite("r3", day.Add(2*time.Hour), tok(assistant.Blog, "deleted-since"))))
	must(t, s.SetSetupToken(ctx, sha256.Sum256([]byte("setup")), day.Add(time.Hour)))
	doSync(t, s, assistant.OriginEmbedded, entity(assistant.Framework, "okrs", "OKRs"), entity(assistant.Framework, "kaizen", "Kaizen"))
	_, err = s.ImportEntities(ctx, []assistant.Entity{fullEntity("the-goal"), entity(assistant.Framework, "kaizen", "Kaizen, ours")})
	must(t, err)
	must(t, s.SetReviewSetting(ctx, "default", assistant.ReviewSetting{Enabled: true, RetentionDays: 30}, day))
	must(t, s.SetReviewSetting(ctx, "team-b", assistant.ReviewSetting{RetentionDays: 5}, day.Add(time.Minute)))
	for i := range 3 {
		if ok, err := s.KeepReview(ctx, review("default", fmt.Sprint("rev_", i), day.Add(time.Duration(i%2)*time.Hour))); err != nil || !ok {
			t.Fatalf("KeepReview = %v, %v", ok, err)
		}
	}
}

// exported is everything a store exports, for comparing two stores.
type exported struct {
	Counts     assistant.RowCounts
	Workspaces []assistant.Workspace
	Users      []assistant.User
	Keys       []assistant.APIKey
	Audit      []assistant.AuditEvent
	Usage      []assistant.UsageRecord
	Citations  []assistant.CitationEvent
	Setup      *assistant.SetupToken
	Entities   []assistant.Entity
	Review     []assistant.WorkspaceReviewSetting
	Reviews    []assistant.Review
}

func collect[T any](t *testing.T, seq iter.Seq2[T, error]) []T {
	t.Helper()
	var out []T
	for v, err := range seq {
		must(t, err)
		out = append(out, v)
	}
	return out
}

func export(t *testing.T, s Store) exported {
	t.Helper()
	ctx := t.Context()
	var e exported
	var err error
	e.Counts, err = s.RowCounts(ctx)
	must(t, err)
	e.Workspaces, err = s.ExportWorkspaces(ctx)
	must(t, err)
	e.Users, err = s.ExportUsers(ctx)
	must(t, err)
	e.Keys, err = s.ExportKeys(ctx)
	must(t, err)
	e.Audit = collect(t, s.ExportAudit(ctx))
	e.Usage = collect(t, s.ExportUsage(ctx))
	e.Citations = collect(t, s.ExportCitations(ctx))
	e.Setup, err = s.ExportSetupToken(ctx)
	must(t, err)
	list, err := s.AllEntities(ctx)
	must(t, err)
	for _, en := range list {
		e.Entities = append(e.Entities, norm(en))
	}
	e.Review, err = s.ExportReviewSettings(ctx)
	must(t, err)
	for r, err := range s.ExportReviews(ctx) {
		must(t, err)
		r.Trace, r.Knowledge, r.Verdicts = normJSON(t, r.Trace), normJSON(t, r.Knowledge), normJSON(t, r.Verdicts)
		e.Reviews = append(e.Reviews, r)
	}
	return e
}

// normJSON re-encodes a JSON value, its keys sorted and spaces removed,
// as PostgreSQL's jsonb does not keep the text it was given.
func normJSON(t *testing.T, b []byte) []byte {
	t.Helper()
	var v any
	must(t, json.Unmarshal(b, &v))
	out, err := json.Marshal(v)
	must(t, err)
	return out
}

// Compare fails the test unless the two stores export the same data (the
// users' ids included) and answer the domain's reads the same way. It is
// exported for the tests of `assistant migrate`.
func Compare(t *testing.T, got, want Store) {
	t.Helper()
	g, w := export(t, got), export(t, want)
	gv, wv := reflect.ValueOf(g), reflect.ValueOf(w)
	for i := range gv.NumField() {
		if !reflect.DeepEqual(gv.Field(i).Interface(), wv.Field(i).Interface()) {
			t.Errorf("%s differ:\n got %+v\nwant %+v", gv.Type().Field(i).Name, gv.Field(i).Interface(), wv.Field(i).Interface())
		}
	}
	ctx := t.Context()
	for _, ws := range w.Workspaces {
		for _, read := range []struct {
			name string
			read func(s Store) (any, error)
		}{
			{"ListKeys", func(s Store) (any, error) { return s.ListKeys(ctx, ws.ID) }},
			{"ListAudit", func(s Store) (any, error) { return s.ListAudit(ctx, ws.ID, 100) }},
			{"WorkspaceUsageByDay", func(s Store) (any, error) { return s.WorkspaceUsageByDay(ctx, ws.ID, day.Add(-24*time.Hour)) }},
			{"Reviews", func(s Store) (any, error) { return s.Reviews(ctx, ws.ID, day, 0, 100) }},
			{"ReviewSetting", func(s Store) (any, error) {
				rs, err := s.ReviewSetting(ctx, ws.ID)
				return []assistant.ReviewSetting{rs}, err
			}},
		} {
			a, err := read.read(got)
			must(t, err)
			b, err := read.read(want)
			must(t, err)
			if !sameList(a, b) {
				t.Errorf("%s(%s) differs:\n got %+v\nwant %+v", read.name, ws.ID, a, b)
			}
		}
	}
	a, err := got.Leaderboard(ctx, day.Add(-time.Hour), day.Add(24*time.Hour), 100)
	must(t, err)
	b, err := want.Leaderboard(ctx, day.Add(-time.Hour), day.Add(24*time.Hour), 100)
	must(t, err)
	if !sameList(a, b) {
		t.Errorf("Leaderboard differs:\n got %+v\nwant %+v", a, b)
	}
}

// sameList reports whether two lists hold the same elements; an empty
// list and a nil one are the same.
func sameList(a, b any) bool {
	if reflect.ValueOf(a).Len() == 0 && reflect.ValueOf(b).Len() == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

func testTransfer(t *testing.T, open Opener) {
	src, dst := open(t), open(t)
	ctx := t.Context()
	Populate(t, src)
	// What a first start on the empty target leaves does not count as data.
	doSync(t, dst, assistant.OriginEmbedded, entity(assistant.Framework, "okrs", "OKRs"), entity(assistant.Blog, "only-here", "Only here"))
	must(t, dst.SetSetupToken(ctx, sha256.Sum256([]byte("target's own")), day.Add(time.Hour)))

	written, err := dst.LoadFrom(ctx, src)
	must(t, err)
	counts, err := src.RowCounts(ctx)
	must(t, err)
	if written != counts {
		t.Errorf("LoadFrom wrote %+v, the source holds %+v", written, counts)
	}
	want := assistant.RowCounts{Workspaces: 2, Users: 2, Keys: 4, Audit: 7, Usage: 26, Citations: 4, SetupTokens: 1, Entities: 3, ImportedEntities: 2,
		ReviewSettings: 2, Reviews: 3}
	if counts != want {
		t.Errorf("Populate made %+v, want %+v", counts, want)
	}
	Compare(t, dst, src)

	// The copy is a working store: a new user gets a new id, the keys and
	// users are found, the embedded corpus syncs around the imports.
	u, err := dst.CreateUser(ctx, assistant.User{Workspace: "default", Email: "new@example.test", PasswordHash: "h"})
	must(t, err)
	if u.ID <= 2 {
		t.Errorf("a user created after the copy got id %d, which a copied user has", u.ID)
	}
	if _, err := dst.UserByEmail(ctx, "admin@example.test"); err != nil {
		t.Error(err)
	}
	if k := getKey(t, dst, "key000000002"); k.RevokedAt == nil {
		t.Error("a revoked key is no longer revoked")
	}
	wantResult(t, "embedded sync of the copy", doSync(t, dst, assistant.OriginEmbedded, entity(assistant.Framework, "okrs", "OKRs"),
		entity(assistant.Framework, "kaizen", "Kaizen")), assistant.SyncResult{Unchanged: 2})
}

func testTransferRefuses(t *testing.T, open Opener) {
	src := open(t)
	ctx := t.Context()
	Populate(t, src)
	for name, fill := range map[string]func(s Store){
		"a workspace": func(s Store) { workspace(t, s, "x") },
		"usage":       func(s Store) { recordUsage(t, s, []usageRow{{0, "a", "k", 200, ""}}) },
		"a citation":  func(s Store) { must(t, s.RecordCitations(ctx, cite("r", day, tok(assistant.Framework, "okrs")))) },
		"an audit event": func(s Store) {
			must(t, s.RecordAudit(ctx, audit(day, "", "login.failed")))
		},
		"an imported entity": func(s Store) {
			_, err := s.ImportEntities(ctx, []assistant.Entity{entity(assistant.Paper, "p", "P")})
			must(t, err)
		},
		"a review setting": func(s Store) {
			workspace(t, s, "x")
			must(t, s.SetReviewSetting(ctx, "x", assistant.ReviewSetting{RetentionDays: 1}, day))
		},
		"a copy already": func(s Store) { _, err := s.LoadFrom(ctx, src); must(t, err) },
	} {
		t.Run(name, func(t *testing.T) {
			dst := open(t)
			fill(dst)
			before := export(t, dst)
			_, err := dst.LoadFrom(ctx, src)
			wantCode(t, "LoadFrom into a store holding "+name, err, assistant.EConflict)
			if after := export(t, dst); !reflect.DeepEqual(after, before) {
				t.Errorf("a refused LoadFrom changed the target: %+v", after.Counts)
			}
		})
	}
}

// failingExporter fails in the middle of the usage rows.
type failingExporter struct {
	assistant.Exporter
}

var errSource = errors.New("the source went away")

func (f failingExporter) ExportUsage(ctx context.Context) iter.Seq2[assistant.UsageRecord, error] {
	return func(yield func(assistant.UsageRecord, error) bool) {
		n := 0
		for u, err := range f.Exporter.ExportUsage(ctx) {
			if n++; n == 5 {
				yield(u, errSource)
				return
			}
			if !yield(u, err) {
				return
			}
		}
	}
}

func testTransferFailure(t *testing.T, open Opener) {
	src, dst := open(t), open(t)
	Populate(t, src)
	doSync(t, dst, assistant.OriginEmbedded, entity(assistant.Framework, "okrs", "OKRs"))
	before := export(t, dst)
	_, err := dst.LoadFrom(t.Context(), failingExporter{src})
	if !errors.Is(err, errSource) {
		t.Errorf("LoadFrom from a failing source: %v, want the source's error", err)
	}
	if after := export(t, dst); !reflect.DeepEqual(after, before) {
		t.Errorf("a failed LoadFrom changed the target: %+v", after.Counts)
	}
}
