package textproc_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/constraintlab/assistant/internal/textproc"
)

func TestTerms(t *testing.T) {
	got := strings.Join(textproc.Terms("Customers are leaving: we can't stop the churning of our subscriptions!"), " ")
	if got != "custom leav stop churn subscript" {
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

func TestContractionsAreNotContentWords(t *testing.T) {
	for _, text := range []string{"don't", "dont", "can't", "cant", "won’t", "doesn't", "we're", "it's", "I'm", "cannot"} {
		if terms := textproc.Terms(text); len(terms) != 0 {
			t.Errorf("Terms(%q) = %q", text, terms)
		}
	}
	if got := strings.Join(textproc.Words("The owner's café—Müller's"), " "); got != "the owner s café müller s" {
		t.Errorf("Words = %q", got)
	}
}

func TestStopList(t *testing.T) {
	l := textproc.NewStopList([]string{"week"}, []string{"not"})
	if !l.Contains("week") || l.Contains("not") || !l.Contains("the") || l.Contains("churn") {
		t.Error("StopList does not add or keep")
	}
}

func TestCutKeepsRunes(t *testing.T) {
	s := strings.Repeat("é", 200) // 400 bytes, no space
	for max := 1; max < 300; max++ {
		got := textproc.Cut(s, max)
		if !utf8.ValidString(got) || len(got) > max+len("…") {
			t.Fatalf("Cut(%d) = %q", max, got)
		}
	}
	if got := textproc.Cut("ab cd ef", 6); got != "ab cd…" {
		t.Errorf("Cut = %q", got)
	}
	if got := textproc.Cut("short", 10); got != "short" {
		t.Errorf("Cut = %q", got)
	}
}
