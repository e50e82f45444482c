package chat

import (
	"slices"
	"strings"
	"sync"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/textproc"
)

// termMemo remembers, across turns, the term set of each entity's text
// (what coverage compares a query's words with): an entity's text is often
// longer than textproc's memo takes (4 KB), and analysing it again on every
// search of every turn was about a tenth of a builtin turn. It maps a token
// to the term set of the entity text it was last seen with; a hit requires
// the entity's text fields to be equal to the remembered ones, so an entity
// changed by an import is analysed afresh whatever store it comes from.
// The zero value is ready to use (with maxRememberedEntities), and it is
// safe for concurrent use.
type termMemo struct {
	mu      sync.RWMutex
	entries map[assistant.Token]termEntry
	max     int // 0 for maxRememberedEntities
}

// maxRememberedEntities bounds a termMemo by default: several times the
// knowledge base, imported entities included.
const maxRememberedEntities = 4096

// termEntry is one remembered entity: its text fields (the lists cloned, so
// that a caller's later change to its entity cannot alter them) and their
// term set.
type termEntry struct {
	title, summary            string
	tags, keyIdeas, whenToUse []string
	pitfalls                  []string
	set                       map[string]bool
}

// terms returns the stems of everything e says (title, summary, tags, key
// ideas, when to use, pitfalls) as a set. The set is shared: callers must
// only read it.
func (m *termMemo) terms(e assistant.Entity) map[string]bool {
	t := e.Token()
	m.mu.RLock()
	entry, ok := m.entries[t]
	m.mu.RUnlock()
	if ok && entry.describes(e) {
		return entry.set
	}
	entry = termEntry{title: e.Title, summary: e.Summary, tags: slices.Clone(e.Tags),
		keyIdeas: slices.Clone(e.KeyIdeas), whenToUse: slices.Clone(e.WhenToUse), pitfalls: slices.Clone(e.Pitfalls)}
	entry.set = textproc.TermSet(entityText(e))
	m.mu.Lock()
	if m.entries == nil {
		m.entries = map[assistant.Token]termEntry{}
	}
	limit := m.max
	if limit == 0 {
		limit = maxRememberedEntities
	}
	if _, present := m.entries[t]; !present && len(m.entries) >= limit {
		for old := range m.entries { // full: forget one entity, any
			delete(m.entries, old)
			break
		}
	}
	m.entries[t] = entry
	m.mu.Unlock()
	return entry.set
}

// describes reports whether the entry was made from e's text fields.
func (entry termEntry) describes(e assistant.Entity) bool {
	return entry.title == e.Title && entry.summary == e.Summary &&
		slices.Equal(entry.tags, e.Tags) && slices.Equal(entry.keyIdeas, e.KeyIdeas) &&
		slices.Equal(entry.whenToUse, e.WhenToUse) && slices.Equal(entry.pitfalls, e.Pitfalls)
}

// entityText is everything an entity says, as one text.
func entityText(e assistant.Entity) string {
	parts := []string{e.Title, e.Summary, strings.Join(e.Tags, " ")}
	for _, list := range [][]string{e.KeyIdeas, e.WhenToUse, e.Pitfalls} {
		parts = append(parts, strings.Join(list, " "))
	}
	return strings.Join(parts, " ")
}
