package postgres

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/telemetry"
)

// The access store: workspaces, users, keys, audit log, usage rows and the
// setup token.

// EnsureWorkspace implements assistant.AccessStore.
func (s *DB) EnsureWorkspace(ctx context.Context, id string) error {
	if !assistant.ValidWorkspaceID(id) {
		return assistant.Errorf(assistant.EInvalid, "%q is not a valid workspace id (lowercase letters, digits, - and _; at most 63 characters)", id)
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO workspaces (id, created_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`, id, ts(s.now()))
	return err
}

// WorkspaceExists reports whether the workspace exists.
func (s *DB) WorkspaceExists(ctx context.Context, id string) (bool, error) {
	var ok bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM workspaces WHERE id = $1)`, id).Scan(&ok)
	return ok, err
}

const keyColumns = `id, workspace, name, hash, created_at, created_by, expires_at, revoked_at, last_used_at, rate_limit`

func scanKey(sc pgx.Row) (assistant.APIKey, error) {
	var k assistant.APIKey
	var hash []byte
	if err := sc.Scan(&k.ID, &k.Workspace, &k.Name, &hash, &k.CreatedAt, &k.CreatedBy, &k.ExpiresAt, &k.RevokedAt, &k.LastUsedAt, &k.RateLimit); err != nil {
		return k, err
	}
	copy(k.Hash[:], hash)
	k.CreatedAt = k.CreatedAt.UTC()
	k.ExpiresAt, k.RevokedAt, k.LastUsedAt = utc(k.ExpiresAt), utc(k.RevokedAt), utc(k.LastUsedAt)
	return k, nil
}

func keyArgs(k assistant.APIKey) []any {
	return []any{k.ID, k.Workspace, k.Name, k.Hash[:], ts(k.CreatedAt), k.CreatedBy, nullTS(k.ExpiresAt), nullTS(k.RevokedAt), nullTS(k.LastUsedAt), k.RateLimit}
}

const insertKey = `INSERT INTO api_keys (` + keyColumns + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`

// CreateKey implements assistant.AccessStore.
func (s *DB) CreateKey(ctx context.Context, k assistant.APIKey) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := createKey(ctx, tx, k); err != nil {
			return err
		}
		_, err := enqueueEvent(ctx, tx, assistant.NewKeyEvent(assistant.EventKeyCreated, k, k.CreatedAt, nil))
		return err
	})
}

func createKey(ctx context.Context, tx pgx.Tx, k assistant.APIKey) error {
	_, err := tx.Exec(ctx, insertKey, keyArgs(k)...)
	switch pgCode(err) {
	case foreignKeyViolation:
		return assistant.Errorf(assistant.ENotFound, "workspace %q does not exist", k.Workspace)
	case uniqueViolation:
		return assistant.Errorf(assistant.EConflict, "a key with id %s already exists", k.ID)
	}
	return err
}

// KeyByID implements assistant.AccessStore.
func (s *DB) KeyByID(ctx context.Context, id string) (assistant.APIKey, error) {
	return s.oneKey(ctx, id, `SELECT `+keyColumns+` FROM api_keys WHERE id = $1`, id)
}

// oneKey runs a query that returns one key row, ENotFound when none.
func (s *DB) oneKey(ctx context.Context, id, query string, args ...any) (assistant.APIKey, error) {
	k, err := scanKey(s.pool.QueryRow(ctx, query, args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return assistant.APIKey{}, assistant.Errorf(assistant.ENotFound, "no key with id %s", id)
	}
	return k, err
}

// ListKeys implements assistant.AccessStore.
func (s *DB) ListKeys(ctx context.Context, workspace string) ([]assistant.APIKey, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE workspace = $1 ORDER BY created_at DESC, id`, workspace)
	if err != nil {
		return nil, err
	}
	return collectRows(rows, func(r pgx.CollectableRow) (assistant.APIKey, error) { return scanKey(r) })
}

// RevokeKey implements assistant.AccessStore.
func (s *DB) RevokeKey(ctx context.Context, workspace, id string, at time.Time) (k assistant.APIKey, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		k, err = revokeKey(ctx, tx, workspace, id, at)
		return err
	})
	return k, err
}

