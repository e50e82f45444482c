package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

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
	if len(versions) != 5 || versions[4] != 4 {
		t.Errorf("applied versions %v, want 0 1 2 3 4", versions)
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
