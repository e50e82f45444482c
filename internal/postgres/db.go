// Package postgres is the storage of the assistant service for deployments
// of several instances: the same store interfaces as internal/sqlite (the
// knowledge store, citation events, workspaces, users, keys, the audit log,
// usage rows), on PostgreSQL through a pgx connection pool. Its schema lives
// in migrations/, numbered like SQLite's, applied at open under an advisory
// lock so that instances starting together migrate once. Admin sessions live
// in its sessions table (github.com/alexedwards/scs/pgxstore).
//
// Ranking is not here: retrieval runs over AllEntities in memory, kept
// fresh by KnowledgeVersion, identically for every store.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/constraintlab/assistant/internal/assistant"
)

//go:embed migrations/*.sql
var migrations embed.FS

// DB is the PostgreSQL store. It implements every store interface of the
// domain but retrieval, as the checks below say at compile time.
type DB struct {
	pool *pgxpool.Pool
	now  func() time.Time
	// knowledgeLock is the advisory lock that serialises writes of the
	// entities across instances (one per database and schema).
	knowledgeLock int64
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

// Open connects to the database at url (postgres:// or postgresql://, any
// parameter pgx understands; search_path=S selects the schema, which must
// exist) and applies the pending migrations. now is the clock used for
// bookkeeping timestamps.
func Open(ctx context.Context, url string, now func() time.Time) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's parse errors never repeat the password.
		return nil, fmt.Errorf("ASSISTANT_DATABASE_URL is not a valid PostgreSQL URL: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	where := fmt.Sprintf("PostgreSQL at %s:%d (database %q)", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)
	var database string
	var schema *string
	if err := pool.QueryRow(ctx, `SELECT current_database(), current_schema()`).Scan(&database, &schema); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connecting to %s: %w", where, err)
	}
	if schema == nil {
		pool.Close()
		return nil, fmt.Errorf("connecting to %s: no schema of the search_path exists; create it first", where)
	}
	s := &DB{pool: pool, now: now, knowledgeLock: lockID("knowledge", database, *schema)}
	if _, err := s.migrate(ctx, lockID("migrations", database, *schema)); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// lockID names an advisory lock of this service in one database and
// schema: instances sharing a schema share the lock, other schemas (other
// deployments, parallel tests) do not wait for it.
func lockID(purpose, database, schema string) int64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "github.com/constraintlab/assistant %s\x00%s\x00%s", purpose, database, schema)
	return int64(h.Sum64())
}

// migrate applies the pending migrations under a session-level advisory
// lock (goose's PostgreSQL session locker), so that instances starting at
// once wait for each other and each migration runs once. It returns the
// names of the migrations it applied.
func (s *DB) migrate(ctx context.Context, id int64) ([]string, error) {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return nil, err
	}
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(id), lock.WithLockTimeout(1, 300))
	if err != nil {
		return nil, err
	}
	db := stdlib.OpenDBFromPool(s.pool)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, sub, goose.WithSessionLocker(locker))
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

// Close closes the connection pool.
func (s *DB) Close() error {
	s.pool.Close()
	return nil
}

// Ping checks that the database answers a query.
func (s *DB) Ping(ctx context.Context) error {
	var one int
	if err := s.pool.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		return &assistant.Error{Code: assistant.EUnavailable, Message: "The database is not reachable.", Err: err}
	}
	return nil
}

// querier is what a write needs of the pool or of one connection.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Begin(ctx context.Context) (pgx.Tx, error)
}

// retryWrite runs write on the pool and, when it failed because its
// connection died (assistant.ConnectionLost: the server restarted, failed
// over, or terminated the backend), once more on a connection that has
// just answered a ping. The pool drops a dead connection when it is
// released, but may still hold other dead ones idle; liveConn skips them.
//
// A connection that died during the commit leaves the outcome unknown:
// the retry may then store the write a second time (citation events are
// idempotent; a usage row may be doubled), which is preferred to losing
// the row of a turn the caller has been answered.
func (s *DB) retryWrite(ctx context.Context, write func(q querier) error) error {
	err := write(s.pool)
	if err == nil || !assistant.ConnectionLost(err) {
		return err
	}
	conn, cerr := s.liveConn(ctx)
	if cerr != nil {
		return errors.Join(err, cerr)
	}
	defer conn.Release()
	return write(conn)
}

// liveConn acquires a pooled connection that answers a ping, closing the
// dead ones it meets (at most as many as the pool holds, plus a new one).
func (s *DB) liveConn(ctx context.Context) (*pgxpool.Conn, error) {
	var lastErr error
	for range s.pool.Config().MaxConns + 1 {
		conn, err := s.pool.Acquire(ctx)
		if err != nil {
			return nil, err
		}
		if lastErr = conn.Ping(ctx); lastErr == nil {
			return conn, nil
		}
		conn.Conn().Close(ctx) // the pool destroys a closed connection on release
		conn.Release()
	}
	return nil, lastErr
}

// Pool exposes the connection pool for the admin sessions' store
// (pgxstore), which keeps its rows in this database's sessions table.
func (s *DB) Pool() *pgxpool.Pool { return s.pool }

// PostgreSQL error codes the store turns into domain errors.
const (
	uniqueViolation     = "23505"
	foreignKeyViolation = "23503"
)

func pgCode(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

// ts is how the store writes a time: in UTC, to the millisecond, like the
// SQLite store, so that both read back the same instant.
func ts(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

func nullTS(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := ts(*t)
	return &v
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := t.UTC()
	return &v
}

// DeleteExpiredSessions deletes the admin sessions that have expired (the
// sessions table belongs to scs's pgxstore, which reads it).
func (s *DB) DeleteExpiredSessions(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM sessions WHERE expiry < current_timestamp`)
	return err
}
