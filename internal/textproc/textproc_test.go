package textproc_test

import (
	"strings"
	"testing"
	"time"
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

func TestWordCountAndFirstWordAgreeWithWords(t *testing.T) {
	for _, text := range []string{"", "  ", "Don't stop", "Measure the WIP, then cut it.", "İstanbul grows", "café au lait", "3 steps -- 42x", "...Hello"} {
		words := textproc.Words(text)
		if got := textproc.WordCount(text); got != len(words) {
			t.Errorf("WordCount(%q) = %d, Words has %d", text, got, len(words))
		}
		first := ""
		if len(words) > 0 {
			first = words[0]
		}
		if got := textproc.FirstWord(text); got != first {
			t.Errorf("FirstWord(%q) = %q, want %q", text, got, first)
		}
	}
}

// TestBritishAndAmericanSpellingsShareAStem: the knowledge base is written
// in British English and many users write American English.
func TestBritishAndAmericanSpellingsShareAStem(t *testing.T) {
	for _, pair := range [][2]string{
		{"utilisation", "utilization"}, {"prioritise", "prioritize"}, {"prioritising", "prioritizing"},
		{"organisations", "organizations"}, {"analysed", "analyzed"}, {"behaviour", "behavior"},
		{"behavioural", "behavioral"}, {"labour", "labor"}, {"centre", "center"}, {"centres", "centers"},
		{"catalogue", "catalog"}, {"licence", "license"}, {"defence", "defense"}, {"programme", "program"},
		{"judgement", "judgment"}, {"apologised", "apologized"}, {"fulfilment", "fulfillment"},
	} {
		if uk, us := textproc.Stem(pair[0]), textproc.Stem(pair[1]); uk != us {
			t.Errorf("Stem(%q) = %q, Stem(%q) = %q", pair[0], uk, pair[1], us)
		}
	}
	// Words that only look like the rules' endings keep their own stems.
	for _, pair := range [][2]string{{"raise", "raze"}, {"rise", "rize"}, {"four", "for"}, {"hour", "hor"}, {"analysis", "analyze"}} {
		if a, b := textproc.Stem(pair[0]), textproc.Stem(pair[1]); a == b {
			t.Errorf("Stem(%q) = Stem(%q) = %q", pair[0], pair[1], a)
		}
	}
}
