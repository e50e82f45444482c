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

// SetReviewSetting implements assistant.ReviewSettings.
func (s *DB) SetReviewSetting(ctx context.Context, workspace string, rs assistant.ReviewSetting, at time.Time) error {
	if !rs.Valid() {
		return assistant.Errorf(assistant.EInvalid, "a review setting keeps turns for 1 to %d days", assistant.MaxReviewRetentionDays)
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO review_settings (workspace, enabled, retention_days, updated_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (workspace) DO UPDATE SET enabled = excluded.enabled, retention_days = excluded.retention_days, updated_at = excluded.updated_at`,
		workspace, rs.Enabled, rs.RetentionDays, ts(at))
	if pgCode(err) == foreignKeyViolation {
		return assistant.Errorf(assistant.ENotFound, "workspace %q does not exist", workspace)
	}
	return err
}
