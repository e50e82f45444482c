package sqlite

import (
	"context"
	"strings"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/knowledge"
)

// Column weights of bm25() in the order of the entities_fts columns: token
// (unindexed), title, tags, key_ideas, when_to_use, summary, extra.
const bm25Weights = "0.0, 8.0, 5.0, 3.0, 4.0, 2.0, 1.0"

// Search implements assistant.Retriever with FTS5 and field-weighted bm25.
// The query text never reaches MATCH as syntax: it is reduced to plain terms
// (knowledge.QueryTerms), each quoted, joined with OR, so quotes, '*', NEAR
// or unbalanced parentheses are just characters. A query with no searchable
// words returns no results.
func (s *DB) Search(ctx context.Context, q assistant.SearchQuery) ([]assistant.SearchResult, error) {
	terms := knowledge.QueryTerms(q.Text)
	if len(terms) == 0 {
		return nil, nil
	}
	quoted := make([]string, len(terms))
	for i, t := range terms {
		quoted[i] = `"` + t + `"`
	}
	match := strings.Join(quoted, " OR ")
	limit := q.Limit
	if limit <= 0 {
		limit = 10
	}
	args := []any{match}
	typeFilter := ""
	if q.Type != "" {
		typeFilter = " AND e.type = ?"
		args = append(args, string(q.Type))
	}
	args = append(args, limit)
	rows, err := s.db.QueryContext(ctx, `SELECT `+prefixed("e.", entityColumns)+`, bm25(entities_fts, `+bm25Weights+`) AS rank
		FROM entities_fts JOIN entities e ON e.token = entities_fts.token
		WHERE entities_fts MATCH ?`+typeFilter+`
		ORDER BY rank, e.token LIMIT ?`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []assistant.SearchResult
	for rows.Next() {
		var r entityRow
		var rank float64
		if err := rows.Scan(&r.Token, &r.Type, &r.Slug, &r.Title, &r.Authors, &r.Year, &r.URL, &r.URLNote,
			&r.Tags, &r.Archetypes, &r.Related, &r.Summary, &r.KeyIdeas, &r.WhenToUse, &r.Pitfalls,
			&r.Origin, &r.Hash, &rank); err != nil {
			return nil, err
		}
		e, err := r.entity()
		if err != nil {
			return nil, err
		}
		// bm25() is lower for better matches; expose higher-is-better.
		out = append(out, assistant.SearchResult{Entity: e, Score: -rank})
	}
	return out, rows.Err()
}

func prefixed(prefix, columns string) string {
	parts := strings.Split(columns, ",")
	for i, p := range parts {
		parts[i] = prefix + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}
