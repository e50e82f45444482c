package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
)

// TestTurnsPastThePreparedStatements records turns with 1 to 90 citation
// events each, more distinct INSERTs than stmtCache keeps: every turn is
// stored whole, whether its statements ran prepared or as text.
func TestTurnsPastThePreparedStatements(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "stmts.db"), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	at := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	const turns = 90
	want := 0
	for i := 1; i <= turns; i++ {
		id := fmt.Sprintf("resp_%03d", i)
		var cites []assistant.CitationEvent
		for j := range i {
			cites = append(cites, assistant.CitationEvent{ResponseID: id, Workspace: "default", Source: "chat",
				Token: assistant.Token{Type: assistant.Framework, Slug: fmt.Sprintf("f%d", j)}, At: at})
		}
		want += i
		if err := db.RecordTurn(ctx, assistant.UsageRecord{At: at, Workspace: "default", KeyID: "key000000001",
			Endpoint: "POST /api/v1/chat", Status: 200, Latency: time.Millisecond}, cites); err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
	}
	if n := len(db.stmts.stmts); n != maxPreparedStatements {
		t.Errorf("%d statements prepared, want the bound %d", n, maxPreparedStatements)
	}
	var usage, citations int
	if err := db.db.QueryRow(`SELECT COUNT(*) FROM usage`).Scan(&usage); err != nil {
		t.Fatal(err)
	}
	if err := db.db.QueryRow(`SELECT COUNT(*) FROM citation_events`).Scan(&citations); err != nil {
		t.Fatal(err)
	}
	if usage != turns || citations != want {
		t.Errorf("stored %d usage rows and %d citation events, want %d and %d", usage, citations, turns, want)
	}
}

// TestReviewSettingReadBeforeAChangeIsNotKept: a setting read before a
// change is not remembered after it, and a change is seen by the next read.
func TestReviewSettingReadBeforeAChangeIsNotKept(t *testing.T) {
	var c reviewSettingCache
	on := assistant.ReviewSetting{Enabled: true, RetentionDays: 7}
	gen := c.generation()
	c.forget() // a write lands while the read is under way
	c.put("a", assistant.ReviewSetting{}, gen)
	if _, ok := c.get("a"); ok {
		t.Fatal("a setting read before a write was remembered")
	}
	c.put("a", on, c.generation())
	if got, ok := c.get("a"); !ok || got != on {
		t.Fatalf("get = %+v, %v; want %+v", got, ok, on)
	}
	c.forget()
	if _, ok := c.get("a"); ok {
		t.Fatal("a setting is remembered after a write")
	}

	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "settings.db"), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.EnsureWorkspace(ctx, "default"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []assistant.ReviewSetting{on, {RetentionDays: 7}, {Enabled: true, RetentionDays: 30}} {
		if _, err := db.ReviewSetting(ctx, "default"); err != nil { // remembered
			t.Fatal(err)
		}
		if err := db.SetReviewSetting(ctx, "default", want, time.Now()); err != nil {
			t.Fatal(err)
		}
		if got, err := db.ReviewSetting(ctx, "default"); err != nil || got != want {
			t.Fatalf("after setting %+v, ReviewSetting = %+v, %v", want, got, err)
		}
	}
}
