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
