package persona

import (
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/textproc"
)

func TestLoadHasEveryMode(t *testing.T) {
	personas, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range Modes {
		p, ok := personas[m]
		if !ok || p.Mode != m {
			t.Fatalf("no persona for %q", m)
		}
	}
}

// A record that names a fill the builtin cannot make, or lacks what a
// decline needs, is refused when the personas load.
func TestParseRefusesIncompleteRecords(t *testing.T) {
	valid := func(extra string) string {
		var b strings.Builder
		for _, m := range Modes {
			b.WriteString("- mode: " + m + "\n  name: N\n  goal: G\n  tone: T\n  help: H\n  tools: [search_knowledge]\n  diagnosis: informs\n  settle: [Why]\n")
			b.WriteString("  sections:\n    - {heading: A, fill: [ideas], count: 1}\n    - {heading: B, fill: [steps], count: 1}\n    - {heading: C, fill: [" + extra + "], count: 1}\n")
		}
		return b.String()
	}
	if _, err := parse([]byte(valid("pitfalls"))); err != nil {
		t.Fatalf("a complete set: %v", err)
	}
	if _, err := parse([]byte(valid("poetry"))); err == nil || !strings.Contains(err.Error(), "unknown fill") {
		t.Errorf("an unknown fill: %v", err)
	}
	if _, err := parse([]byte(strings.Replace(valid("pitfalls"), "  help: H\n", "", 1))); err == nil {
		t.Error("a persona without its decline loaded")
	}
}

func TestRecogniseByStem(t *testing.T) {
	personas, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ mode, question, want string }{
		{"customer", "The prospect has been ghosting us for three weeks after the demo", "stalled"},
		{"customer", "They asked for a 15 percent discount to sign this month", "discount"},
		{"support", "A customer is furious that her order arrived damaged and wants a refund", "upset"},
		{"support", "The shipment is running late and the customer keeps asking where it is", "delay"},
		{"success", "Our champion left the company and renewal is in two months", "champion-left"},
		{"operator", "Anything at all", ""},
	}
	for _, tc := range tests {
		if got := personas[tc.mode].Recognise(textproc.Words(tc.question)).ID; got != tc.want {
			t.Errorf("%s %q: situation %q, want %q", tc.mode, tc.question, got, tc.want)
		}
	}
}

// The hosted-model prompt carries the same rules the builtin follows.
func TestSystemPromptStatesTheRules(t *testing.T) {
	personas, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range Modes {
		prompt := personas[m].SystemPrompt("")
		for _, want := range []string{"Evidence first", "medical help", "never invent", personas[m].Help, personas[m].Sections[0].Heading} {
			if !strings.Contains(prompt, want) {
				t.Errorf("%s prompt lacks %q", m, want)
			}
		}
		// The persona's constraints reach the hosted model too.
		for _, a := range personas[m].Archetypes {
			if !strings.Contains(prompt, a) {
				t.Errorf("%s prompt lacks its constraint %q", m, a)
			}
		}
	}
}

// TestIsAction: a sentence is an action when it opens with a verb of
// advice in its bare form; the same verb as a gerund opens a statement.
func TestIsAction(t *testing.T) {
	for sentence, want := range map[string]bool{
		"Price the contract on the planned visits.":                     true,
		"Build a weekly list of customers whose signals fell.":          true,
		"Pricing is a proactive strategy, not a number set once.":       false,
		"Building trust takes time with a new buyer.":                   false,
		"The constraint sets the pace of the whole business.":           false,
		"Bring the buyer's own numbers to the second meeting.":          true,
		"Record every refund against the customer.":                     true,
		"Records show which customers ask most often.":                  false,
		"Proposals are expensive to write.":                             false,
		"Prices rose faster than wages last year.":                      false,
		"Answer a demand for a lower fee with a question.":              true,
		"Price fluctuation: discounts trigger buying ahead.":            false,
		"Order batching: monthly orders turn smooth demand into lumps.": false,
		"Follow up: check the learner's work the next day.":             true,
	} {
		if got := IsAction(sentence); got != want {
			t.Errorf("IsAction(%q) = %v, want %v", sentence, got, want)
		}
	}
}
