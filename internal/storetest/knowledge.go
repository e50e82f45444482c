package storetest

import (
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/constraintlab/assistant/internal/assistant"
)

func tok(typ assistant.EntityType, slug string) assistant.Token {
	return assistant.Token{Type: typ, Slug: slug}
}

// entity is a minimal valid entity: no year, no URL, few lists.
func entity(typ assistant.EntityType, slug, title string) assistant.Entity {
	return assistant.Entity{Type: typ, Slug: slug, Title: title, Summary: "A summary about " + title,
		Tags: []string{"t"}, Archetypes: []string{"activation"}}
}

// fullEntity sets every field.
func fullEntity(slug string) assistant.Entity {
	year := 1984
	return assistant.Entity{
		Type: assistant.Paper, Slug: slug, Title: "The Goal, " + slug, Authors: []string{"Eliyahu M. Goldratt", "Jeff Cox"},
		Year: &year, URL: "https://example.com/" + slug, URLNote: "", Tags: []string{"bottleneck", "flow"},
		Archetypes: []string{"throughput", "activation"}, Related: []assistant.Token{tok(assistant.Framework, "okrs"), tok(assistant.Blog, "b-1")},
		Summary: "Find the constraint; exploit it; subordinate everything else.", KeyIdeas: []string{"One constraint at a time.", "Ünïcødé and \"quotes\"."},
		WhenToUse: []string{"When work piles up."}, Pitfalls: []string{"Optimising a non-constraint."},
	}
}

// norm makes entities comparable: an empty list and a missing one are the
// same entity.
func norm(e assistant.Entity) assistant.Entity {
	for _, l := range []*[]string{&e.Authors, &e.Tags, &e.Archetypes, &e.KeyIdeas, &e.WhenToUse, &e.Pitfalls} {
		if len(*l) == 0 {
			*l = nil
		}
	}
	if len(e.Related) == 0 {
		e.Related = nil
	}
	return e
}

func sameEntity(t *testing.T, got, want assistant.Entity) {
	t.Helper()
	if g, w := norm(got), norm(want); !reflect.DeepEqual(g, w) {
		t.Errorf("entity %s:\n got %+v\nwant %+v", want.Token(), g, w)
	}
}

func all(t *testing.T, s Store) map[assistant.Token]assistant.Entity {
	t.Helper()
	list, err := s.AllEntities(t.Context())
	must(t, err)
	out := map[assistant.Token]assistant.Entity{}
	for _, e := range list {
		out[e.Token()] = e
	}
	return out
}

func doSync(t *testing.T, s Store, origin string, entities ...assistant.Entity) assistant.SyncResult {
	t.Helper()
	res, err := s.SyncEntities(t.Context(), origin, entities)
	must(t, err)
	return res
}

func wantResult(t *testing.T, what string, got, want assistant.SyncResult) {
	t.Helper()
	if got != want {
		t.Errorf("%s: %+v, want %+v", what, got, want)
	}
}

func testSyncRoundTrip(t *testing.T, open Opener) {
	s := open(t)
	_, err := s.SyncEntities(t.Context(), "bundled", nil)
	wantCode(t, "unknown origin", err, assistant.EInvalid)

	full, minimal := fullEntity("the-goal"), entity(assistant.Blog, "short", "Short")
	wantResult(t, "first sync", doSync(t, s, assistant.OriginEmbedded, full, minimal), assistant.SyncResult{Inserted: 2})
	got := all(t, s)
	if len(got) != 2 {
		t.Fatalf("stored %d entities, want 2", len(got))
	}
	full.Origin, minimal.Origin = assistant.OriginEmbedded, assistant.OriginEmbedded
	sameEntity(t, got[full.Token()], full)
	sameEntity(t, got[minimal.Token()], minimal)
	if e := got[minimal.Token()]; e.Year != nil || e.URL != "" {
		t.Errorf("missing year and URL came back as %v, %q", e.Year, e.URL)
	}
	wantResult(t, "same sync again", doSync(t, s, assistant.OriginEmbedded, full, minimal), assistant.SyncResult{Unchanged: 2})
}

