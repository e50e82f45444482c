package diagnose

import "testing"

func TestFillArticle(t *testing.T) {
	v := &VerticalContent{Vocabulary: map[string]string{"unit": "order", "customer": "user", "team": "crew"}}
	for in, want := range map[string]string{
		"Walk the flow of a {unit} now": "Walk the flow of an order now",
		"A {unit} waits":                "An order waits",
		"Ask a {customer} why":          "Ask a user why",
		"a {team} and a plan; {Unit}s":  "a crew and a plan; Orders",
	} {
		if got := v.fill(in); got != want {
			t.Errorf("fill(%q) = %q, want %q", in, got, want)
		}
	}
}
