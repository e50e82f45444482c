package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
)

// dayMS is a day in milliseconds, the unit of the reviews' times.
const dayMS = int64(24 * time.Hour / time.Millisecond)

// ReviewSetting implements assistant.ReviewSettings. Every chat turn
// asks it (chat.KeepForReview), so a workspace's setting is remembered
// (reviewSettingCache): a change made through this DB (SetReviewSetting,
// LoadFrom) is seen by every read that starts after it returns; one made
// by another process on the same file, within reviewSettingTTL.
func (s *DB) ReviewSetting(ctx context.Context, workspace string) (assistant.ReviewSetting, error) {
	if rs, ok := s.settings.get(workspace); ok {
		return rs, nil
	}
	gen := s.settings.generation()
	var rs assistant.ReviewSetting
	err := s.db.QueryRowContext(ctx, `SELECT enabled, retention_days FROM review_settings WHERE workspace = ?`, workspace).
		Scan(&rs.Enabled, &rs.RetentionDays)
	if errors.Is(err, sql.ErrNoRows) {
		rs, err = assistant.ReviewSetting{}, nil
	}
	if err != nil {
		return rs, err
	}
	s.settings.put(workspace, rs, gen)
	return rs, nil
}

// reviewSettingTTL is how long a remembered review setting is used
// before it is read again: the bound on seeing a change another process
// made to the same file. Changes through this DB are seen at once.
const reviewSettingTTL = time.Second

// maxRememberedSettings bounds the workspaces whose setting is
// remembered; a full cache starts again.
const maxRememberedSettings = 4096

// reviewSettingCache remembers the workspaces' review settings as read.
// A write through the DB moves the generation on and forgets them all; a
// read that started before a write does not store what it read, so a
// setting read before a change is never served after the change.
type reviewSettingCache struct {
	mu       sync.Mutex
	gen      uint64
	settings map[string]rememberedSetting
}

type rememberedSetting struct {
	rs   assistant.ReviewSetting
	read time.Time // monotonic
}

// get returns the remembered setting of workspace, if read within the TTL.
func (c *reviewSettingCache) get(workspace string) (assistant.ReviewSetting, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.settings[workspace]
	if !ok || time.Since(r.read) >= reviewSettingTTL {
		return assistant.ReviewSetting{}, false
	}
	return r.rs, true
}

// generation returns the generation a read starts at.
func (c *reviewSettingCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// put remembers rs, read at generation gen, unless a write came since.
func (c *reviewSettingCache) put(workspace string, rs assistant.ReviewSetting, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if c.settings == nil || len(c.settings) >= maxRememberedSettings {
		c.settings = make(map[string]rememberedSetting)
	}
	c.settings[workspace] = rememberedSetting{rs: rs, read: time.Now()}
}

// forget drops every remembered setting and moves the generation on;
// writers call it once their write is done (committed or not).
func (c *reviewSettingCache) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.settings = nil
}

