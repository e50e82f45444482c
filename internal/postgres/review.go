package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/constraintlab/assistant/internal/assistant"
)

// ReviewSetting implements assistant.ReviewSettings.
func (s *DB) ReviewSetting(ctx context.Context, workspace string) (assistant.ReviewSetting, error) {
	var rs assistant.ReviewSetting
	err := s.pool.QueryRow(ctx, `SELECT enabled, retention_days FROM review_settings WHERE workspace = $1`, workspace).
		Scan(&rs.Enabled, &rs.RetentionDays)
	if errors.Is(err, pgx.ErrNoRows) {
		return assistant.ReviewSetting{}, nil
	}
	return rs, err
}

// SetReviewSetting implements assistant.ReviewSettings and, for the turns
// kept, assistant.ReviewStore: turning review off deletes them, a new
// period moves their expiry. The setting's row stays locked until the
// transaction ends, which KeepReview waits for.
func (s *DB) SetReviewSetting(ctx context.Context, workspace string, rs assistant.ReviewSetting, at time.Time) error {
	if !rs.Valid() {
		return assistant.Errorf(assistant.EInvalid, "a review setting keeps turns for 1 to %d days", assistant.MaxReviewRetentionDays)
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO review_settings (workspace, enabled, retention_days, updated_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (workspace) DO UPDATE SET enabled = excluded.enabled, retention_days = excluded.retention_days, updated_at = excluded.updated_at`,
			workspace, rs.Enabled, rs.RetentionDays, ts(at))
		if err != nil {
			return err
		}
		if !rs.Enabled {
			_, err = tx.Exec(ctx, `DELETE FROM reviews WHERE workspace = $1`, workspace)
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE reviews SET expires_at = at + make_interval(days => $1) WHERE workspace = $2`, rs.RetentionDays, workspace)
		return err
	})
	if pgCode(err) == foreignKeyViolation {
		return assistant.Errorf(assistant.ENotFound, "workspace %q does not exist", workspace)
	}
	return err
}

// KeepReview implements assistant.ReviewStore. The setting's row is read
// FOR SHARE: a SetReviewSetting under way is waited for and its result
// read, and one that starts later waits for this insert, so its deletion
// sees the new row.
func (s *DB) KeepReview(ctx context.Context, r assistant.Review) (bool, error) {
	trace, knowledge, verdicts := r.JSONColumns()
	tag, err := s.pool.Exec(ctx, `INSERT INTO reviews (id, workspace, at, expires_at, key_id, surface, mode, level, message, history, answer, trace, knowledge, verdicts)
		SELECT $1, workspace, $2::timestamptz, $2::timestamptz + make_interval(days => retention_days), $3, $4, $5, $6, $7, $8, $9, $10, $11, $12
		FROM review_settings WHERE workspace = $13 AND enabled FOR SHARE`,
		r.ID, ts(r.At), r.KeyID, r.Surface, r.Mode, r.Level, r.Message, r.History, r.Answer,
		trace, knowledge, verdicts, r.Workspace)
	if pgCode(err) == uniqueViolation {
		return false, assistant.Errorf(assistant.EConflict, "review %q exists", r.ID)
	}
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

// reviewSummaryColumns are the columns of a kept turn that its list
// shows, read into reviewSummaryFields.
const reviewSummaryColumns = `id, workspace, at, expires_at, key_id, surface, mode, level, message, history, answer`

func reviewSummaryFields(r *assistant.Review) []any {
	return []any{&r.ID, &r.Workspace, &r.At, &r.ExpiresAt, &r.KeyID, &r.Surface, &r.Mode, &r.Level, &r.Message, &r.History, &r.Answer}
}

// Reviews implements assistant.ReviewStore.
func (s *DB) Reviews(ctx context.Context, workspace string, now time.Time, offset, limit int) ([]assistant.Review, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+reviewSummaryColumns+`
		FROM reviews WHERE workspace = $1 AND expires_at > $2 ORDER BY at DESC, id DESC LIMIT $3 OFFSET $4`,
		workspace, ts(now), limit, offset)
	if err != nil {
		return nil, err
	}
	return collectRows(rows, func(row pgx.CollectableRow) (assistant.Review, error) {
		var r assistant.Review
		err := row.Scan(reviewSummaryFields(&r)...)
		r.At, r.ExpiresAt = r.At.UTC(), r.ExpiresAt.UTC()
		return r, err
	})
}

// Review implements assistant.ReviewStore.
func (s *DB) Review(ctx context.Context, workspace, id string, now time.Time) (assistant.Review, error) {
	var r assistant.Review
	var trace, knowledge, verdicts string
	err := s.pool.QueryRow(ctx, `SELECT `+reviewSummaryColumns+`, trace::text, knowledge::text, verdicts::text
		FROM reviews WHERE workspace = $1 AND id = $2 AND expires_at > $3`, workspace, id, ts(now)).
		Scan(append(reviewSummaryFields(&r), &trace, &knowledge, &verdicts)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return assistant.Review{}, assistant.Errorf(assistant.ENotFound, "no kept turn %q", id)
	}
	if err != nil {
		return assistant.Review{}, err
	}
	r.At, r.ExpiresAt = r.At.UTC(), r.ExpiresAt.UTC()
	r.Trace, r.Knowledge, r.Verdicts = []byte(trace), []byte(knowledge), []byte(verdicts)
	return r, nil
}

// DeleteReview implements assistant.ReviewStore.
func (s *DB) DeleteReview(ctx context.Context, workspace, id string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM reviews WHERE workspace = $1 AND id = $2`, workspace, id)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return assistant.Errorf(assistant.ENotFound, "no kept turn %q", id)
	}
	return nil
}

// DeleteReviews implements assistant.ReviewStore.
func (s *DB) DeleteReviews(ctx context.Context, workspace string) (int, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM reviews WHERE workspace = $1`, workspace)
	return int(tag.RowsAffected()), err
}

// PurgeReviews implements assistant.ReviewStore.
func (s *DB) PurgeReviews(ctx context.Context, now time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM reviews WHERE expires_at <= $1`, ts(now))
	return int(tag.RowsAffected()), err
}
