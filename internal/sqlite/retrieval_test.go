package sqlite_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/knowledge"
)

func TestImportEntitiesUpsertsAtomically(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "i.db"))
	if _, err := db.SyncEntities(ctx, assistant.OriginEmbedded, []assistant.Entity{entity("one", "One"), entity("two", "Two")}); err != nil {
		t.Fatal(err)
	}
	t.Run("an invalid entity changes nothing", func(t *testing.T) {
		bad := entity("Not A Slug", "Bad")
		_, err := db.ImportEntities(ctx, []assistant.Entity{entity("three", "Three"), bad})
		if assistant.ErrorCode(err) != assistant.EInvalid {
			t.Fatalf("error %v, want EInvalid", err)
		}
		if st, _ := db.KnowledgeStats(ctx); st.Total != 2 {
			t.Errorf("%d entities after a failed import, want 2", st.Total)
		}
	})
	t.Run("upsert, never delete, survive a sync", func(t *testing.T) {
		res, err := db.ImportEntities(ctx, []assistant.Entity{entity("two", "Two, imported"), entity("three", "Three")})
		if err != nil || res.Inserted != 1 || res.Updated != 1 {
			t.Fatalf("import: %+v %v", res, err)
		}
		res, err = db.ImportEntities(ctx, []assistant.Entity{entity("three", "Three")})
		if err != nil || res.Unchanged != 1 {
			t.Fatalf("re-import: %+v %v", res, err)
		}
		if _, err := db.SyncEntities(ctx, assistant.OriginEmbedded, []assistant.Entity{entity("one", "One"), entity("two", "Two")}); err != nil {
			t.Fatal(err)
		}
		all, _ := db.AllEntities(ctx)
		var got []string
		for _, e := range all {
			got = append(got, e.Slug+"="+e.Title+"/"+e.Origin)
		}
		want := "one=One/embedded three=Three/imported two=Two, imported/imported"
		if strings.Join(got, " ") != want {
			t.Errorf("stored %q, want %q", strings.Join(got, " "), want)
		}
	})
}

func TestSearchRanksAndStaysSafe(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "s.db"))
	if _, err := knowledge.LoadEmbedded(ctx, db); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		query string
		typ   assistant.EntityType
		want  string // a token expected in the top 5
	}{
		{"bottleneck", "", "framework:theory-of-constraints"},
		{"customers cancel their subscription and leave", "", "framework:customer-success"},
		{"how long work waits in the queue", assistant.Paper, "paper:little-1961-queuing-formula"},
		{"we are running out of money", assistant.Blog, "blog:graham-2014-the-fatal-pinch"},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			hits, err := db.Search(ctx, assistant.SearchQuery{Text: c.query, Type: c.typ, Limit: 5})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for i, h := range hits {
				got = append(got, h.Entity.Token().String())
				if c.typ != "" && h.Entity.Type != c.typ {
					t.Errorf("%s in a %s-only search", h.Entity.Token(), c.typ)
				}
				if i > 0 && h.Score > hits[i-1].Score {
					t.Errorf("results not ordered by score: %v", got)
				}
			}
			if !strings.Contains(strings.Join(got, " "), c.want) {
				t.Errorf("top 5 %v lack %s", got, c.want)
			}
		})
	}
	for _, q := range []string{`"`, `*`, `NEAR(a b)`, `((`, `churn) OR (`, `^title:x`, `AND OR NOT`, `'; DROP TABLE entities; --`, "\x00", `™ ☃ 𝄞`, strings.Repeat("pricing churn ", 200)} {
		if _, err := db.Search(ctx, assistant.SearchQuery{Text: q, Limit: 10}); err != nil {
			t.Errorf("q=%q: %v", q, err)
		}
	}
}
