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

const insertCitation = `INSERT INTO citation_events (response_id, workspace, source, token, cited_at)
	VALUES (?, ?, ?, ?, ?) ON CONFLICT (response_id, token) DO NOTHING`

// insertCitations stores events, ignoring one already stored for the same
// response and token. An event with an invalid token is EInvalid: the
// caller's transaction then stores none of them.
func insertCitations(ctx context.Context, tx execer, events []assistant.CitationEvent) error {
	for _, ev := range events {
		if !ev.Token.Valid() {
			return assistant.Errorf(assistant.EInvalid, "%q is not a valid citation token", ev.Token)
		}
		if _, err := tx.ExecContext(ctx, insertCitation, ev.ResponseID, ev.Workspace, ev.Source, ev.Token.String(), ev.At.UnixMilli()); err != nil {
			return err
		}
	}
	return nil
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
