package api

import "testing"

// TestCountTokens pins the builtin model's tokenizer as
// docs/integrations.md documents it.
func TestCountTokens(t *testing.T) {
	for s, want := range map[string]int{
		"":                 0,
		"Orders ship late": 3,
		"Orders ship late [framework:theory-of-constraints].": 13,
		"Cash: 12.5% in Q3 — déjà vu!":                        12,
		"  \n\t ":                                             0,
	} {
		if got := countTokens(s); got != want {
			t.Errorf("countTokens(%q) = %d, want %d", s, got, want)
		}
	}
}
