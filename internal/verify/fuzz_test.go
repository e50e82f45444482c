package verify_test

import (
	"strings"
	"testing"
	"unicode/utf8"

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
