package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/knowledge"
	"github.com/constraintlab/assistant/internal/sqlite"
)

func open(t testing.TB, path string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), path, func() time.Time { return time.Unix(1_700_000_000, 0) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func entity(slug, title string) assistant.Entity {
	return assistant.Entity{Type: assistant.Framework, Slug: slug, Title: title, Summary: "A summary about " + title,
		Tags: []string{"t"}, Archetypes: []string{"activation"}}
}

func TestSyncIsIdempotentAndImportedWins(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a.db")
	db := open(t, path)

	res, err := db.SyncEntities(ctx, assistant.OriginEmbedded, []assistant.Entity{entity("one", "One"), entity("two", "Two")})
	if err != nil || res.Inserted != 2 {
		t.Fatalf("first sync: %+v %v", res, err)
	}
	res, err = db.SyncEntities(ctx, assistant.OriginEmbedded, []assistant.Entity{entity("one", "One"), entity("two", "Two")})
	if err != nil || res.Unchanged != 2 || res.Inserted+res.Updated+res.Deleted != 0 {
		t.Fatalf("second sync should change nothing: %+v %v", res, err)
	}
	// An imported entity replaces the embedded one with its token...
	if _, err := db.SyncEntities(ctx, assistant.OriginImported, []assistant.Entity{entity("two", "Two, imported")}); err != nil {
		t.Fatal(err)
	}
	// ...and survives the next embedded sync (a restart), while an entity
	// dropped from the embedded corpus is deleted.
	res, err = db.SyncEntities(ctx, assistant.OriginEmbedded, []assistant.Entity{entity("two", "Two")})
	if err != nil || res.Deleted != 1 {
		t.Fatalf("third sync: %+v %v", res, err)
	}
	db.Close()
	db = open(t, path)
	got, err := db.Entities(ctx, []assistant.Token{{Type: assistant.Framework, Slug: "one"}, {Type: assistant.Framework, Slug: "two"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got[assistant.Token{Type: assistant.Framework, Slug: "one"}]; ok {
		t.Errorf("entity removed from the corpus is still stored")
	}
	if two := got[assistant.Token{Type: assistant.Framework, Slug: "two"}]; two.Title != "Two, imported" || two.Origin != assistant.OriginImported {
		t.Errorf("imported entity did not win: %+v", two)
	}
	st, _ := db.KnowledgeStats(ctx)
	if st.Total != 1 || st.Frameworks != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestEmbeddedCorpusRoundTrips(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "b.db"))
	if _, err := knowledge.LoadEmbedded(ctx, db); err != nil {
		t.Fatal(err)
	}
	files, _ := knowledge.Embedded()
	stored, err := db.AllEntities(ctx)
	if err != nil || len(stored) != len(files) {
		t.Fatalf("stored %d of %d: %v", len(stored), len(files), err)
	}
	byToken := map[assistant.Token]assistant.Entity{}
	for _, e := range stored {
		byToken[e.Token()] = e
	}
	for _, f := range files {
		e := byToken[f.Entity.Token()]
		if e.Title != f.Entity.Title || e.Summary != f.Entity.Summary || len(e.KeyIdeas) != len(f.Entity.KeyIdeas) ||
			(e.Year == nil) != (f.Entity.Year == nil) || e.URL != f.Entity.URL || len(e.Related) != len(f.Entity.Related) {
			t.Errorf("%s did not round-trip", f.Name)
		}
	}
	res, err := knowledge.LoadEmbedded(ctx, db)
	if err != nil || res.Unchanged != len(files) {
		t.Errorf("reload is not idempotent: %+v %v", res, err)
	}
}

func TestCitationsCountOncePerResponse(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "c.db"))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tok := assistant.Token{Type: assistant.Framework, Slug: "okrs"}
	ev := assistant.CitationEvent{ResponseID: "r1", Token: tok, At: now}
	if err := db.RecordCitations(ctx, []assistant.CitationEvent{ev, ev}); err != nil {
		t.Fatal(err)
	}
	if err := db.RecordCitations(ctx, []assistant.CitationEvent{ev}); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Leaderboard(ctx, now.Add(-time.Hour), now.Add(time.Hour), 10)
	if err != nil || len(rows) != 1 || rows[0].Citations != 1 {
		t.Errorf("leaderboard %+v %v", rows, err)
	}
	// The window is half-open: since <= at < until.
	if rows, _ := db.Leaderboard(ctx, now.Add(-time.Hour), now, 10); len(rows) != 0 {
		t.Errorf("event at until was counted")
	}
	if rows, _ := db.Leaderboard(ctx, now, now.Add(time.Hour), 10); len(rows) != 1 {
		t.Errorf("event at since was not counted")
	}
}

func TestKnowledgeVersionMovesOnlyWithTheEntities(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v.db")
	db := open(t, path)
	version := func() int64 {
		t.Helper()
		v, err := db.KnowledgeVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	v0 := version()
	if _, err := db.SyncEntities(ctx, assistant.OriginEmbedded, []assistant.Entity{entity("one", "One")}); err != nil {
		t.Fatal(err)
	}
	v1 := version()
	if v1 == v0 {
		t.Fatal("an insert did not move the version")
	}
	if _, err := db.SyncEntities(ctx, assistant.OriginEmbedded, []assistant.Entity{entity("one", "One")}); err != nil {
		t.Fatal(err)
	}
	if v := version(); v != v1 {
		t.Fatalf("a sync that changed nothing moved the version from %d to %d", v1, v)
	}
	// Another process writing the same file is seen too.
	other := open(t, path)
	if _, err := other.ImportEntities(ctx, []assistant.Entity{entity("two", "Two")}); err != nil {
		t.Fatal(err)
	}
	if v := version(); v == v1 {
		t.Fatal("an import through another handle did not move the version")
	}
}
