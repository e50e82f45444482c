package textproc_test

import (
	"strings"
	"testing"

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