// revokeKey revokes a key in tx, writing key.revoked when it was not
// revoked yet (the row lock orders concurrent revocations).
func revokeKey(ctx context.Context, tx pgx.Tx, workspace, id string, at time.Time) (assistant.APIKey, error) {
	k, err := scanKey(tx.QueryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = $1 AND ($2 = '' OR workspace = $2) FOR UPDATE`, id, workspace))
	if errors.Is(err, pgx.ErrNoRows) {
		return assistant.APIKey{}, assistant.Errorf(assistant.ENotFound, "no key with id %s", id)
	}
	if err != nil || k.RevokedAt != nil {
		return k, err
	}
	at = ts(at)
	if _, err := tx.Exec(ctx, `UPDATE api_keys SET revoked_at = $1 WHERE id = $2`, at, id); err != nil {
		return k, err
	}
	k.RevokedAt = &at
	_, err = enqueueEvent(ctx, tx, assistant.NewKeyEvent(assistant.EventKeyRevoked, k, at, nil))
	return k, err
}

// RollKey implements assistant.AccessStore.
func (s *DB) RollKey(ctx context.Context, workspace, oldID string, newKey assistant.APIKey, oldEnds time.Time) (old assistant.APIKey, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		old, err = scanKey(tx.QueryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = $1 AND workspace = $2 FOR UPDATE`, oldID, workspace))
		if errors.Is(err, pgx.ErrNoRows) {
			return assistant.Errorf(assistant.ENotFound, "no key with id %s", oldID)
		}
		if err != nil {
			return err
		}
		now := newKey.CreatedAt
		if old.Status(now) != "active" {
			return assistant.Errorf(assistant.EConflict, "key %s is not active", oldID)
		}
		if err := createKey(ctx, tx, newKey); err != nil {
			return err
		}
		if _, err := enqueueEvent(ctx, tx, assistant.NewKeyEvent(assistant.EventKeyCreated, newKey, now, nil)); err != nil {
			return err
		}
		if !oldEnds.After(now) {
			old, err = revokeKey(ctx, tx, workspace, oldID, now)
		} else {
			old, err = scanKey(tx.QueryRow(ctx, `UPDATE api_keys SET expires_at = LEAST(COALESCE(expires_at, $1), $1)
				WHERE id = $2 RETURNING `+keyColumns, ts(oldEnds), oldID))
		}
		if err != nil {
			return err
		}
		ev := assistant.NewKeyEvent(assistant.EventKeyRolled, old, now, map[string]any{"replaced_by": assistant.KeyEventData(newKey)})
		_, err = enqueueEvent(ctx, tx, ev)
		return err
	})
	return old, err
}

// ExpireKeyBy implements assistant.AccessStore.
func (s *DB) ExpireKeyBy(ctx context.Context, workspace, id string, at time.Time) (assistant.APIKey, error) {
	return s.oneKey(ctx, id, `UPDATE api_keys SET expires_at = LEAST(COALESCE(expires_at, $1), $1)
		WHERE id = $2 AND workspace = $3 RETURNING `+keyColumns, ts(at), id, workspace)
}

