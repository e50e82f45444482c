package chat

import (
	"cmp"
	"slices"
	"strings"
	"sync"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/memo"
	"github.com/constraintlab/assistant/internal/textproc"
)

// termMemo remembers, across turns, the term set of each entity's text
// (what coverage compares a query's words with): an entity's text is often
// longer than textproc's memo takes (4 KB), and analysing it again on every
// search of every turn was about a tenth of a builtin turn. It keeps, per
// token, the set of the entity text it was last seen with; a hit requires
// the entity's text fields to be equal to the remembered ones (which are
// copied, so a caller's later change in place cannot alter them), so an
// entity changed by an import is analysed afresh whatever store it comes
// from. The zero value is ready to use (with maxRememberedEntities), and it
// is safe for concurrent use.
type termMemo struct {
	max  int64 // 0 for maxRememberedEntities
	once sync.Once
	sets *memo.Versions[assistant.Token, assistant.Entity, map[string]bool]
}

// maxRememberedEntities bounds a termMemo by default: several times the
// knowledge base, imported entities included.
const maxRememberedEntities = 4096

// terms returns the stems of everything e says (title, summary, tags, key
// ideas, when to use, pitfalls) as a set. The set is shared: callers must
// only read it.
func (m *termMemo) terms(e assistant.Entity) map[string]bool {
	m.once.Do(func() {
		m.sets = &memo.Versions[assistant.Token, assistant.Entity, map[string]bool]{
			MaxKeys: cmp.Or(m.max, maxRememberedEntities), Keep: textFields}
	})
	return m.sets.Get(e.Token(), e, sameText, func(e assistant.Entity) map[string]bool {
		return textproc.TermSet(entityText(e))
	})
}

// textFields is a copy of the fields of e that entityText reads.
func textFields(e assistant.Entity) assistant.Entity {
	return assistant.Entity{Type: e.Type, Slug: e.Slug, Title: e.Title, Summary: e.Summary, Tags: slices.Clone(e.Tags),
		KeyIdeas: slices.Clone(e.KeyIdeas), WhenToUse: slices.Clone(e.WhenToUse), Pitfalls: slices.Clone(e.Pitfalls)}
}

// sameText reports whether two entities say the same (the fields
// entityText reads).
func sameText(a, b assistant.Entity) bool {
	return a.Title == b.Title && a.Summary == b.Summary &&
		slices.Equal(a.Tags, b.Tags) && slices.Equal(a.KeyIdeas, b.KeyIdeas) &&
		slices.Equal(a.WhenToUse, b.WhenToUse) && slices.Equal(a.Pitfalls, b.Pitfalls)
}

// entityText is everything an entity says, as one text.
func entityText(e assistant.Entity) string {
	parts := []string{e.Title, e.Summary, strings.Join(e.Tags, " ")}
	for _, list := range [][]string{e.KeyIdeas, e.WhenToUse, e.Pitfalls} {
		parts = append(parts, strings.Join(list, " "))
	}
	return strings.Join(parts, " ")
}

// entityResultMemo remembers get_entity's JSON answer for each entity it
// was worked out from (by token, the entity's fields compared as termMemo
// compares them): the answer depends on the entity alone, and encoding it
// again was a tenth of a builtin turn's bytes. The zero value is ready to
// use, and it is safe for concurrent use.
type entityResultMemo struct {
	once    sync.Once
	results *memo.Versions[assistant.Token, assistant.Entity, string]
}

// of returns encode(entityResult(e)).
func (m *entityResultMemo) of(e assistant.Entity) string {
	m.once.Do(func() {
		m.results = &memo.Versions[assistant.Token, assistant.Entity, string]{
			MaxKeys: maxRememberedEntities, Keep: resultFields}
	})
	return m.results.Get(e.Token(), e, sameResult, func(e assistant.Entity) string {
		return encode(entityResult(e.Token(), e))
	})
}

// resultFields is a copy of the fields of e that entityResult reads.
func resultFields(e assistant.Entity) assistant.Entity {
	c := textFields(e)
	c.Authors, c.Archetypes, c.Related = slices.Clone(e.Authors), slices.Clone(e.Archetypes), slices.Clone(e.Related)
	if e.Year != nil {
		y := *e.Year
		c.Year = &y
	}
	return c
}

// sameResult reports whether two entities give the same get_entity
// answer (the fields entityResult reads).
func sameResult(a, b assistant.Entity) bool {
	return a.Type == b.Type && a.Slug == b.Slug && a.Title == b.Title && a.Summary == b.Summary &&
		(a.Year == nil) == (b.Year == nil) && (a.Year == nil || *a.Year == *b.Year) &&
		slices.Equal(a.Authors, b.Authors) && slices.Equal(a.KeyIdeas, b.KeyIdeas) &&
		slices.Equal(a.WhenToUse, b.WhenToUse) && slices.Equal(a.Pitfalls, b.Pitfalls) &&
		slices.Equal(a.Archetypes, b.Archetypes) && slices.Equal(a.Related, b.Related)
}