func testSyncOrigins(t *testing.T, open Opener) {
	s := open(t)
	one, two, three := entity(assistant.Framework, "one", "One"), entity(assistant.Framework, "two", "Two"), entity(assistant.Framework, "three", "Three")
	doSync(t, s, assistant.OriginEmbedded, one, two, three)

	// A changed entity is updated, one no longer listed deleted.
	changed := one
	changed.Summary = "A new summary."
	wantResult(t, "change and drop", doSync(t, s, assistant.OriginEmbedded, changed, two), assistant.SyncResult{Updated: 1, Deleted: 1, Unchanged: 1})
	got := all(t, s)
	if _, ok := got[three.Token()]; ok {
		t.Error("an entity dropped from the sync is still stored")
	}
	if got[one.Token()].Summary != "A new summary." {
		t.Errorf("the changed entity was not updated: %+v", got[one.Token()])
	}

	// An imported sync replaces the embedded entity with its token...
	imported := two
	imported.Title = "Two, imported"
	wantResult(t, "imported sync", doSync(t, s, assistant.OriginImported, imported), assistant.SyncResult{Updated: 1})
	// ...which then survives embedded syncs, while the imported sync never
	// deletes embedded entities.
	wantResult(t, "embedded sync after import", doSync(t, s, assistant.OriginEmbedded, changed, two), assistant.SyncResult{Unchanged: 2})
	got = all(t, s)
	if e := got[two.Token()]; e.Title != "Two, imported" || e.Origin != assistant.OriginImported {
		t.Errorf("the imported entity did not win: %+v", e)
	}
	wantResult(t, "embedded sync that drops the imported token", doSync(t, s, assistant.OriginEmbedded, changed), assistant.SyncResult{Unchanged: 1})
	if _, ok := all(t, s)[two.Token()]; !ok {
		t.Error("an embedded sync deleted an imported entity")
	}
	wantResult(t, "imported sync of nothing", doSync(t, s, assistant.OriginImported), assistant.SyncResult{Deleted: 1})
	got = all(t, s)
	if _, ok := got[two.Token()]; ok || len(got) != 1 || got[one.Token()].Origin != assistant.OriginEmbedded {
		t.Errorf("after the imported sync of nothing: %v", got)
	}
}

func testSyncFailure(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	doSync(t, s, assistant.OriginEmbedded, entity(assistant.Framework, "kept", "Kept"), entity(assistant.Framework, "dropped", "Dropped"))
	before := all(t, s)
	v0, err := s.KnowledgeVersion(ctx)
	must(t, err)
	bad := entity("video", "clip", "Not a type") // the store refuses the row
	if _, err := s.SyncEntities(ctx, assistant.OriginEmbedded, []assistant.Entity{entity(assistant.Framework, "new", "New"), bad}); err == nil {
		t.Fatal("a sync with an entity of an unknown type succeeded")
	}
	if after := all(t, s); !reflect.DeepEqual(after, before) {
		t.Errorf("a failed sync changed the entities: %v", after)
	}
	if v, _ := s.KnowledgeVersion(ctx); v != v0 {
		t.Errorf("a failed sync moved the version from %d to %d", v0, v)
	}
}

// testSyncConcurrent is several instances starting at once on one
// database: every sync succeeds and the entities are stored once.
func testSyncConcurrent(t *testing.T, open Opener) {
	s := open(t)
	var corpus []assistant.Entity
	for i := range 30 {
		corpus = append(corpus, entity(assistant.Framework, fmt.Sprintf("e%02d", i), fmt.Sprint("Entity ", i)))
	}
	const n = 4
	results := make([]assistant.SyncResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { results[i], errs[i] = s.SyncEntities(t.Context(), assistant.OriginEmbedded, corpus) })
	}
	wg.Wait()
	inserted := 0
	for i := range n {
		must(t, errs[i])
		inserted += results[i].Inserted
	}
	if inserted != len(corpus) {
		t.Errorf("concurrent syncs inserted %d entities in all, want %d: %+v", inserted, len(corpus), results)
	}
	if got := all(t, s); len(got) != len(corpus) {
		t.Errorf("stored %d entities, want %d", len(got), len(corpus))
	}
}

func testImport(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	embedded := entity(assistant.Framework, "okrs", "OKRs")
	other := entity(assistant.Framework, "kaizen", "Kaizen")
	doSync(t, s, assistant.OriginEmbedded, embedded, other)

	_, err := s.ImportEntities(ctx, []assistant.Entity{entity(assistant.Paper, "fine", "Fine"), entity(assistant.Paper, "Not Valid", "Bad")})
	wantCode(t, "an invalid token", err, assistant.EInvalid)
	if len(all(t, s)) != 2 {
		t.Error("a refused import stored something")
	}

	replaced := embedded
	replaced.Title = "OKRs, our version"
	res, err := s.ImportEntities(ctx, []assistant.Entity{replaced, fullEntity("new-paper")})
	must(t, err)
	wantResult(t, "import", res, assistant.SyncResult{Inserted: 1, Updated: 1})
	got := all(t, s)
	if e := got[embedded.Token()]; e.Title != "OKRs, our version" || e.Origin != assistant.OriginImported {
		t.Errorf("the import did not replace the embedded entity: %+v", e)
	}
	if e := got[other.Token()]; e.Origin != assistant.OriginEmbedded {
		t.Errorf("an entity the import did not list changed: %+v", e)
	}
	want := fullEntity("new-paper")
	want.Origin = assistant.OriginImported
	sameEntity(t, got[want.Token()], want)

	res, err = s.ImportEntities(ctx, []assistant.Entity{replaced})
	must(t, err)
	wantResult(t, "the same import again", res, assistant.SyncResult{Unchanged: 1})
	if len(all(t, s)) != 3 {
		t.Error("an import deleted entities it did not list")
	}
	wantResult(t, "embedded sync after the import", doSync(t, s, assistant.OriginEmbedded, embedded, other), assistant.SyncResult{Unchanged: 2})
	if e := all(t, s)[embedded.Token()]; e.Title != "OKRs, our version" {
		t.Errorf("an embedded sync overwrote an imported entity: %+v", e)
	}
}

