// Package memo holds the bounded memos the service keeps of pure
// functions: of text (stems, sentence splits, analysed passages and
// claims, the builtin model's readings) and of knowledge entities (an
// entity's analysed evidence, its term set, its card's JSON). A memo never
// changes an answer, only how often it is worked out; its values are
// shared by every caller and must never be modified, and so must the
// entities given to Versions as sources. Both types are safe for
// concurrent use, and their zero values are ready to use.
package memo

import (
	"sync"
	"sync/atomic"
)

// DefaultMax is the bound of a memo whose own is not set.
const DefaultMax = 4096

// Budget is the one budget of the memos of text (stems, term lists,
// sentence splits, analysed passages and claims, the builtin model's
// analyses and decoded tool results): the bytes they may hold together,
// about. Each takes a share of it as its MaxBytes (Share), so that however
// varied the requests, these memos hold no more than Budget between them.
// The memos of knowledge entities (an entity's evidence, term set, card
// JSON) are outside it: they hold a few versions of each entity of the
// knowledge base, so the knowledge bounds them, and putting them under a
// budget that varied text fills would make every turn work them out
// again.
const Budget = 48 << 20

// Share is fraction of Budget, in bytes.
func Share(fraction float64) int64 { return int64(fraction * Budget) }

// Bounded remembers values by key, up to Max keys (DefaultMax when 0).
// When it is full it forgets everything and starts again, so that a
// long-running server keeps what its requests read now rather than what
// the first ones read.
type Bounded[K comparable, V any] struct {
	Max int64
	// MaxBytes, with Size, bounds the memo by the bytes it holds too (a
	// share of Budget): when the sizes of the values stored reach it, it
	// starts again as when Max is reached. Size estimates the bytes one
	// entry holds: its key's and value's bytes and their headers.
	MaxBytes int64
	Size     func(K, V) int64
	// Remember, when set, says which keys are worth remembering (short
	// texts, say); the others are computed every time.
	Remember func(K) bool

	values sync.Map // K -> V
	n      atomic.Int64
	bytes  atomic.Int64
}

// Get returns compute(key), remembered.
func (m *Bounded[K, V]) Get(key K, compute func(K) V) V {
	if v, ok := m.Load(key); ok {
		return v
	}
	v := compute(key)
	m.Store(key, v)
	return v
}

// Load returns the value remembered for key.
func (m *Bounded[K, V]) Load(key K) (V, bool) {
	v, ok := m.values.Load(key)
	if !ok {
		var zero V
		return zero, false
	}
	return v.(V), true
}

// Store remembers v for key (unless Remember refuses the key).
func (m *Bounded[K, V]) Store(key K, v V) {
	if m.Remember != nil && !m.Remember(key) {
		return
	}
	if m.n.Load() >= bound(m.Max) || m.MaxBytes > 0 && m.bytes.Load() >= m.MaxBytes {
		// Two callers may both start again, and one may count a value
		// the other forgot: the bound is approximate, never exceeded by
		// much.
		m.values.Clear()
		m.n.Store(0)
		m.bytes.Store(0)
	}
	if _, loaded := m.values.LoadOrStore(key, v); !loaded {
		m.n.Add(1)
		if m.Size != nil {
			m.bytes.Add(m.Size(key, v))
		}
	}
}

// Versions remembers values worked out from sources that can change (a
// knowledge entity, edited by an import), by key (the entity's token): up
// to PerKey versions of each key (1 when 0), newest first, and up to
// MaxKeys keys (DefaultMax when 0; when full it starts again). A value is
// returned only for a source that same judges equal to the one it was
// worked out from, so an edited source is a new version. Comparing
// entities read from one knowledge snapshot is cheap: their strings share
// their bytes.
type Versions[K comparable, S, V any] struct {
	PerKey  int
	MaxKeys int64
	// Keep, when set, is applied to a source before it is remembered: a
	// copy of the parts same compares, for sources whose owner may change
	// them in place later.
	Keep func(S) S

	keys sync.Map // K -> *versionList[S, V]
	n    atomic.Int64
}

// versionList is the remembered versions of one key, newest first; the
// slice is replaced, never modified.
type versionList[S, V any] struct {
	list atomic.Pointer[[]version[S, V]]
}

type version[S, V any] struct {
	source S
	value  V
}

// Get returns the value remembered for key from a source equal to source
// (by same), or compute(source), remembered as key's newest version. Two
// concurrent calls adding a version of one key may drop one of the two: it
// is worked out again next time.
func (m *Versions[K, S, V]) Get(key K, source S, same func(a, b S) bool, compute func(S) V) V {
	l, found := m.keys.Load(key)
	if found {
		for _, v := range *l.(*versionList[S, V]).list.Load() {
			if same(v.source, source) {
				return v.value
			}
		}
	}
	value := compute(source)
	if m.Keep != nil {
		source = m.Keep(source)
	}
	if found {
		l := l.(*versionList[S, V])
		old := *l.list.Load()
		perKey := max(m.PerKey, 1)
		list := make([]version[S, V], 0, min(len(old)+1, perKey))
		list = append(list, version[S, V]{source, value})
		list = append(list, old[:min(len(old), perKey-1)]...)
		l.list.Store(&list)
		return value
	}
	if m.n.Load() >= bound(m.MaxKeys) {
		m.keys.Clear()
		m.n.Store(0)
	}
	l = &versionList[S, V]{}
	l.(*versionList[S, V]).list.Store(&[]version[S, V]{{source, value}})
	if _, loaded := m.keys.LoadOrStore(key, l); !loaded {
		m.n.Add(1)
	}
	return value
}

func bound(n int64) int64 {
	if n <= 0 {
		return DefaultMax
	}
	return n
}

// Entry sizes, for Size functions: a map entry's header, and a string's
// or a slice's.
const (
	EntryBytes  = 64
	StringBytes = 16
	SliceBytes  = 24
)

// StringsBytes estimates the bytes of a list of strings.
func StringsBytes(list []string) int64 {
	n := int64(SliceBytes)
	for _, s := range list {
		n += StringBytes + int64(len(s))
	}
	return n
}
