package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/postgres"
	"github.com/constraintlab/assistant/internal/sqlite"
)

// seedTokens are the entities the seeded citations name, most cited first.
var seedTokens = []string{
	"framework:theory-of-constraints", "framework:drum-buffer-rope", "paper:little-1961-queuing-formula",
	"framework:kanban-method", "paper:kingman-1961-heavy-traffic", "framework:critical-chain",
	"framework:five-whys", "framework:pdca", "framework:jobs-to-be-done", "framework:okrs",
	"framework:net-promoter-score", "framework:value-based-pricing", "paper:harris-1913-eoq",
	"blog:graham-2013-do-things-that-dont-scale", "blog:kelly-2008-1000-true-fans",
}

// seedCitations records n citation events (citationEvents) in the SQLite
// database of dataDir, the service's default store. The leaderboard counts
// only whole minutes before now, so the events of chat turns made just
// before measuring would not show: these are what it ranks.
func seedCitations(ctx context.Context, dataDir string, n int, now time.Time) error {
	if n <= 0 {
		return nil
	}
	db, err := sqlite.Open(ctx, filepath.Join(dataDir, "assistant.db"), time.Now)
	if err != nil {
		return fmt.Errorf("seeding citations: %w", err)
	}
	defer db.Close()
	return recordCitations(ctx, db, n, now)
}

// seedPostgres records the same n citation events in the PostgreSQL
// database (and schema) of url, whose tables must exist.
func seedPostgres(ctx context.Context, url string, n int, now time.Time) error {
	if n <= 0 {
		return nil
	}
	db, err := postgres.Open(ctx, url, time.Now)
	if err != nil {
		return fmt.Errorf("seeding citations: %w", err)
	}
	defer db.Close()
	return recordCitations(ctx, db, n, now)
}

func recordCitations(ctx context.Context, store assistant.CitationStore, n int, now time.Time) error {
	events, err := citationEvents(n, now)
	if err != nil {
		return err
	}
	if err := store.RecordCitations(ctx, events); err != nil {
		return fmt.Errorf("seeding citations: %w", err)
	}
	return nil
}

// citationEvents returns n citation events, three per response, spread
// over the 30 days before now and skewed towards the first tokens (the
// k-th is cited about 1/k as often as the first), the same every run.
func citationEvents(n int, now time.Time) ([]assistant.CitationEvent, error) {
	var cum []float64
	var total float64
	for k := range seedTokens {
		total += 1 / float64(k+1)
		cum = append(cum, total)
	}
	pick := func(r *rand.Rand) string {
		x := r.Float64() * total
		for k, c := range cum {
			if x < c {
				return seedTokens[k]
			}
		}
		return seedTokens[len(seedTokens)-1]
	}
	r := rand.New(rand.NewPCG(1, 2))
	const perResponse, days = 3, 30
	events := make([]assistant.CitationEvent, 0, n)
	for i := 0; len(events) < n; i++ {
		at := now.Add(-time.Duration(r.Int64N(int64(days * 24 * time.Hour))))
		seen := map[string]bool{}
		for range perResponse {
			tok := pick(r)
			if seen[tok] || len(events) == n {
				continue
			}
			seen[tok] = true
			t, err := assistant.ParseToken(tok)
			if err != nil {
				return nil, err
			}
			events = append(events, assistant.CitationEvent{ResponseID: fmt.Sprintf("resp_bench_%d", i), Workspace: "default", Source: "api", Token: t, At: at})
		}
	}
	return events, nil
}