func testEntities(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	a, b := entity(assistant.Framework, "a", "A"), fullEntity("b")
	doSync(t, s, assistant.OriginEmbedded, a, b)
	got, err := s.Entities(ctx, []assistant.Token{a.Token(), tok(assistant.Framework, "missing"), b.Token(), a.Token()})
	must(t, err)
	if len(got) != 2 {
		t.Fatalf("Entities = %d entities, want 2 (the missing token absent): %v", len(got), got)
	}
	b.Origin = assistant.OriginEmbedded
	sameEntity(t, got[b.Token()], b)
	got, err = s.Entities(ctx, nil)
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("Entities(nil) = %v, %v; want an empty map", got, err)
	}
}

func testAllEntitiesOrder(t *testing.T, open Opener) {
	s := open(t)
	// Byte order, whatever the database's locale: '-' < '0' < '_' < 'a'.
	var list []assistant.Entity
	for _, tk := range []assistant.Token{tok(assistant.Paper, "ab"), tok(assistant.Framework, "a_b"), tok(assistant.Blog, "z"),
		tok(assistant.Framework, "a-b"), tok(assistant.Framework, "ab"), tok(assistant.Framework, "a0")} {
		list = append(list, entity(tk.Type, tk.Slug, tk.Slug))
	}
	doSync(t, s, assistant.OriginEmbedded, list...)
	got, err := s.AllEntities(t.Context())
	must(t, err)
	var tokens []string
	for _, e := range got {
		tokens = append(tokens, e.Token().String())
	}
	want := []string{"blog:z", "framework:a-b", "framework:a0", "framework:a_b", "framework:ab", "paper:ab"}
	if !reflect.DeepEqual(tokens, want) {
		t.Errorf("AllEntities order %v, want %v", tokens, want)
	}
}

func testStats(t *testing.T, open Opener) {
	s := open(t)
	st, err := s.KnowledgeStats(t.Context())
	must(t, err)
	if st != (assistant.KnowledgeStats{}) {
		t.Errorf("empty store: %+v", st)
	}
	doSync(t, s, assistant.OriginEmbedded, entity(assistant.Framework, "a", "A"), entity(assistant.Framework, "b", "B"),
		entity(assistant.Paper, "c", "C"), entity(assistant.Blog, "d", "D"), entity(assistant.Blog, "e", "E"), entity(assistant.Blog, "f", "F"))
	st, err = s.KnowledgeStats(t.Context())
	must(t, err)
	if want := (assistant.KnowledgeStats{Total: 6, Frameworks: 2, Papers: 1, Blogs: 3}); st != want {
		t.Errorf("stats %+v, want %+v", st, want)
	}
}

func testKnowledgeVersion(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	last, err := s.KnowledgeVersion(ctx)
	must(t, err)
	step := func(what string, moves bool, do func()) {
		t.Helper()
		do()
		v, err := s.KnowledgeVersion(ctx)
		must(t, err)
		if moves && v == last {
			t.Errorf("%s did not move the version (%d)", what, v)
		}
		if !moves && v != last {
			t.Errorf("%s moved the version from %d to %d", what, last, v)
		}
		last = v
	}
	one, two := entity(assistant.Framework, "one", "One"), entity(assistant.Framework, "two", "Two")
	step("an insert", true, func() { doSync(t, s, assistant.OriginEmbedded, one, two) })
	step("a sync that changes nothing", false, func() { doSync(t, s, assistant.OriginEmbedded, one, two) })
	changed := one
	changed.Title = "One, changed"
	step("an update", true, func() { doSync(t, s, assistant.OriginEmbedded, changed, two) })
	step("a delete", true, func() { doSync(t, s, assistant.OriginEmbedded, changed) })
	step("an import", true, func() { _, err := s.ImportEntities(ctx, []assistant.Entity{two}); must(t, err) })
	step("an import that changes nothing", false, func() { _, err := s.ImportEntities(ctx, []assistant.Entity{two}); must(t, err) })
	step("an empty import", false, func() { _, err := s.ImportEntities(ctx, nil); must(t, err) })
	step("recording citations", false, func() {
		must(t, s.RecordCitations(ctx, []assistant.CitationEvent{{ResponseID: "r", Token: one.Token(), At: day}}))
	})
}
