package knowledge_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/knowledge"
)

func TestEmbeddedAliasesFitTheCorpus(t *testing.T) {
	aliases, err := knowledge.EmbeddedAliases()
	if err != nil {
		t.Fatal(err)
	}
	if len(aliases) == 0 {
		t.Fatal("no aliases: the merged essays would no longer resolve")
	}
	files, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range aliases.Check(files) {
		t.Error(p)
	}
}

func TestAliasCheckFindsMistakes(t *testing.T) {
	files, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	aliases, err := knowledge.ParseAliases([]byte("framework:theory-of-constraints: framework:drum-buffer-rope\nblog:gone: framework:no-such-thing\n"))
	if err != nil {
		t.Fatal(err)
	}
	problems := aliases.Check(files)
	if len(problems) != 2 || !strings.Contains(problems[0].Error(), "no-such-thing") || !strings.Contains(problems[1].Error(), "still has that token") {
		t.Errorf("Check = %v, want a missing target and a live token", problems)
	}
	for _, bad := range []string{"not-a-token: framework:x", "blog:a: nonsense", "blog:a: blog:b\nblog:b: blog:c\n", "- a list"} {
		if _, err := knowledge.ParseAliases([]byte(bad)); err == nil {
			t.Errorf("ParseAliases(%q): no error", bad)
		}
	}
}

// mapStore is a KnowledgeStore of a fixed set of entities.
type mapStore struct {
	assistant.KnowledgeStore // unused methods
	entities                 map[assistant.Token]assistant.Entity
}

func (m mapStore) Entities(_ context.Context, tokens []assistant.Token) (map[assistant.Token]assistant.Entity, error) {
	out := map[assistant.Token]assistant.Entity{}
	for _, t := range tokens {
		if e, ok := m.entities[t]; ok {
			out[t] = e
		}
	}
	return out, nil
}

func TestWithAliasesResolvesOldTokens(t *testing.T) {
	tok := func(s string) assistant.Token {
		t.Helper()
		k, err := assistant.ParseToken(s)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	survivor := assistant.Entity{Type: assistant.Framework, Slug: "burn-multiple", Title: "Burn Multiple"}
	imported := assistant.Entity{Type: assistant.Blog, Slug: "kept", Title: "Imported with an alias's token"}
	store := mapStore{entities: map[assistant.Token]assistant.Entity{survivor.Token(): survivor, imported.Token(): imported}}
	aliases := knowledge.Aliases{
		tok("blog:sacks-2020-burn-multiple"): survivor.Token(),
		tok("blog:kept"):                     survivor.Token(),
	}
	s := knowledge.WithAliases(store, aliases)

	got, err := s.Entities(context.Background(), []assistant.Token{tok("blog:sacks-2020-burn-multiple"), tok("blog:kept"), tok("paper:missing")})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("got %d entities, want the alias and the real entity: %v", len(got), got)
	}
	if e := got[tok("blog:sacks-2020-burn-multiple")]; e.Token() != survivor.Token() {
		t.Errorf("the old token resolved to %v, want %v", e.Token(), survivor.Token())
	}
	if e := got[tok("blog:kept")]; e.Title != imported.Title {
		t.Errorf("a real entity with an alias's token: got %q, want the entity itself", e.Title)
	}
	both, _ := s.Entities(context.Background(), []assistant.Token{survivor.Token(), tok("blog:sacks-2020-burn-multiple")})
	if len(both) != 2 {
		t.Errorf("asking for the survivor and its alias: %d entities, want 2", len(both))
	}
}

// Lookup over a store that looks entities up one at a time follows the
// aliases as Entities does: the entity itself first, then its alias's.
func TestWithAliasesLookupFollowsAliases(t *testing.T) {
	survivor := assistant.Entity{Type: assistant.Framework, Slug: "burn-multiple", Title: "Burn Multiple"}
	imported := assistant.Entity{Type: assistant.Blog, Slug: "kept", Title: "Imported with an alias's token"}
	old := assistant.Token{Type: assistant.Blog, Slug: "sacks-2020-burn-multiple"}
	store := lookupStore{mapStore{entities: map[assistant.Token]assistant.Entity{survivor.Token(): survivor, imported.Token(): imported}}}
	s := knowledge.WithAliases(store, knowledge.Aliases{old: survivor.Token(), imported.Token(): survivor.Token()})
	l, ok := s.(interface {
		Lookup(context.Context) (func(assistant.Token) (assistant.Entity, bool), error)
	})
	if !ok {
		t.Fatal("the aliased store has no Lookup")
	}
	find, err := l.Lookup(context.Background())
	if err != nil || find == nil {
		t.Fatalf("Lookup: %v, %v", find != nil, err)
	}
	tokens := []assistant.Token{old, imported.Token(), survivor.Token(), {Type: assistant.Paper, Slug: "missing"}}
	want, err := s.Entities(context.Background(), tokens)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range tokens {
		e, ok := find(tok)
		w, wok := want[tok]
		if ok != wok || e.Title != w.Title || e.Token() != w.Token() {
			t.Errorf("%v: Lookup found %v (%v), Entities %v (%v)", tok, e.Token(), ok, w.Token(), wok)
		}
	}
	// Without a Lookup of its own, the store's aliased Lookup is nil.
	if find, err := knowledge.WithAliases(store.mapStore, knowledge.Aliases{old: survivor.Token()}).(interface {
		Lookup(context.Context) (func(assistant.Token) (assistant.Entity, bool), error)
	}).Lookup(context.Background()); find != nil || err != nil {
		t.Errorf("over a store without Lookup: %v, %v; want nil", find != nil, err)
	}
}

// lookupStore is a mapStore that looks entities up one at a time.
type lookupStore struct{ mapStore }

func (s lookupStore) Lookup(context.Context) (func(assistant.Token) (assistant.Entity, bool), error) {
	return func(t assistant.Token) (assistant.Entity, bool) {
		e, ok := s.entities[t]
		return e, ok
	}, nil
}

func TestEmbeddedPremisesFitTheCorpus(t *testing.T) {
	premises := knowledge.DefaultPremises()
	if len(premises) == 0 {
		t.Fatal("no premises: the cards written for one precondition would answer any question again")
	}
	files, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range premises.Check(files) {
		t.Error(p)
	}
	champion := assistant.Token{Type: assistant.Framework, Slug: "champion-departure-recovery"}
	if !slices.Contains(premises.Of(champion), "champion") {
		t.Errorf("premises of %s = %v, want the word champion among them", champion, premises.Of(champion))
	}
}

func TestPremisesRefuseMistakes(t *testing.T) {
	for _, bad := range []string{
		"not-a-token: [x]",
		"framework:theory-of-constraints: []",
		"framework:theory-of-constraints: [\"--\"]",
		"framework:theory-of-constraints: x: y",
		"framework:theory-of-constraints: [shift, shifts]",
	} {
		if _, err := knowledge.ParsePremises([]byte(bad)); err == nil {
			t.Errorf("ParsePremises(%q) = nil error, want one", bad)
		}
	}
	p, err := knowledge.ParsePremises([]byte("framework:no-such-thing: [gone]\n"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if problems := p.Check(files); len(problems) != 1 || !strings.Contains(problems[0].Error(), "no-such-thing") {
		t.Errorf("Check = %v, want the missing token", problems)
	}
}
