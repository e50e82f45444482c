package retrieval_test

import (
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/retrieval"
)

// FuzzSearch: whatever a caller types, Search returns at most the limit,
// of the type asked for, ordered by score.
func FuzzSearch(f *testing.F) {
	s := retrieval.Build(1, embedded(f))
	for _, q := range []string{
		"theory of constraints", `"unbalanced quote`, "NEAR(a b, 3)", "title:goal", "a AND OR NOT b", "x*",
		"(((", "^start", "-minus +plus", "bottleneck\x00throughput", "ÄÖÜ ß İ", strings.Repeat("queue ", 80),
		"{col1 col2}: x", `""`, "'", "AND", "NOT", "OR", "*", "日本語",
	} {
		f.Add(q, uint8(0))
	}
	types := []assistant.EntityType{"", assistant.Framework, assistant.Paper, assistant.Blog}
	f.Fuzz(func(t *testing.T, text string, typ uint8) {
		q := assistant.SearchQuery{Text: text, Type: types[int(typ)%len(types)], Limit: 5}
		res := s.Search(q)
		if len(res) > q.Limit {
			t.Fatalf("Search(%q): %d results, limit %d", text, len(res), q.Limit)
		}
		for i, r := range res {
			if q.Type != "" && r.Entity.Type != q.Type {
				t.Fatalf("Search(%q, %s): got a %s", text, q.Type, r.Entity.Type)
			}
			if i > 0 && r.Score > res[i-1].Score {
				t.Fatalf("Search(%q): not ordered by score", text)
			}
		}
	})
}
