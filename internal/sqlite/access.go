package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"strings"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
)

// The access store: workspaces, users, keys, audit log, usage rows and the
// setup token. Times are stored as Unix milliseconds (UTC).

func ms(t time.Time) int64 { return t.UnixMilli() }

func nullMS(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMilli(), Valid: true}
}

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

func fromNullMS(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMS(v.Int64)
	return &t
}

// EnsureWorkspace implements assistant.AccessStore.
func (s *DB) EnsureWorkspace(ctx context.Context, id string) error {
	if !assistant.ValidWorkspaceID(id) {
		return assistant.Errorf(assistant.EInvalid, "%q is not a valid workspace id (lowercase letters, digits, - and _; at most 63 characters)", id)
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO workspaces (id, created_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING`, id, ms(s.now()))
	return err
}

// WorkspaceExists reports whether the workspace exists.
func (s *DB) WorkspaceExists(ctx context.Context, id string) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM workspaces WHERE id = ?`, id).Scan(&n)
	return n > 0, err
}

const keyColumns = `id, workspace, name, hash, created_at, created_by, expires_at, revoked_at, last_used_at, rate_limit`

// insertKeySQL inserts a key with keyArgs.
const insertKeySQL = `INSERT INTO api_keys (` + keyColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func keyArgs(k assistant.APIKey) []any {
	return []any{k.ID, k.Workspace, k.Name, k.Hash[:], ms(k.CreatedAt), k.CreatedBy, nullMS(k.ExpiresAt), nullMS(k.RevokedAt), nullMS(k.LastUsedAt), k.RateLimit}
}

func scanKey(sc interface{ Scan(...any) error }) (assistant.APIKey, error) {
	var k assistant.APIKey
	var hash []byte
	var created int64
	var expires, revoked, used sql.NullInt64
	if err := sc.Scan(&k.ID, &k.Workspace, &k.Name, &hash, &created, &k.CreatedBy, &expires, &revoked, &used, &k.RateLimit); err != nil {
		return k, err
	}
	copy(k.Hash[:], hash)
	k.CreatedAt = fromMS(created)
	k.ExpiresAt, k.RevokedAt, k.LastUsedAt = fromNullMS(expires), fromNullMS(revoked), fromNullMS(used)
	return k, nil
}

// CreateKey implements assistant.AccessStore.
func (s *DB) CreateKey(ctx context.Context, k assistant.APIKey) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := insertKey(ctx, tx, k); err != nil {
		return err
	}
	if _, err := enqueueEvent(ctx, tx, assistant.NewKeyEvent(assistant.EventKeyCreated, k, k.CreatedAt, nil)); err != nil {
		return err
	}
	return tx.Commit()
}

func insertKey(ctx context.Context, tx execer, k assistant.APIKey) error {
	_, err := tx.ExecContext(ctx, insertKeySQL, keyArgs(k)...)
	if err != nil && strings.Contains(err.Error(), "FOREIGN KEY") {
		return assistant.Errorf(assistant.ENotFound, "workspace %q does not exist", k.Workspace)
	}
	if err != nil && strings.Contains(err.Error(), "UNIQUE") {
		return assistant.Errorf(assistant.EConflict, "a key with id %s already exists", k.ID)
	}
	return err
}

// KeyByID implements assistant.AccessStore.
func (s *DB) KeyByID(ctx context.Context, id string) (assistant.APIKey, error) {
	k, err := scanKey(s.db.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return k, assistant.Errorf(assistant.ENotFound, "no key with id %s", id)
	}
	return k, err
}

// ListKeys implements assistant.AccessStore.
func (s *DB) ListKeys(ctx context.Context, workspace string) ([]assistant.APIKey, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE workspace = ? ORDER BY created_at DESC, id`, workspace)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []assistant.APIKey
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// RevokeKey implements assistant.AccessStore.
func (s *DB) RevokeKey(ctx context.Context, workspace, id string, at time.Time) (assistant.APIKey, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return assistant.APIKey{}, err
	}
	defer tx.Rollback()
	k, err := revokeKey(ctx, tx, workspace, id, at)
	if err != nil {
		return k, err
	}
	return k, tx.Commit()
}

// revokeKey revokes a key in tx, writing key.revoked when it was not
// revoked yet.
func revokeKey(ctx context.Context, tx txQueryer, workspace, id string, at time.Time) (assistant.APIKey, error) {
	k, err := scanKey(tx.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) || (err == nil && workspace != "" && k.Workspace != workspace) {
		return assistant.APIKey{}, assistant.Errorf(assistant.ENotFound, "no key with id %s", id)
	}
	if err != nil || k.RevokedAt != nil {
		return k, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE api_keys SET revoked_at = ? WHERE id = ?`, ms(at), id); err != nil {
		return k, err
	}
	at = fromMS(ms(at))
	k.RevokedAt = &at
	_, err = enqueueEvent(ctx, tx, assistant.NewKeyEvent(assistant.EventKeyRevoked, k, at, nil))
	return k, err
}

