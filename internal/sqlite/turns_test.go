package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
)

// TestConcurrentTurnsAreAllStored records many turns at once, so that most
// share a transaction (the group commit), one of them carrying an invalid
// token: every valid turn must be stored whole once its call returns, and
// the invalid one fails alone, storing nothing.
func TestConcurrentTurnsAreAllStored(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "turns.db"))
	at := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	toc := assistant.Token{Type: assistant.Framework, Slug: "theory-of-constraints"}
	okrs := assistant.Token{Type: assistant.Framework, Slug: "okrs"}
	const turns, bad = 200, 57
	errs := make([]error, turns)
	var wg sync.WaitGroup
	for i := range turns {
		wg.Go(func() {
			id := fmt.Sprintf("resp_%03d", i)
			cites := []assistant.CitationEvent{
				{ResponseID: id, Workspace: "default", Source: "chat", Token: toc, At: at},
				{ResponseID: id, Workspace: "default", Source: "chat", Token: okrs, At: at},
				{ResponseID: id, Workspace: "default", Source: "chat", Token: toc, At: at}, // once per response
			}
			if i == bad {
				cites = append(cites, assistant.CitationEvent{ResponseID: id, Workspace: "default", Source: "chat",
					Token: assistant.Token{Type: "video", Slug: "x"}, At: at})
			}
			errs[i] = db.RecordTurn(ctx, assistant.UsageRecord{At: at, Workspace: "default", KeyID: "key000000001",
				Endpoint: "POST /api/v1/chat", Status: 200, Latency: time.Millisecond}, cites)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if (i == bad) != (err != nil) {
			t.Errorf("turn %d: err = %v", i, err)
		}
	}
	var usage, citations, badRows int
	sqlDB := db.SQL()
	if err := sqlDB.QueryRow(`SELECT COUNT(*) FROM usage`).Scan(&usage); err != nil {
		t.Fatal(err)
	}
	if err := sqlDB.QueryRow(`SELECT COUNT(*) FROM citation_events`).Scan(&citations); err != nil {
		t.Fatal(err)
	}
	if err := sqlDB.QueryRow(`SELECT COUNT(*) FROM citation_events WHERE response_id = ?`, fmt.Sprintf("resp_%03d", bad)).Scan(&badRows); err != nil {
		t.Fatal(err)
	}
	if usage != turns-1 || citations != 2*(turns-1) || badRows != 0 {
		t.Errorf("stored %d usage rows and %d citation events (%d of the invalid turn), want %d, %d and 0",
			usage, citations, badRows, turns-1, 2*(turns-1))
	}
	board, err := db.Leaderboard(ctx, at.Add(-time.Hour), at.Add(time.Hour), 10)
	if err != nil || len(board) != 2 || board[0].Citations != turns-1 || board[1].Citations != turns-1 {
		t.Errorf("leaderboard = %+v, %v", board, err)
	}
}
