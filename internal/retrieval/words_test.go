package retrieval

import (
	"slices"
	"testing"

	"github.com/constraintlab/assistant/internal/textproc"
)

// TestBuilderSplitsAsTextprocWords: the builder's own word splitter for
// ASCII text gives the words textproc.Words gives (the one splitter of
// retrieval), whatever the case, digits and punctuation.
func TestBuilderSplitsAsTextprocWords(t *testing.T) {
	b := newBuilder(&Snapshot{terms: map[string]uint32{}})
	for _, text := range []string{
		"", "  ", "Theory of Constraints", "don't stop: owner's 80/20 RULE", "A1b2C3--x_y",
		"MiXeD case, MIXED CASE and mixed case.", "Café naïve ÉCOLE", "tabs\tand\nlines", "123 4five SIX7",
	} {
		b.ids = b.ids[:0]
		b.addWords(text)
		var want []uint32
		for _, w := range textproc.Words(text) {
			want = append(want, b.termOf(w))
		}
		if !slices.Equal(b.ids, want) {
			t.Errorf("%q: term ids %v, want %v", text, b.ids, want)
		}
	}
}