// RollKey implements assistant.AccessStore.
func (s *DB) RollKey(ctx context.Context, workspace, oldID string, newKey assistant.APIKey, oldEnds time.Time) (assistant.APIKey, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return assistant.APIKey{}, err
	}
	defer tx.Rollback()
	old, err := scanKey(tx.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = ? AND workspace = ?`, oldID, workspace))
	if errors.Is(err, sql.ErrNoRows) {
		return old, assistant.Errorf(assistant.ENotFound, "no key with id %s", oldID)
	}
	if err != nil {
		return old, err
	}
	now := newKey.CreatedAt
	if old.Status(now) != "active" {
		return old, assistant.Errorf(assistant.EConflict, "key %s is not active", oldID)
	}
	if err := insertKey(ctx, tx, newKey); err != nil {
		return old, err
	}
	if _, err := enqueueEvent(ctx, tx, assistant.NewKeyEvent(assistant.EventKeyCreated, newKey, now, nil)); err != nil {
		return old, err
	}
	if !oldEnds.After(now) {
		if old, err = revokeKey(ctx, tx, workspace, oldID, now); err != nil {
			return old, err
		}
	} else {
		if _, err := tx.ExecContext(ctx, `UPDATE api_keys SET expires_at = MIN(COALESCE(expires_at, ?), ?) WHERE id = ?`, ms(oldEnds), ms(oldEnds), oldID); err != nil {
			return old, err
		}
		if old, err = scanKey(tx.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = ?`, oldID)); err != nil {
			return old, err
		}
	}
	ev := assistant.NewKeyEvent(assistant.EventKeyRolled, old, now, map[string]any{"replaced_by": assistant.KeyEventData(newKey)})
	if _, err := enqueueEvent(ctx, tx, ev); err != nil {
		return old, err
	}
	return old, tx.Commit()
}

// ExpireKeyBy implements assistant.AccessStore.
func (s *DB) ExpireKeyBy(ctx context.Context, workspace, id string, at time.Time) (assistant.APIKey, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE api_keys SET expires_at = MIN(COALESCE(expires_at, ?), ?) WHERE id = ? AND workspace = ?`,
		ms(at), ms(at), id, workspace)
	if err != nil {
		return assistant.APIKey{}, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return assistant.APIKey{}, assistant.Errorf(assistant.ENotFound, "no key with id %s", id)
	}
	return s.KeyByID(ctx, id)
}

// RevokedSince implements assistant.AccessStore.
func (s *DB) RevokedSince(ctx context.Context, since time.Time) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM api_keys WHERE revoked_at >= ?`, ms(since))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// TouchKeys implements assistant.AccessStore.
func (s *DB) TouchKeys(ctx context.Context, lastUsed map[string]time.Time) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for id, at := range lastUsed {
		if _, err := tx.ExecContext(ctx, `UPDATE api_keys SET last_used_at = MAX(COALESCE(last_used_at, 0), ?) WHERE id = ?`, ms(at), id); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// CreateUser implements assistant.AccessStore.
func (s *DB) CreateUser(ctx context.Context, u assistant.User) (assistant.User, error) {
	if u.CreatedAt.IsZero() {
		u.CreatedAt = s.now()
	}
	res, err := s.db.ExecContext(ctx, `INSERT INTO users (workspace, email, password_hash, created_at) VALUES (?, ?, ?, ?)`,
		u.Workspace, u.Email, u.PasswordHash, ms(u.CreatedAt))
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE") {
			return u, assistant.Errorf(assistant.EConflict, "a user with email %s already exists", u.Email)
		}
		if strings.Contains(err.Error(), "FOREIGN KEY") {
			return u, assistant.Errorf(assistant.ENotFound, "workspace %q does not exist", u.Workspace)
		}
		return u, err
	}
	u.ID, _ = res.LastInsertId()
	return u, nil
}

// UserByEmail implements assistant.AccessStore.
func (s *DB) UserByEmail(ctx context.Context, email string) (assistant.User, error) {
	var u assistant.User
	var created int64
	err := s.db.QueryRowContext(ctx, `SELECT id, workspace, email, password_hash, created_at FROM users WHERE email = ?`, email).
		Scan(&u.ID, &u.Workspace, &u.Email, &u.PasswordHash, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return u, assistant.Errorf(assistant.ENotFound, "no user with that email")
	}
	u.CreatedAt = fromMS(created)
	return u, err
}

