package chat

import (
	"regexp"
	"strings"
	"testing"
)

var (
	spaceBeforePunct = regexp.MustCompile(` +([.,;:!?)])`)
	doubleSpace      = regexp.MustCompile(`[ \t]{2,}`)
)

// tidyWithRegexps is tidy as first written, the reference for the
// hand-written passes.
func tidyWithRegexps(s string) string {
	s = spaceBeforePunct.ReplaceAllString(s, "$1")
	s = doubleSpace.ReplaceAllString(s, " ")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

func TestTidy(t *testing.T) {
	cases := []string{
		"", " ", "  ", "\t", " \t ", ".", " .", "  .", "a .", "a  .", "a \t .", "a\t.", "a . .",
		"Start with the constraint  . Then measure throughput ,\n\nand  the rest.  \n",
		"(see  ) and ( this )", "x ; y : z ! w ? v )", "tab\t\tand\t space", " lead and trail \t",
		"line one  \nline two\t\n  line three", "é  ü .", "\xff  . \xfe", "a \u00a0.", "end ?",
	}
	for _, c := range cases {
		if got, want := tidy(c), tidyWithRegexps(c); got != want {
			t.Errorf("tidy(%q) = %q, want %q", c, got, want)
		}
	}
	// Every string of up to six characters from a small alphabet.
	alphabet := []byte{' ', '\t', '.', ')', 'a', '\n'}
	var walk func(prefix []byte)
	walk = func(prefix []byte) {
		if got, want := tidy(string(prefix)), tidyWithRegexps(string(prefix)); got != want {
			t.Fatalf("tidy(%q) = %q, want %q", prefix, got, want)
		}
		if len(prefix) == 6 {
			return
		}
		for _, c := range alphabet {
			walk(append(prefix, c))
		}
	}
	walk(nil)
}
