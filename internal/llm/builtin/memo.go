package builtin

import (
	"sync"
	"sync/atomic"
)

// memo remembers the results of a pure function of a text, for texts up
// to maxMemoKey bytes and up to max of them (then it computes each time,
// as textproc's memos do). Every chat turn reads the same knowledge-base
// sentences and the same persona lines again, so their analyses are worth
// keeping. The values are shared by every caller: they must never be
// modified.
type memo[V any] struct {
	values     sync.Map // text -> V
	remembered atomic.Int64
	max        int64
}

// maxMemoKey is the longest text a memo remembers: sentences and lines,
// not whole documents.
const maxMemoKey = 4096

// get returns compute(text), remembered.
func (m *memo[V]) get(text string, compute func(string) V) V {
	if v, ok := m.values.Load(text); ok {
		return v.(V)
	}
	v := compute(text)
	if len(text) <= maxMemoKey && m.remembered.Load() < m.max {
		if _, loaded := m.values.LoadOrStore(text, v); !loaded {
			m.remembered.Add(1)
		}
	}
	return v
}
