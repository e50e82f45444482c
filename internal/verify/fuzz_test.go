package verify_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/verify"
)

// FuzzSplitClaims: SplitClaims never panics, and every claim is non-empty,
// valid UTF-8 when the input is, and cites only well-formed tokens.
func FuzzSplitClaims(f *testing.F) {
	for _, s := range []string{
		"The constraint is the bottleneck [framework:theory-of-constraints]. Fix it first.",
		"# Heading\n- First, measure the queue length every day.\n2) Then cut the batch size in half.",
		"Is this a question? It is not a claim:\n**Bold text that makes a claim here.**",
		"Dr. J. Smith wrote it in 1984 [paper:goldratt-1984][essay:x]. Then e.g. this.",
		"", "\n\n", "[framework:]", "a b c d [", "”’)?", "\x00\xff\xfe", strings.Repeat("word ", 500),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range verify.SplitClaims(s) {
			if strings.TrimSpace(c.Text) == "" {
				t.Fatalf("empty claim from %q", s)
			}
			if utf8.ValidString(s) && !utf8.ValidString(c.Text) {
				t.Fatalf("claim %q is not valid UTF-8", c.Text)
			}
			for _, tok := range c.Citations {
				if !strings.Contains(c.Text, "["+tok.String()+"]") {
					t.Fatalf("claim %q cites %v, which is not in it", c.Text, tok)
				}
			}
		}
	})
}

// FuzzEvidenceLocation: checking any claim against any entity never
// panics, and every evidence's field and UTF-16 offsets select its quote
// from that field of the entity (for valid UTF-8 text, as JSON carries).
func FuzzEvidenceLocation(f *testing.F) {
	f.Add("Queues grow when utilization approaches one", "Flow 🚀 λ. Queues grow when utilization approaches one. Less is more.", "Queues grow fast.", "queue")
	f.Add("Profit falls under 2% after launch", "Profit rose to 2.5% after launch, before the cut.", "Profit rises.", "profit")
	f.Add("X drives Y before Z", "Y drives X after Z.", "", "")
	f.Fuzz(func(t *testing.T, claim, summary, idea, tag string) {
		year := 1999
		e := assistant.Entity{Type: "framework", Slug: "fuzz", Title: "Fuzz " + tag, Year: &year, Authors: []string{"Ann Lee"},
			Summary: summary, KeyIdeas: []string{idea}, WhenToUse: []string{summary}, Tags: []string{tag}}
		conf := verify.New().Check(claim+" [framework:fuzz].", map[assistant.Token]assistant.Entity{e.Token(): e}, nil)
		for _, v := range conf.Verdicts {
			ev := v.Evidence
			if ev == nil || ev.Field == "" {
				continue
			}
			text := verify.FieldText(e, ev.Field)
			if !utf8.ValidString(text) {
				continue
			}
			if got, ok := verify.UTF16Slice(text, ev.Start, ev.End); !ok || got != ev.Quote {
				t.Fatalf("%s[%d:%d] of %q selects %q, quote %q", ev.Field, ev.Start, ev.End, text, got, ev.Quote)
			}
		}
	})
}
