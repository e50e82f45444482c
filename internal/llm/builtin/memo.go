package builtin

import (
	"sync"
	"sync/atomic"
)

// memo remembers the results of a pure function of a text, for texts up
// to maxKey bytes and about max of them. When it is full it forgets
// everything and starts again, so that in a long-running server it keeps
// serving what turns read now rather than what the first ones read. The
// values are shared by every caller: they must never be modified.
type memo[V any] struct {
	values     sync.Map // text -> V
	remembered atomic.Int64
	max        int64
	maxKey     int
}

// get returns compute(text), remembered.
func (m *memo[V]) get(text string, compute func(string) V) V {
	if v, ok := m.values.Load(text); ok {
		return v.(V)
	}
	v := compute(text)
	if len(text) > m.maxKey {
		return v
	}
	if m.remembered.Load() >= m.max {
		// Two calls may both start again, and one may count a value the
		// other forgot: the bound is approximate, never exceeded by much.
		m.values.Clear()
		m.remembered.Store(0)
	}
	if _, loaded := m.values.LoadOrStore(text, v); !loaded {
		m.remembered.Add(1)
	}
	return v
}
