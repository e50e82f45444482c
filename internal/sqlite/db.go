// Package sqlite is the embedded storage of the assistant service: the
// knowledge store, citation events and the access records (workspaces,
// users, keys, audit, usage, admin sessions), on one SQLite file in WAL mode (modernc.org/sqlite, pure Go). Its schema lives in
// migrations/, numbered goose files applied at open, each in a transaction.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/constraintlab/assistant/internal/assistant"
)

//go:embed migrations/*.sql
var migrations embed.FS

// DB is the SQLite store. It implements every store interface of the
// domain, as the checks below say at compile time.
type DB struct {
	db    *sql.DB
	now   func() time.Time
	turns turnQueue // RecordTurn's group commit
	stmts stmtCache // prepared statements of the turn writes (stmts.go)
	// settings remembers the workspaces' review settings (review.go).
	settings reviewSettingCache
}

var (
	_ assistant.KnowledgeStore    = (*DB)(nil)
	_ assistant.KnowledgeImporter = (*DB)(nil)
	_ assistant.CitationStore     = (*DB)(nil)
	_ assistant.Pinger            = (*DB)(nil)
	_ assistant.AccessStore       = (*DB)(nil)
	_ assistant.ReviewSettings    = (*DB)(nil)
	_ assistant.ReviewStore       = (*DB)(nil)
	_ assistant.Exporter          = (*DB)(nil)
	_ assistant.Loader            = (*DB)(nil)
)

// Open opens (creating if needed) the database file at path and applies the
// pending migrations. now is the clock used for bookkeeping timestamps.
func Open(ctx context.Context, path string, now func() time.Time) (*DB, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("creating the data directory: %w", err)
		}
	}
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	// Deleted rows are overwritten with zeros, so that the text of a
	// deleted review turn does not stay in free space (review.go).
	q.Add("_pragma", "secure_delete(1)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	s := &DB{db: db, now: now}
	if _, err := s.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Migrate applies the pending migrations and returns their names.
func (s *DB) Migrate(ctx context.Context) ([]string, error) {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return nil, err
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, s.db, sub)
	if err != nil {
		return nil, fmt.Errorf("preparing migrations: %w", err)
	}
	results, err := p.Up(ctx)
	if err != nil {
		return nil, fmt.Errorf("applying migrations: %w", err)
	}
	names := make([]string, len(results))
	for i, r := range results {
		names[i] = r.Source.Path
	}
	return names, nil
}

// Close closes the database.
func (s *DB) Close() error {
	s.stmts.close()
	return s.db.Close()
}

// Ping checks that the database answers a query.
func (s *DB) Ping(ctx context.Context) error {
	var one int
	if err := s.db.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		return &assistant.Error{Code: assistant.EUnavailable, Message: "The database is not reachable.", Err: err}
	}
	return nil
}

// SQL exposes the underlying handle to tests in this module.
func (s *DB) SQL() *sql.DB { return s.db }
