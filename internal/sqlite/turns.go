package sqlite

import (
	"context"

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
	if err := insertUsage(ctx, tx, usage); err != nil {
		return err
	}
	if err := insertCitations(ctx, tx, citations); err != nil {
		return err
	}
	return tx.Commit()
}
