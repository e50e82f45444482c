package retrieval_test

import (
	"context"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/retrieval"
)

// storeOf is a memSource that is also a KnowledgeStore (reads only).
type storeOf struct{ *memSource }

func (s storeOf) SyncEntities(context.Context, string, []assistant.Entity) (assistant.SyncResult, error) {
	return assistant.SyncResult{}, nil
}
func (s storeOf) Entities(ctx context.Context, tokens []assistant.Token) (map[assistant.Token]assistant.Entity, error) {
	panic("the reader must not read entities from the store")
}
func (s storeOf) KnowledgeStats(context.Context) (assistant.KnowledgeStats, error) {
	panic("the reader must not count in the store")
}

func TestReaderAnswersFromTheSnapshot(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_700_000_000, 0)
	src := &memSource{entities: embedded(t), version: 1}
	ix := retrieval.NewIndex(src, retrieval.WithClock(func() time.Time { return now }), retrieval.WithCheckInterval(time.Second))
	r := ix.Reader(storeOf{src})

	st, err := r.KnowledgeStats(ctx)
	if err != nil || st.Total != len(src.entities) || st.Frameworks+st.Papers+st.Blogs != st.Total {
		t.Fatalf("stats %+v %v", st, err)
	}
	toc := assistant.Token{Type: assistant.Framework, Slug: "theory-of-constraints"}
	missing := assistant.Token{Type: assistant.Paper, Slug: "no-such-paper"}
	got, err := r.Entities(ctx, []assistant.Token{toc, missing})
	if err != nil || len(got) != 1 || got[toc].Title == "" {
		t.Fatalf("entities %v %v", got, err)
	}
	all, _ := r.AllEntities(ctx)
	for i := 1; i < len(all); i++ {
		if all[i-1].Token().String() >= all[i].Token().String() {
			t.Fatalf("AllEntities not ordered by token at %d", i)
		}
	}

	added := assistant.Entity{Type: assistant.Blog, Slug: "new-essay", Title: "A new essay", Summary: "s"}
	src.set(append(embedded(t), added), nil)
	now = now.Add(time.Second)
	st2, _ := r.KnowledgeStats(ctx)
	if st2.Total != st.Total+1 || st2.Blogs != st.Blogs+1 {
		t.Errorf("after a change: %+v, want one more essay than %+v", st2, st)
	}
	if v, _ := r.KnowledgeVersion(ctx); v != 2 {
		t.Errorf("version %d, want 2", v)
	}
}
