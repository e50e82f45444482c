package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/constraintlab/assistant/internal/assistant"
)

// RecordCitations implements assistant.CitationStore.
func (s *DB) RecordCitations(ctx context.Context, events []assistant.CitationEvent) error {
	if len(events) == 0 {
		return nil
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return insertCitations(ctx, tx, events) })
}

const insertCitation = `INSERT INTO citation_events (response_id, workspace, source, token, cited_at)
	VALUES ($1, $2, $3, $4, $5) ON CONFLICT (response_id, token) DO NOTHING`

// insertCitations stores events in one round trip, ignoring one already
// stored for the same response and token. An event with an invalid token
// is EInvalid: the caller's transaction then stores none of them.
func insertCitations(ctx context.Context, tx pgx.Tx, events []assistant.CitationEvent) error {
	if len(events) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for _, ev := range events {
		if !ev.Token.Valid() {
			return assistant.Errorf(assistant.EInvalid, "%q is not a valid citation token", ev.Token)
		}
		b.Queue(insertCitation, ev.ResponseID, ev.Workspace, ev.Source, ev.Token.String(), ts(ev.At))
	}
	return tx.SendBatch(ctx, b).Close()
}

// Leaderboard implements assistant.CitationStore.
func (s *DB) Leaderboard(ctx context.Context, since, until time.Time, limit int) ([]assistant.LeaderboardEntry, error) {
	rows, err := s.pool.Query(ctx, `SELECT c.token, COALESCE(MAX(e.title), ''), COUNT(*) AS n
		FROM citation_events c LEFT JOIN entities e ON e.token = c.token
		WHERE c.cited_at >= $1 AND c.cited_at < $2
		GROUP BY c.token
		ORDER BY n DESC, c.token ASC
		LIMIT $3`, ts(since), ts(until), noLimit(limit))
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
