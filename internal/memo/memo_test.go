package memo_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/constraintlab/assistant/internal/memo"
)

func TestBoundedRemembersAndStartsAgainWhenFull(t *testing.T) {
	m := memo.Bounded[string, int]{Max: 3, Remember: func(k string) bool { return len(k) <= 3 }}
	calls := 0
	length := func(k string) int { calls++; return len(k) }
	for _, k := range []string{"a", "bb", "a", "bb", "long key", "long key"} {
		if got := m.Get(k, length); got != len(k) {
			t.Fatalf("Get(%q) = %d", k, got)
		}
	}
	if calls != 4 { // a, bb, and the long key twice (never remembered)
		t.Errorf("%d computations, want 4", calls)
	}
	for _, k := range []string{"c", "d", "e"} { // "d" finds it full: it starts again
		m.Get(k, length)
	}
	if _, ok := m.Load("a"); ok {
		t.Error("a memo past its bound still holds its first key")
	}
	if _, ok := m.Load("e"); !ok {
		t.Error("a key stored after it started again is not remembered")
	}
}

func TestVersionsKeepsEqualSourcesOnly(t *testing.T) {
	var m memo.Versions[string, string, string]
	same := func(a, b string) bool { return a == b }
	calls := 0
	upper := func(s string) string { calls++; return strings.ToUpper(s) }
	m.PerKey = 2
	steps := []struct{ source, want string }{
		{"one", "ONE"}, {"one", "ONE"}, // remembered
		{"two", "TWO"}, {"one", "ONE"}, // an edit, then the first again: both kept
		{"three", "THREE"}, {"one", "ONE"}, // a third version pushes the oldest out
	}
	for i, s := range steps {
		if got := m.Get("k", s.source, same, upper); got != s.want {
			t.Fatalf("step %d: Get = %q, want %q", i, got, s.want)
		}
	}
	if calls != 4 { // one, two, three, and one again after it was pushed out
		t.Errorf("%d computations, want 4", calls)
	}
}

func TestConcurrentUse(t *testing.T) {
	var b memo.Bounded[int, int]
	b.Max = 50
	var v memo.Versions[int, int, int]
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				k := (i * (g + 1)) % 97
				if got := b.Get(k, func(k int) int { return k * 2 }); got != k*2 {
					t.Errorf("Bounded.Get(%d) = %d", k, got)
				}
				if got := v.Get(k%7, k, func(a, b int) bool { return a == b }, func(s int) int { return s + 1 }); got != k+1 {
					t.Errorf("Versions.Get(%d) = %d", k, got)
				}
			}
		})
	}
	wg.Wait()
}

func TestBoundedStartsAgainAtItsBytes(t *testing.T) {
	m := memo.Bounded[string, string]{Max: 1000, MaxBytes: 100, Size: func(k, v string) int64 { return int64(len(k) + len(v)) }}
	for i := range 10 { // 10 entries of 20 bytes: past 100 after the fifth
		k := fmt.Sprintf("key-%05d-", i)
		m.Store(k, k)
	}
	held := 0
	for i := range 10 {
		if _, ok := m.Load(fmt.Sprintf("key-%05d-", i)); ok {
			held++
		}
	}
	if held == 0 || held > 5 {
		t.Fatalf("held %d entries of 20 bytes under a 100-byte bound", held)
	}
}
