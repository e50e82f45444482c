package assistant_test

import (
	"testing"

	"github.com/constraintlab/assistant/internal/assistant"
)

// FuzzParseToken: ParseToken never panics, accepts only valid tokens, and
// what it accepts round-trips through String, with or without brackets.
func FuzzParseToken(f *testing.F) {
	for _, s := range []string{
		"framework:theory-of-constraints", "[paper:little-1961]", "essay:a_b", "[framework:x", "framework:",
		":slug", "unknown:slug", "framework:UPPER", "framework:a:b", "[]", "", "[[framework:x]]",
		"framework:" + string(make([]byte, 200)), "framework:é", "paper:1\x00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := assistant.ParseToken(s)
		if err != nil {
			if assistant.ErrorCode(err) != assistant.EInvalid {
				t.Fatalf("ParseToken(%q): error code %q", s, assistant.ErrorCode(err))
			}
			return
		}
		if !tok.Valid() {
			t.Fatalf("ParseToken(%q) accepted an invalid token %+v", s, tok)
		}
		for _, again := range []string{tok.String(), "[" + tok.String() + "]"} {
			if back, err := assistant.ParseToken(again); err != nil || back != tok {
				t.Fatalf("round trip of %q through %q: %+v, %v", s, again, back, err)
			}
		}
	})
}