// SetReviewSetting implements assistant.ReviewSettings and, for the turns
// kept, assistant.ReviewStore: turning review off deletes them, a new
// period moves their expiry.
func (s *DB) SetReviewSetting(ctx context.Context, workspace string, rs assistant.ReviewSetting, at time.Time) error {
	if !rs.Valid() {
		return assistant.Errorf(assistant.EInvalid, "a review setting keeps turns for 1 to %d days", assistant.MaxReviewRetentionDays)
	}
	deleted := false
	defer s.settings.forget()
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO review_settings (workspace, enabled, retention_days, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (workspace) DO UPDATE SET enabled = excluded.enabled, retention_days = excluded.retention_days, updated_at = excluded.updated_at`,
			workspace, rs.Enabled, rs.RetentionDays, ms(at))
		if err != nil {
			return err
		}
		if !rs.Enabled {
			res, err := tx.ExecContext(ctx, `DELETE FROM reviews WHERE workspace = ?`, workspace)
			if err != nil {
				return err
			}
			n, _ := res.RowsAffected()
			deleted = n > 0
			return nil
		}
		_, err = tx.ExecContext(ctx, `UPDATE reviews SET expires_at = at + ? WHERE workspace = ?`, int64(rs.RetentionDays)*dayMS, workspace)
		return err
	})
	if err != nil && strings.Contains(err.Error(), "FOREIGN KEY") {
		return assistant.Errorf(assistant.ENotFound, "workspace %q does not exist", workspace)
	}
	if err == nil && deleted {
		s.truncateLog(ctx)
	}
	return err
}

// KeepReview implements assistant.ReviewStore. SQLite runs one write
// transaction at a time, so the insert sees the setting as the last
// SetReviewSetting left it.
func (s *DB) KeepReview(ctx context.Context, r assistant.Review) (bool, error) {
	trace, knowledge, verdicts := r.JSONColumns()
	res, err := s.db.ExecContext(ctx, `INSERT INTO reviews (id, workspace, at, expires_at, key_id, surface, mode, level, message, history, answer, trace, knowledge, verdicts)
		SELECT ?, workspace, ?, ? + retention_days * ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
		FROM review_settings WHERE workspace = ? AND enabled`,
		r.ID, ms(r.At), ms(r.At), dayMS, r.KeyID, r.Surface, r.Mode, r.Level, r.Message, r.History, r.Answer,
		trace, knowledge, verdicts, r.Workspace)
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE") {
			return false, assistant.Errorf(assistant.EConflict, "review %q exists", r.ID)
		}
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// reviewSummaryColumns are the columns of a kept turn that its list
// shows, read into reviewSummaryFields (at and expires_at as
// milliseconds).
const reviewSummaryColumns = `id, workspace, at, expires_at, key_id, surface, mode, level, message, history, answer`

func reviewSummaryFields(r *assistant.Review, at, exp *int64) []any {
	return []any{&r.ID, &r.Workspace, at, exp, &r.KeyID, &r.Surface, &r.Mode, &r.Level, &r.Message, &r.History, &r.Answer}
}

// Reviews implements assistant.ReviewStore.
func (s *DB) Reviews(ctx context.Context, workspace string, now time.Time, offset, limit int) ([]assistant.Review, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+reviewSummaryColumns+`
		FROM reviews WHERE workspace = ? AND expires_at > ? ORDER BY at DESC, id DESC LIMIT ? OFFSET ?`,
		workspace, ms(now), limit, offset)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []assistant.Review
	for rows.Next() {
		var r assistant.Review
		var at, exp int64
		if err := rows.Scan(reviewSummaryFields(&r, &at, &exp)...); err != nil {
			return nil, err
		}
		r.At, r.ExpiresAt = fromMS(at), fromMS(exp)
		out = append(out, r)
	}
	return out, rows.Err()
}

// Review implements assistant.ReviewStore.
func (s *DB) Review(ctx context.Context, workspace, id string, now time.Time) (assistant.Review, error) {
	var r assistant.Review
	var at, exp int64
	var trace, knowledge, verdicts string
	err := s.db.QueryRowContext(ctx, `SELECT `+reviewSummaryColumns+`, trace, knowledge, verdicts
		FROM reviews WHERE workspace = ? AND id = ? AND expires_at > ?`, workspace, id, ms(now)).
		Scan(append(reviewSummaryFields(&r, &at, &exp), &trace, &knowledge, &verdicts)...)
	if errors.Is(err, sql.ErrNoRows) {
		return assistant.Review{}, assistant.Errorf(assistant.ENotFound, "no kept turn %q", id)
	}
	if err != nil {
		return assistant.Review{}, err
	}
	r.At, r.ExpiresAt = fromMS(at), fromMS(exp)
	r.Trace, r.Knowledge, r.Verdicts = []byte(trace), []byte(knowledge), []byte(verdicts)
	return r, nil
}

// DeleteReview implements assistant.ReviewStore.
func (s *DB) DeleteReview(ctx context.Context, workspace, id string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM reviews WHERE workspace = ? AND id = ?`, workspace, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return assistant.Errorf(assistant.ENotFound, "no kept turn %q", id)
	}
	s.truncateLog(ctx)
	return nil
}

// DeleteReviews implements assistant.ReviewStore.
func (s *DB) DeleteReviews(ctx context.Context, workspace string) (int, error) {
	return s.deleteReviews(ctx, `DELETE FROM reviews WHERE workspace = ?`, workspace)
}

// PurgeReviews implements assistant.ReviewStore.
func (s *DB) PurgeReviews(ctx context.Context, now time.Time) (int, error) {
	return s.deleteReviews(ctx, `DELETE FROM reviews WHERE expires_at <= ?`, ms(now))
}

func (s *DB) deleteReviews(ctx context.Context, query string, args ...any) (int, error) {
	res, err := s.db.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	if n > 0 {
		s.truncateLog(ctx)
	}
	return int(n), err
}

// truncateLog moves the write-ahead log into the database file and
// empties it, after kept turns were deleted: secure_delete (Open) has
// overwritten their text in the database's pages, and the log's older
// copies of those pages go with it. It is best effort: a checkpoint that
// readers hold up is done by a later one.
func (s *DB) truncateLog(ctx context.Context) {
	_, _ = s.db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
}

// inTx runs f in a transaction, committed when f returns nil.
func (s *DB) inTx(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := f(tx); err != nil {
		return err
	}
	return tx.Commit()
}
