package sqlite

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/knowledge"
)

// Column weights of bm25() in the order of the entities_fts columns: token
// (unindexed), title, tags, key_ideas, when_to_use, summary, extra.
const bm25Weights = "0.0, 8.0, 5.0, 3.0, 4.0, 2.0, 1.0"

// minCandidates is how many candidates each weight class of a query
// contributes at least; the final ranking is taken from their union.
const minCandidates = 200

// Search implements assistant.Retriever.
//
// The query is analysed by the knowledge package (knowledge.Vocabulary):
// its own words, plus synonyms and business associations at lower weights.
// Each weight class becomes one FTS5 query whose terms are quoted and joined
// with OR, so no query syntax from the caller ever reaches MATCH (quotes,
// '*', NEAR or parentheses are just characters, removed by the analysis).
// An entity's score is the weighted sum of its field-weighted bm25 scores
// (higher is better); ties break by token. A query with no searchable
// words returns no results.
func (s *DB) Search(ctx context.Context, q assistant.SearchQuery) ([]assistant.SearchResult, error) {
	terms := knowledge.DefaultVocabulary().Analyze(q.Text)
	if len(terms) == 0 {
		return nil, nil
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 10
	}

	// One MATCH expression per weight, original words first.
	var weights []float64
	phrases := map[float64][]string{}
	for _, t := range terms {
		if _, ok := phrases[t.Weight]; !ok {
			weights = append(weights, t.Weight)
		}
		phrases[t.Weight] = append(phrases[t.Weight], `"`+t.Text+`"`)
	}
	scores := map[string]float64{}
	for _, w := range weights {
		class, err := s.bm25(ctx, strings.Join(phrases[w], " OR "), q.Type, max(minCandidates, 10*limit))
		if err != nil {
			return nil, err
		}
		for tok, score := range class {
			if w < knowledge.WeightOriginal {
				score = saturate(score)
			}
			scores[tok] += w * score
		}
	}

	ranked := make([]string, 0, len(scores))
	for tok := range scores {
		ranked = append(ranked, tok)
	}
	slices.SortFunc(ranked, func(a, b string) int {
		if c := cmp.Compare(scores[b], scores[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	ranked = ranked[:min(limit, len(ranked))]

	tokens := make([]assistant.Token, 0, len(ranked))
	for _, tok := range ranked {
		if t, err := assistant.ParseToken(tok); err == nil {
			tokens = append(tokens, t)
		}
	}
	entities, err := s.Entities(ctx, tokens)
	if err != nil {
		return nil, err
	}
	out := make([]assistant.SearchResult, 0, len(tokens))
	for _, t := range tokens {
		if e, ok := entities[t]; ok {
			out = append(out, assistant.SearchResult{Entity: e, Score: scores[t.String()]})
		}
	}
	return out, nil
}

// expansionCeiling bounds what the added terms of one weight class can
// contribute, in bm25 units (about one well-matched word of the query): an
// entity that matches many synonyms gains little over one that matches a
// few, so expansion breaks ties between entities the query's own words
// leave close rather than outvoting those words.
const expansionCeiling = 10.0

// saturate maps a bm25 sum smoothly onto [0, expansionCeiling).
func saturate(score float64) float64 {
	return expansionCeiling * (1 - math.Exp(-score/expansionCeiling))
}

// bm25 runs one MATCH and returns the higher-is-better bm25 score of each of
// the best n entities it finds, by token.
func (s *DB) bm25(ctx context.Context, match string, typ assistant.EntityType, n int) (map[string]float64, error) {
	// Without a type filter the index alone answers; joining every match to
	// entities would cost a lookup per matching row.
	query := `SELECT token, bm25(entities_fts, ` + bm25Weights + `) AS rank
		FROM entities_fts WHERE entities_fts MATCH ? ORDER BY rank LIMIT ?`
	args := []any{match, n}
	if typ != "" {
		query = `SELECT e.token, bm25(entities_fts, ` + bm25Weights + `) AS rank
		FROM entities_fts JOIN entities e ON e.token = entities_fts.token
		WHERE entities_fts MATCH ? AND e.type = ? ORDER BY rank LIMIT ?`
		args = []any{match, string(typ), n}
	}
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	scores := map[string]float64{}
	for rows.Next() {
		var tok string
		var rank float64
		if err := rows.Scan(&tok, &rank); err != nil {
			return nil, err
		}
		scores[tok] = -rank // bm25() is lower for better matches
	}
	return scores, rows.Err()
}
