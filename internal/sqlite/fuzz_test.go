package sqlite_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/knowledge"
	"github.com/constraintlab/assistant/internal/sqlite"
)

// FuzzSearch: whatever a caller types, the search query sanitizer leaves
// nothing that FTS5 MATCH could read as syntax: Search never fails and
// never returns more than the limit.
func FuzzSearch(f *testing.F) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(f.TempDir(), "fuzz.db"), time.Now)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	if _, err := knowledge.LoadEmbedded(ctx, db); err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		"theory of constraints", `"unbalanced quote`, "NEAR(a b, 3)", "title:goal", "a AND OR NOT b", "x*",
		"(((", "^start", "-minus +plus", "bottleneck\x00throughput", "ÄÖÜ ß İ", strings.Repeat("queue ", 80),
		"{col1 col2}: x", `""`, "'", "AND", "NOT", "OR", "*", "日本語",
	} {
		f.Add(s, uint8(0))
	}
	types := []assistant.EntityType{"", assistant.Framework, assistant.Paper, assistant.Blog}
	f.Fuzz(func(t *testing.T, text string, typ uint8) {
		q := assistant.SearchQuery{Text: text, Type: types[int(typ)%len(types)], Limit: 5}
		res, err := db.Search(ctx, q)
		if err != nil {
			t.Fatalf("Search(%q): %v", text, err)
		}
		if len(res) > q.Limit {
			t.Fatalf("Search(%q): %d results, limit %d", text, len(res), q.Limit)
		}
	})
}
