package retrieval_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/knowledge"
	"github.com/constraintlab/assistant/internal/retrieval"
	"github.com/constraintlab/assistant/internal/textproc"
)

// memSource is a store in memory: entities and a version that callers move.
type memSource struct {
	mu       sync.Mutex
	entities []assistant.Entity
	version  int64
	fail     error
	reads    int
}

func (m *memSource) AllEntities(context.Context) ([]assistant.Entity, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	return append([]assistant.Entity(nil), m.entities...), m.fail
}

func (m *memSource) KnowledgeVersion(context.Context) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.version, m.fail
}

func (m *memSource) set(entities []assistant.Entity, fail error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.entities, m.fail = entities, fail
	m.version++
}

func embedded(t testing.TB) []assistant.Entity {
	t.Helper()
	files, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]assistant.Entity, len(files))
	for i, f := range files {
		out[i] = f.Entity
	}
	return out
}

func tokens(hits []assistant.SearchResult) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Entity.Token().String()
	}
	return out
}

func TestSearchRanksAndStaysSafe(t *testing.T) {
	ctx := context.Background()
	ix := retrieval.NewIndex(&memSource{entities: embedded(t), version: 1})
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
			hits, err := ix.Search(ctx, assistant.SearchQuery{Text: c.query, Type: c.typ, Limit: 5})
			if err != nil {
				t.Fatal(err)
			}
			got := tokens(hits)
			for i, h := range hits {
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
		if _, err := ix.Search(ctx, assistant.SearchQuery{Text: q, Limit: 10}); err != nil {
			t.Errorf("q=%q: %v", q, err)
		}
	}
	if hits, err := ix.Search(ctx, assistant.SearchQuery{Text: "the and of", Limit: 10}); err != nil || len(hits) != 0 {
		t.Errorf("a query of stop words: %v %v, want no results and no error", tokens(hits), err)
	}
}

func TestPhrasesMatchRunsOfWordsInOneField(t *testing.T) {
	// "juggling" adds the phrase "work in progress" (an association): it
	// counts where those words stand in a row in one field, not where
	// they are merely present.
	a := assistant.Entity{Type: assistant.Framework, Slug: "a", Title: "Limits on work in progress", Summary: "s"}
	b := assistant.Entity{Type: assistant.Framework, Slug: "b", Title: "Progress at work", Summary: "Work moves in steps."}
	c := assistant.Entity{Type: assistant.Framework, Slug: "c", Title: "Unrelated", Summary: "Nothing here."}
	hits := retrieval.Build(1, []assistant.Entity{a, b, c}).Search(assistant.SearchQuery{Text: "juggling", Limit: 5})
	if got := strings.Join(tokens(hits), " "); got != "framework:a" {
		t.Fatalf("hits %q, want framework:a alone", got)
	}
}

func TestTiesBreakByToken(t *testing.T) {
	var es []assistant.Entity
	for _, slug := range []string{"c", "a", "b"} {
		es = append(es, assistant.Entity{Type: assistant.Framework, Slug: slug, Title: "Queue", Summary: "s"})
	}
	got := strings.Join(tokens(retrieval.Build(1, es).Search(assistant.SearchQuery{Text: "queue", Limit: 3})), " ")
	if got != "framework:a framework:b framework:c" {
		t.Errorf("equal scores ranked %s", got)
	}
}

