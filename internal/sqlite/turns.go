package sqlite

import (
	"context"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
)

// RecordTurn implements assistant.AccessStore: a chat turn's usage row and
// its citation events in one transaction (D5), either both or neither.
func (s *DB) RecordTurn(ctx context.Context, usage assistant.UsageRecord, citations []assistant.CitationEvent) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO usage (at, workspace, key_id, endpoint, mode, source, status, latency_ms)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, ms(usage.At), usage.Workspace, usage.KeyID, usage.Endpoint, usage.Mode,
		usage.Source, usage.Status, float64(usage.Latency)/float64(time.Millisecond)); err != nil {
		return err
	}
	for _, ev := range citations {
		if _, err := tx.ExecContext(ctx, `INSERT INTO citation_events (response_id, workspace, source, token, cited_at)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (response_id, token) DO NOTHING`,
			ev.ResponseID, ev.Workspace, ev.Source, ev.Token.String(), ev.At.UnixMilli()); err != nil {
			return err
		}
	}
	return tx.Commit()
}