// SetPasswordHash implements assistant.AccessStore.
func (s *DB) SetPasswordHash(ctx context.Context, email, hash string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE users SET password_hash = ? WHERE email = ?`, hash, email)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		if err != nil {
			return err
		}
		return assistant.Errorf(assistant.ENotFound, "no user with that email")
	}
	return nil
}

// CountUsers implements assistant.AccessStore.
func (s *DB) CountUsers(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM users`).Scan(&n)
	return n, err
}

// RecordAudit implements assistant.AccessStore.
func (s *DB) RecordAudit(ctx context.Context, e assistant.AuditEvent) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO audit_log (at, workspace, actor, action, target, ip, detail) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		ms(e.At), e.Workspace, e.Actor, e.Action, e.Target, e.IP, e.Detail)
	return err
}

// ListAudit implements assistant.AccessStore.
func (s *DB) ListAudit(ctx context.Context, workspace string, limit int) ([]assistant.AuditEvent, error) {
	return s.ListAuditPage(ctx, workspace, 0, limit)
}

// ListAuditPage implements assistant.AccessStore.
func (s *DB) ListAuditPage(ctx context.Context, workspace string, offset, limit int) ([]assistant.AuditEvent, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT at, workspace, actor, action, target, ip, detail FROM audit_log
		WHERE workspace = ? ORDER BY at DESC, id DESC LIMIT ? OFFSET ?`, workspace, limit, offset)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []assistant.AuditEvent
	for rows.Next() {
		var e assistant.AuditEvent
		var at int64
		if err := rows.Scan(&at, &e.Workspace, &e.Actor, &e.Action, &e.Target, &e.IP, &e.Detail); err != nil {
			return nil, err
		}
		e.At = fromMS(at)
		out = append(out, e)
	}
	return out, rows.Err()
}

// RecordUsage implements assistant.AccessStore.
func (s *DB) RecordUsage(ctx context.Context, u assistant.UsageRecord) error {
	return insertUsage(ctx, s.db, u)
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// fromMillis turns a stored latency in milliseconds back into a duration.
func fromMillis(v float64) time.Duration {
	return time.Duration(math.Round(v * float64(time.Millisecond)))
}

// UsageByDay implements assistant.AccessStore.
func (s *DB) UsageByDay(ctx context.Context, workspace, keyID string, since time.Time) ([]assistant.UsageDay, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT strftime('%Y-%m-%d', at / 1000, 'unixepoch') AS day,
			(status / 100) || 'xx' AS class, source, COUNT(*)
		FROM usage WHERE workspace = ? AND key_id = ? AND at >= ?
		GROUP BY day, class, source ORDER BY day, class, source`, workspace, keyID, ms(since))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []assistant.UsageDay
	for rows.Next() {
		var d assistant.UsageDay
		if err := rows.Scan(&d.Day, &d.StatusClass, &d.Source, &d.Requests); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// WorkspaceUsageByDay implements assistant.AccessStore.
func (s *DB) WorkspaceUsageByDay(ctx context.Context, workspace string, since time.Time) ([]assistant.UsageDay, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT strftime('%Y-%m-%d', at / 1000, 'unixepoch') AS day,
			(status / 100) || 'xx' AS class, source, COUNT(*)
		FROM usage WHERE workspace = ? AND at >= ?
		GROUP BY day, class, source ORDER BY day, class, source`, workspace, ms(since))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []assistant.UsageDay
	for rows.Next() {
		var d assistant.UsageDay
		if err := rows.Scan(&d.Day, &d.StatusClass, &d.Source, &d.Requests); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// SetSetupToken implements assistant.AccessStore.
func (s *DB) SetSetupToken(ctx context.Context, hash [32]byte, expires time.Time) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM setup_tokens`); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO setup_tokens (hash, expires_at) VALUES (?, ?)`, hash[:], ms(expires)); err != nil {
		return err
	}
	return tx.Commit()
}

// ConsumeSetupToken implements assistant.AccessStore.
func (s *DB) ConsumeSetupToken(ctx context.Context, hash [32]byte, now time.Time) (bool, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM setup_tokens WHERE hash = ? AND expires_at > ?`, hash[:], ms(now))
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// CheckSetupToken reports whether the token is currently valid without
// consuming it (the setup page shows the form only for a valid link).
func (s *DB) CheckSetupToken(ctx context.Context, hash [32]byte, now time.Time) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM setup_tokens WHERE hash = ? AND expires_at > ?`, hash[:], ms(now)).Scan(&n)
	return n == 1, err
}
