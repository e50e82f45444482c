package verify

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/knowledge"
)

// tokenPattern is the citation token as the claim functions read it
// (claimtext.go, which matches it by hand).
var tokenPattern = regexp.MustCompile(`\[([a-z]+):([a-z0-9_-]+)\]`)

var claimTextCases = []string{
	"", " ", "Plain text.", "Goldratt wrote The Goal [paper:the-goal].",
	"Protect the drum [framework:drum-buffer-rope] . Then  measure [framework:toc][paper:x].",
	"[framework:a]", "[framework:a] .", "x[framework:a]y", "[Framework:a] [framework:] [:a] [framework:a b] [framework:a",
	"[[framework:a]] [framework:a-b_9]] . . .", "a\u00a0 b\t\nc \u2003. d", "bad \xff byte [paper:p]\xfe.",
	"ends with space ", " .leading", "a .b . c", "[framework:x]:[paper:y]", "(see [framework:toc]).",
	"[blog:a1]. [blog:a2]", "naïve café [framework:é] ok", strings.Repeat("long words [framework:w] ", 40),
}

// TestClaimTextMatchesRegexps holds claimText, withoutTokens and eachToken
// to the regexp and strings calls they replace.
func TestClaimTextMatchesRegexps(t *testing.T) {
	check := func(s string) {
		want := strings.ReplaceAll(strings.Join(strings.Fields(tokenPattern.ReplaceAllString(s, "")), " "), " .", ".")
		if got := claimText(s); got != want {
			t.Errorf("claimText(%q) = %q, want %q", s, got, want)
		}
		if got, want := withoutTokens(s), tokenPattern.ReplaceAllString(s, ""); got != want {
			t.Errorf("withoutTokens(%q) = %q, want %q", s, got, want)
		}
		var got []string
		eachToken(s, func(typ, slug string) { got = append(got, typ+":"+slug) })
		var wantTokens []string
		for _, m := range tokenPattern.FindAllStringSubmatch(s, -1) {
			wantTokens = append(wantTokens, m[1]+":"+m[2])
		}
		if strings.Join(got, " ") != strings.Join(wantTokens, " ") {
			t.Errorf("eachToken(%q) = %q, want %q", s, got, wantTokens)
		}
	}
	for _, s := range claimTextCases {
		check(s)
	}
	// Every passage of the knowledge base's entities, with tokens.
	files, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		e := f.Entity
		for _, s := range slices.Concat([]string{e.Title, e.Summary}, e.KeyIdeas, e.WhenToUse, e.Pitfalls) {
			check(s)
			check(s + " [" + string(e.Type) + ":" + e.Slug + "] .")
		}
	}
}

func FuzzClaimText(f *testing.F) {
	for _, s := range claimTextCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := strings.ReplaceAll(strings.Join(strings.Fields(tokenPattern.ReplaceAllString(s, "")), " "), " .", ".")
		if got := claimText(s); got != want {
			t.Errorf("claimText(%q) = %q, want %q", s, got, want)
		}
		if got, want := withoutTokens(s), tokenPattern.ReplaceAllString(s, ""); got != want {
			t.Errorf("withoutTokens(%q) = %q, want %q", s, got, want)
		}
	})
}