func TestIndexFollowsTheStoreVersion(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_700_000_000, 0)
	clock := func() time.Time { return now }
	src := &memSource{entities: embedded(t), version: 1}
	ix := retrieval.NewIndex(src, retrieval.WithClock(clock), retrieval.WithCheckInterval(time.Second))
	search := func(q string) []string {
		t.Helper()
		hits, err := ix.Search(ctx, assistant.SearchQuery{Text: q, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		return tokens(hits)
	}
	if got := search("zanzibar"); len(got) != 0 {
		t.Fatalf("unexpected hits %v", got)
	}
	added := assistant.Entity{Type: assistant.Blog, Slug: "zanzibar-notes", Title: "Zanzibar notes", Summary: "About Zanzibar."}
	src.set(append(embedded(t), added), nil)
	if got := search("zanzibar"); len(got) != 0 {
		t.Fatalf("the store was asked again before the check interval: %v", got)
	}
	now = now.Add(time.Second)
	if got := search("zanzibar"); len(got) != 1 || got[0] != "blog:zanzibar-notes" {
		t.Fatalf("after the interval: %v, want the new entity", got)
	}
	reads := src.reads
	now = now.Add(time.Second)
	search("zanzibar")
	if src.reads != reads {
		t.Errorf("an unchanged version rebuilt the snapshot")
	}
	// A store that fails keeps the last snapshot serving.
	src.set(nil, errors.New("database down"))
	now = now.Add(time.Second)
	if got := search("zanzibar"); len(got) != 1 {
		t.Errorf("with the store down: %v, want the previous snapshot's answer", got)
	}
}

func TestFirstSearchReportsAStoreFailure(t *testing.T) {
	ix := retrieval.NewIndex(&memSource{fail: errors.New("database down")})
	if _, err := ix.Search(context.Background(), assistant.SearchQuery{Text: "queue"}); err == nil {
		t.Fatal("no error without any snapshot")
	}
}

func TestConcurrentSearchesDuringRebuilds(t *testing.T) {
	ctx := context.Background()
	src := &memSource{entities: embedded(t), version: 1}
	ix := retrieval.NewIndex(src, retrieval.WithCheckInterval(0))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 50 {
				if g == 0 && i%10 == 0 {
					src.set(embedded(t), nil)
				}
				if _, err := ix.Search(ctx, assistant.SearchQuery{Text: "bottleneck queue", Limit: 5}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestLongQueriesFavourTheEntityWrittenForTheSituation: a question that
// describes a situation at length shares scattered words with an entity
// that mentions them here and there, and most of its words with one
// situation of the entity written for it; the situation lifts the second.
// A short query is ranked on whole entities, as before.
func TestLongQueriesFavourTheEntityWrittenForTheSituation(t *testing.T) {
	scatter := assistant.Entity{Type: assistant.Framework, Slug: "scatter", Title: "Machine shop shift planning", Summary: "The planner of a machine shop reschedules every morning.",
		Tags:     []string{"machine-shop", "planner", "shift", "morning"},
		KeyIdeas: []string{"The planner reschedules the shift every morning.", "Late orders pile up when a shop runs half shifts.", "Idle machines cost the shop money every shift.", "Running a machine shop means planning every morning.", "Orders run late and machines sit idle half the day in a CNC shop."}}
	written := assistant.Entity{Type: assistant.Framework, Slug: "written", Title: "Finite capacity scheduling", Summary: "Schedule to the capacity you have.",
		WhenToUse: []string{"Our CNC shop is late on orders although the machines sit idle half the day.", "We promise dates without knowing the load."}}
	s := retrieval.Build(1, withUnrelated(scatter, written))
	long := "Our CNC machine shop keeps running late on orders although the machines sit idle half the day and the planner reschedules every morning"
	if got := tokens(s.Search(assistant.SearchQuery{Text: long, Limit: 2})); len(got) != 2 || got[0] != "framework:written" {
		t.Errorf("long query ranked %v, want framework:written first", got)
	}
	short := "planner reschedules every morning"
	if got := tokens(s.Search(assistant.SearchQuery{Text: short, Limit: 2})); len(got) == 0 || got[0] != "framework:scatter" {
		t.Errorf("short query ranked %v, want framework:scatter first", got)
	}
}

// TestIndustryWordsWeighLightly: a kind of business named in one entity's
// example ("a regional bakery") pulls that entity to the top of
// any question from the industry; named as the question's industry
// (SearchQuery.Industry), the word only breaks ties, and the entity
// written for what is asked leads.
func TestIndustryWordsWeighLightly(t *testing.T) {
	rivals := assistant.Entity{Type: assistant.Framework, Slug: "rivals", Title: "Competing against larger rivals", Summary: "How a small firm wins against a big brand.",
		Tags:      []string{"bakery"},
		WhenToUse: []string{"A regional bakery likes our flour, but their buyer keeps holding up the big brand's price list."}}
	overtime := assistant.Entity{Type: assistant.Framework, Slug: "overtime", Title: "Shift planning", Summary: "Plan shifts to demand so that paid hours follow the work.",
		WhenToUse: []string{"Our overtime bill keeps rising every quarter."}}
	s := retrieval.Build(1, withUnrelated(rivals, overtime))
	q := "cut overtime at my bakery"
	if got := tokens(s.Search(assistant.SearchQuery{Text: q, Limit: 2})); len(got) == 0 || got[0] != "framework:rivals" {
		t.Fatalf("without industry words %q ranked %v; the test needs the rare industry word to lead", q, got)
	}
	if got := tokens(s.Search(assistant.SearchQuery{Text: q, Limit: 2, Industry: []string{textproc.Stem("bakery")}})); len(got) == 0 || got[0] != "framework:overtime" {
		t.Errorf("with %q as the industry, ranked %v, want framework:overtime first", "bakery", got)
	}
}

// withUnrelated returns es with eight entities on unrelated topics, so
// that the words of the entities under test are rare.
func withUnrelated(es ...assistant.Entity) []assistant.Entity {
	for _, topic := range []string{"pricing", "hiring", "churn", "cash", "quality", "negotiation", "onboarding", "forecasting"} {
		es = append(es, assistant.Entity{Type: assistant.Framework, Slug: topic, Title: topic, Summary: "About " + topic + " and how it is done.",
			WhenToUse: []string{"We have a problem with " + topic + "."}})
	}
	return es
}
