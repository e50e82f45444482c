package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
)

// ReviewSetting implements assistant.ReviewSettings.
func (s *DB) ReviewSetting(ctx context.Context, workspace string) (assistant.ReviewSetting, error) {
	var rs assistant.ReviewSetting
	err := s.db.QueryRowContext(ctx, `SELECT enabled, retention_days FROM review_settings WHERE workspace = ?`, workspace).
		Scan(&rs.Enabled, &rs.RetentionDays)
	if errors.Is(err, sql.ErrNoRows) {
		return assistant.ReviewSetting{}, nil
	}
	return rs, err
}

// SetReviewSetting implements assistant.ReviewSettings.
func (s *DB) SetReviewSetting(ctx context.Context, workspace string, rs assistant.ReviewSetting, at time.Time) error {
	if !rs.Valid() {
		return assistant.Errorf(assistant.EInvalid, "a review setting keeps turns for 1 to %d days", assistant.MaxReviewRetentionDays)
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO review_settings (workspace, enabled, retention_days, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (workspace) DO UPDATE SET enabled = excluded.enabled, retention_days = excluded.retention_days, updated_at = excluded.updated_at`,
		workspace, rs.Enabled, rs.RetentionDays, ms(at))
	if err != nil && strings.Contains(err.Error(), "FOREIGN KEY") {
		return assistant.Errorf(assistant.ENotFound, "workspace %q does not exist", workspace)
	}
	return err
}
