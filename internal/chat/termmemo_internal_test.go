package chat

import (
	"maps"
	"testing"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/textproc"
)

func TestTermMemo(t *testing.T) {
	m := &termMemo{max: 2}
	e := assistant.Entity{Type: assistant.Framework, Slug: "a", Title: "Drum buffer rope",
		Summary: "Pace the work by the bottleneck.", Tags: []string{"flow"}, KeyIdeas: []string{"Protect the drum."}}
	want := func(e assistant.Entity) map[string]bool { return textproc.TermSet(entityText(e)) }
	if got := m.terms(e); !maps.Equal(got, want(e)) {
		t.Fatalf("terms = %v, want %v", got, want(e))
	}
	// A changed entity is analysed afresh, even when its caller changed
	// the list it was first seen with in place.
	e.KeyIdeas[0] = "Measure throughput."
	if got := m.terms(e); !got["throughput"] || !maps.Equal(got, want(e)) {
		t.Errorf("after an in-place change: %v, want %v", got, want(e))
	}
	e2 := e
	e2.Tags = append(e.Tags, "queue")
	if got := m.terms(e2); !got["queue"] {
		t.Errorf("a new tag is missing: %v", got)
	}
	// The memo keeps at most its bound (internal/memo tests how).
	for _, slug := range []string{"b", "c", "d"} {
		m.terms(assistant.Entity{Type: assistant.Paper, Slug: slug, Title: slug})
	}
}

func TestEntityResultMemo(t *testing.T) {
	var m entityResultMemo
	year := 1984
	e := assistant.Entity{Type: assistant.Paper, Slug: "a", Title: "The Goal", Authors: []string{"Goldratt"}, Year: &year,
		Summary: "A novel.", KeyIdeas: []string{"Find the constraint."}, Archetypes: []string{"capacity"},
		Related: []assistant.Token{{Type: assistant.Framework, Slug: "toc"}}}
	want := func(e assistant.Entity) string { return encode(entityResult(e.Token(), e)) }
	if got := m.of(e); got != want(e) {
		t.Fatalf("of = %s, want %s", got, want(e))
	}
	// Every field the answer shows, changed in place, is a new version.
	e.KeyIdeas[0] = "Exploit the constraint."
	year = 1992
	e.Related[0].Slug = "dbr"
	if got := m.of(e); got != want(e) {
		t.Errorf("after in-place changes: %s, want %s", got, want(e))
	}
	e.Authors = append(e.Authors, "Cox")
	if got := m.of(e); got != want(e) {
		t.Errorf("after a new author: %s, want %s", got, want(e))
	}
}