// RevokedSince implements assistant.AccessStore.
func (s *DB) RevokedSince(ctx context.Context, since time.Time) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT id FROM api_keys WHERE revoked_at >= $1`, ts(since))
	if err != nil {
		return nil, err
	}
	return collectRows(rows, pgx.RowTo[string])
}

// TouchKeys implements assistant.AccessStore.
func (s *DB) TouchKeys(ctx context.Context, lastUsed map[string]time.Time) error {
	if len(lastUsed) == 0 {
		return nil
	}
	ids := make([]string, 0, len(lastUsed))
	times := make([]time.Time, 0, len(lastUsed))
	for id, at := range lastUsed {
		ids = append(ids, id)
		times = append(times, ts(at))
	}
	_, err := s.pool.Exec(ctx, `UPDATE api_keys k SET last_used_at = GREATEST(k.last_used_at, t.at)
		FROM unnest($1::text[], $2::timestamptz[]) AS t (id, at) WHERE k.id = t.id`, ids, times)
	return err
}

// CreateUser implements assistant.AccessStore.
func (s *DB) CreateUser(ctx context.Context, u assistant.User) (assistant.User, error) {
	if u.CreatedAt.IsZero() {
		u.CreatedAt = s.now()
	}
	err := s.pool.QueryRow(ctx, `INSERT INTO users (workspace, email, password_hash, created_at) VALUES ($1, $2, $3, $4) RETURNING id`,
		u.Workspace, u.Email, u.PasswordHash, ts(u.CreatedAt)).Scan(&u.ID)
	switch pgCode(err) {
	case uniqueViolation:
		return u, assistant.Errorf(assistant.EConflict, "a user with email %s already exists", u.Email)
	case foreignKeyViolation:
		return u, assistant.Errorf(assistant.ENotFound, "workspace %q does not exist", u.Workspace)
	}
	return u, err
}

// UserByEmail implements assistant.AccessStore.
func (s *DB) UserByEmail(ctx context.Context, email string) (assistant.User, error) {
	var u assistant.User
	err := s.pool.QueryRow(ctx, `SELECT id, workspace, email, password_hash, created_at FROM users WHERE lower(email) = lower($1::text COLLATE "C")`, email).
		Scan(&u.ID, &u.Workspace, &u.Email, &u.PasswordHash, &u.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return u, assistant.Errorf(assistant.ENotFound, "no user with that email")
	}
	u.CreatedAt = u.CreatedAt.UTC()
	return u, err
}

// SetPasswordHash implements assistant.AccessStore.
func (s *DB) SetPasswordHash(ctx context.Context, email, hash string) error {
	tag, err := s.pool.Exec(ctx, `UPDATE users SET password_hash = $1 WHERE lower(email) = lower($2::text COLLATE "C")`, hash, email)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return assistant.Errorf(assistant.ENotFound, "no user with that email")
	}
	return nil
}

// CountUsers implements assistant.AccessStore.
func (s *DB) CountUsers(ctx context.Context) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `SELECT COUNT(*) FROM users`).Scan(&n)
	return n, err
}

const insertAudit = `INSERT INTO audit_log (at, workspace, actor, action, target, ip, detail) VALUES ($1, $2, $3, $4, $5, $6, $7)`

// RecordAudit implements assistant.AccessStore.
func (s *DB) RecordAudit(ctx context.Context, e assistant.AuditEvent) error {
	_, err := s.pool.Exec(ctx, insertAudit, ts(e.At), e.Workspace, e.Actor, e.Action, e.Target, e.IP, e.Detail)
	return err
}

// ListAudit implements assistant.AccessStore.
func (s *DB) ListAudit(ctx context.Context, workspace string, limit int) ([]assistant.AuditEvent, error) {
	return s.ListAuditPage(ctx, workspace, 0, limit)
}

func scanAudit(r pgx.CollectableRow) (assistant.AuditEvent, error) {
	var e assistant.AuditEvent
	err := r.Scan(&e.At, &e.Workspace, &e.Actor, &e.Action, &e.Target, &e.IP, &e.Detail)
	e.At = e.At.UTC()
	return e, err
}

// ListAuditPage implements assistant.AccessStore. A negative limit means
// no limit, and a negative offset none, as on SQLite.
func (s *DB) ListAuditPage(ctx context.Context, workspace string, offset, limit int) ([]assistant.AuditEvent, error) {
	rows, err := s.pool.Query(ctx, `SELECT at, workspace, actor, action, target, ip, detail FROM audit_log
		WHERE workspace = $1 ORDER BY at DESC, id DESC LIMIT $2 OFFSET $3`, workspace, noLimit(limit), max(offset, 0))
	if err != nil {
		return nil, err
	}
	return collectRows(rows, scanAudit)
}

// noLimit turns a negative limit into NULL, which is LIMIT ALL.
func noLimit(limit int) *int {
	if limit < 0 {
		return nil
	}
	return &limit
}

const insertUsageRow = `INSERT INTO usage (at, workspace, key_id, endpoint, mode, source, status, latency_ms)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`

func usageArgs(u assistant.UsageRecord) []any {
	return []any{ts(u.At), u.Workspace, u.KeyID, u.Endpoint, u.Mode, u.Source, u.Status, float64(u.Latency) / float64(time.Millisecond)}
}

// RecordUsage implements assistant.AccessStore. A write whose connection
// died is tried once more on a live one (retryWrite).
func (s *DB) RecordUsage(ctx context.Context, u assistant.UsageRecord) error {
	return s.retryWrite(ctx, func(q querier) error {
		_, err := q.Exec(ctx, insertUsageRow, usageArgs(u)...)
		return err
	})
}

// RecordTurn implements assistant.AccessStore: a chat turn's usage row and
// its citation events in one transaction (D5), either both or neither. A
// write whose connection died is tried once more on a live one
// (retryWrite).
//
// In a traced request, it is a span "record turn" with the citation
// events it writes.
func (s *DB) RecordTurn(ctx context.Context, u assistant.UsageRecord, citations []assistant.CitationEvent) (err error) {
	if telemetry.Tracing(ctx) {
		var span trace.Span
		ctx, span = telemetry.Start(ctx, "record turn", trace.SpanKindClient)
		span.SetAttributes(semconv.DBSystemNamePostgreSQL, attribute.Int("assistant.citation_events", len(citations)))
		defer func() { telemetry.Fail(span, err, ""); span.End() }()
	}
	return s.retryWrite(ctx, func(q querier) error {
		return pgx.BeginFunc(ctx, q, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, insertUsageRow, usageArgs(u)...); err != nil {
				return err
			}
			return insertCitations(ctx, tx, citations)
		})
	})
}

// usageByDay groups usage rows by UTC day, status class and source;
// usageWhere narrows them to a workspace, or one of its keys.
const (
	usageByDay = `SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day,
			(status / 100)::text || 'xx' AS class, source, COUNT(*)
		FROM usage WHERE `
	usageGroups = ` GROUP BY day, class, source ORDER BY day, class, source`
)

func (s *DB) usage(ctx context.Context, where string, args ...any) ([]assistant.UsageDay, error) {
	rows, err := s.pool.Query(ctx, usageByDay+where+usageGroups, args...)
	if err != nil {
		return nil, err
	}
	return collectRows(rows, func(r pgx.CollectableRow) (assistant.UsageDay, error) {
		var d assistant.UsageDay
		err := r.Scan(&d.Day, &d.StatusClass, &d.Source, &d.Requests)
		return d, err
	})
}

// UsageByDay implements assistant.AccessStore.
func (s *DB) UsageByDay(ctx context.Context, workspace, keyID string, since time.Time) ([]assistant.UsageDay, error) {
	return s.usage(ctx, `workspace = $1 AND key_id = $2 AND at >= $3`, workspace, keyID, ts(since))
}

// WorkspaceUsageByDay implements assistant.AccessStore.
func (s *DB) WorkspaceUsageByDay(ctx context.Context, workspace string, since time.Time) ([]assistant.UsageDay, error) {
	return s.usage(ctx, `workspace = $1 AND at >= $2`, workspace, ts(since))
}

// SetSetupToken implements assistant.AccessStore.
func (s *DB) SetSetupToken(ctx context.Context, hash [32]byte, expires time.Time) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM setup_tokens`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO setup_tokens (hash, expires_at) VALUES ($1, $2)`, hash[:], ts(expires))
		return err
	})
}

// ConsumeSetupToken implements assistant.AccessStore.
func (s *DB) ConsumeSetupToken(ctx context.Context, hash [32]byte, now time.Time) (bool, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM setup_tokens WHERE hash = $1 AND expires_at > $2`, hash[:], ts(now))
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

// CheckSetupToken implements assistant.AccessStore.
func (s *DB) CheckSetupToken(ctx context.Context, hash [32]byte, now time.Time) (bool, error) {
	var ok bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM setup_tokens WHERE hash = $1 AND expires_at > $2)`, hash[:], ts(now)).Scan(&ok)
	return ok, err
}

// fromMillis turns a stored latency in milliseconds back into a duration.
func fromMillis(v float64) time.Duration {
	return time.Duration(math.Round(v * float64(time.Millisecond)))
}

// collectRows is pgx.CollectRows returning nil rather than an empty slice
// when there are no rows, as the SQLite store does.
func collectRows[T any](rows pgx.Rows, fn pgx.RowToFunc[T]) ([]T, error) {
	out, err := pgx.CollectRows(rows, fn)
	if len(out) == 0 {
		return nil, err
	}
	return out, err
}
