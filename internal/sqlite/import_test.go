package sqlite_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/assistant"
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
