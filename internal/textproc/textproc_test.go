package textproc_test

import (
	"strings"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/textproc"
)

func TestTerms(t *testing.T) {
	got := strings.Join(textproc.Terms("Customers are leaving: we can't stop the churning of our subscriptions!"), " ")
	if got != "custom leav cant stop churn subscript" {
		t.Errorf("Terms = %q", got)
	}
}

func TestSentences(t *testing.T) {
	got := textproc.Sentences("J. F. C. Kingman wrote it in 1961. It was short! Was it? Yes, e.g. this one. End")
	want := []string{"J. F. C. Kingman wrote it in 1961.", "It was short!", "Was it?", "Yes, e.g. this one.", "End"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Sentences = %q", got)
	}
}

// TestSentencesIsLinear: a long run of candidate sentence ends that are
// all abbreviations (". . . .") is split in linear time; it was quadratic.
func TestSentencesIsLinear(t *testing.T) {
	text := strings.Repeat(". ", 100_000) + "The end. J. Smith wrote the book. Done"
	start := time.Now()
	got := textproc.Sentences(text)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("200,000 characters took %v", d)
	}
	if len(got) != 3 || !strings.HasSuffix(got[0], ". The end.") || got[1] != "J. Smith wrote the book." || got[2] != "Done" {
		t.Errorf("%d sentences; the last two: %.80q", len(got), got[max(1, len(got)-2):])
	}
}
