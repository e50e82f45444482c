package postgres_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/postgres"
	"github.com/constraintlab/assistant/internal/postgres/pgtest"
	"github.com/constraintlab/assistant/internal/storetest"
)

func clock() time.Time { return time.Unix(1_700_000_000, 0) }

func open(t *testing.T, url string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(t.Context(), url, clock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestConformance runs the suite every store passes, each test in a schema
// of its own.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store { return open(t, pgtest.URL(t)) })
}

// TestConcurrentOpenMigratesOnce starts several instances at once on a
// fresh schema: every open succeeds, and each migration is applied once
// (the advisory lock serialises them).
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	url := pgtest.URL(t)
	const n = 6
	dbs := make([]*postgres.DB, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { dbs[i], errs[i] = postgres.Open(context.Background(), url, clock) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("open %d: %v", i, errs[i])
		}
		t.Cleanup(func() { dbs[i].Close() })
	}
	rows, err := dbs[0].Pool().Query(t.Context(), `SELECT version_id, COUNT(*) FROM goose_db_version GROUP BY version_id ORDER BY version_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var versions []int64
	for rows.Next() {
		var v, count int64
		if err := rows.Scan(&v, &count); err != nil {
			t.Fatal(err)
		}
		if count != 1 {
			t.Errorf("migration %d recorded %d times", v, count)
		}
		versions = append(versions, v)
	}
	// goose's version 0, then every migration file's number, once each.
	want := []int64{0}
	files, err := os.ReadDir("migrations")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if n, err := strconv.ParseInt(strings.SplitN(f.Name(), "_", 2)[0], 10, 64); err == nil {
			want = append(want, n)
		}
	}
	if !slices.Equal(versions, want) {
		t.Errorf("applied versions %v, want %v", versions, want)
	}
	for i, db := range dbs {
		if err := db.Ping(t.Context()); err != nil {
			t.Errorf("store %d: %v", i, err)
		}
	}
}

func TestDeleteExpiredSessions(t *testing.T) {
	db := open(t, pgtest.URL(t))
	ctx := t.Context()
	for token, expiry := range map[string]string{"old": "now() - interval '1 hour'", "live": "now() + interval '1 hour'"} {
		if _, err := db.Pool().Exec(ctx, `INSERT INTO sessions (token, data, expiry) VALUES ($1, '\x00', `+expiry+`)`, token); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.DeleteExpiredSessions(ctx); err != nil {
		t.Fatal(err)
	}
	var tokens []string
	rows, err := db.Pool().Query(ctx, `SELECT token FROM sessions ORDER BY token`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var tok string
		rows.Scan(&tok)
		tokens = append(tokens, tok)
	}
	if len(tokens) != 1 || tokens[0] != "live" {
		t.Errorf("sessions left: %v, want only the live one", tokens)
	}
}

// TestWritesRetryOnAFreshConnection kills the store's backends (as a
// restart or failover does, without touching the shared server) right
// before each write: every write still succeeds, once, on a fresh
// connection; a read on a killed connection is EUnavailable.
func TestWritesRetryOnAFreshConnection(t *testing.T) {
	ctx := t.Context()
	app := fmt.Sprintf("assistant_retry_%d", time.Now().UnixNano())
	db := open(t, pgtest.URL(t)+"&pool_max_conns=2&application_name="+app)
	killer, err := pgx.Connect(ctx, os.Getenv(pgtest.EnvURL))
	if err != nil {
		t.Fatal(err)
	}
	defer killer.Close(ctx)
	kill := func() int {
		var n int
		if err := killer.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n); err != nil {
			t.Fatal(err)
		}
		// pg_terminate_backend only signals: wait until the backends are gone.
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			var left int
			killer.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&left)
			if left == 0 {
				break
			}
		}
		return n
	}
	if err := db.EnsureWorkspace(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	tok := assistant.Token{Type: "framework", Slug: "theory-of-constraints"}
	const turns = 5
	for i := range turns {
		if n := kill(); n == 0 {
			t.Fatalf("turn %d: no backend of the store to kill", i)
		}
		row := assistant.UsageRecord{At: clock(), Workspace: "acme", Endpoint: "POST /api/v1/chat", Status: 200}
		ev := []assistant.CitationEvent{{ResponseID: fmt.Sprintf("resp_%d", i), Workspace: "acme", Source: "test", Token: tok, At: clock()}}
		if err := db.RecordTurn(ctx, row, ev); err != nil {
			t.Fatalf("turn %d after its connection was killed: %v", i, err)
		}
		if err := db.RecordUsage(ctx, row); err != nil {
			t.Fatalf("usage row %d after the turn: %v", i, err)
		}
	}
	var rows, events int
	db.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM usage), (SELECT count(*) FROM citation_events)`).Scan(&rows, &events)
	if rows != 2*turns || events != turns {
		t.Errorf("%d usage rows and %d citation events, want %d and %d", rows, events, 2*turns, turns)
	}
	kill()
	if _, err := db.Leaderboard(ctx, clock().Add(-time.Hour), clock().Add(time.Hour), 10); err != nil && assistant.ErrorCode(err) != assistant.EUnavailable {
		t.Errorf("a read on a killed connection: code %q (%v), want %q", assistant.ErrorCode(err), err, assistant.EUnavailable)
	}
}
