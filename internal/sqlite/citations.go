package sqlite

import (
	"context"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
)

// RecordCitations implements assistant.CitationStore.
func (s *DB) RecordCitations(ctx context.Context, events []assistant.CitationEvent) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := insertCitations(ctx, tx, events); err != nil {
		return err
	}
	return tx.Commit()
}

// Leaderboard implements assistant.CitationStore.
func (s *DB) Leaderboard(ctx context.Context, since, until time.Time, limit int) ([]assistant.LeaderboardEntry, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT c.token, COALESCE(e.title, ''), COUNT(*) AS n
		FROM citation_events c LEFT JOIN entities e ON e.token = c.token
		WHERE c.cited_at >= ? AND c.cited_at < ?
		GROUP BY c.token
		ORDER BY n DESC, c.token ASC
		LIMIT ?`, since.UnixMilli(), until.UnixMilli(), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []assistant.LeaderboardEntry
	for rows.Next() {
		var tok string
		var entry assistant.LeaderboardEntry
		if err := rows.Scan(&tok, &entry.Title, &entry.Citations); err != nil {
			return nil, err
		}
		t, err := assistant.ParseToken(tok)
		if err != nil {
			continue // a malformed token cannot have been recorded; skip defensively
		}
		entry.Token = t
		out = append(out, entry)
	}
	return out, rows.Err()
}
