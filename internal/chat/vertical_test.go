package chat_test

import (
	"context"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/chat"
	"github.com/constraintlab/assistant/internal/textproc"
)

// tradeQuestions are questions as people in the building trades ask them,
// without naming an industry: the chat must infer construction from their
// words (issue 25: such questions used to be answered as fintech or
// education).
var tradeQuestions = []string{
	"I run a drywall subcontracting outfit and the general contractors pay us ninety days late, so payroll is tight every month.",
	"Our roofing crews keep getting called back to fix leaks on roofs we finished only last month.",
	"We are a plumbing company and every second job needs a return visit because the parts were not on the van.",
	"Our HVAC installs are booked out eight weeks and homeowners are going to other heating contractors.",
	"As an electrical contractor we win barely one bid in ten and I spend every weekend doing the estimates myself.",
	"We are a general contractor and every job slips because the framers, electricians and plumbers never turn up in the right order.",
}

func TestGuessVerticalRecognisesTheTrades(t *testing.T) {
	s, _ := fullService(t)
	d := s.Diagnoser.(*chat.DiagnosisAdapter)
	for _, q := range tradeQuestions {
		if got := d.GuessVertical(q); got != "construction" {
			t.Errorf("GuessVertical(%q) = %q, want construction", q, got)
		}
	}
	// Other industries' words still win where they are clear.
	for q, want := range map[string]string{
		"Our restaurant guests wait forty minutes for food on Saturday nights and the kitchen cannot cope.": "hospitality",
		"Our patients wait three weeks for an appointment and the clinic phone never stops ringing.":        "healthcare",
	} {
		if got := d.GuessVertical(q); got != want {
			t.Errorf("GuessVertical(%q) = %q, want %q", q, got, want)
		}
	}
}

// TestChatInfersConstruction: a trade question without a vertical is
// diagnosed in construction's words.
func TestChatInfersConstruction(t *testing.T) {
	s, _ := fullService(t)
	r, _, err := s.Run(context.Background(), chat.Request{Message: tradeQuestions[1], Mode: "operator"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.ReasoningTrace) == 0 || !strings.Contains(r.ReasoningTrace[0].InputSummary, "vertical=construction") {
		t.Fatalf("the diagnosis did not infer construction: %+v", r.ReasoningTrace)
	}
}

// TestKindsOfBusinessAreIndustryWords: the kinds of business each
// vertical lists ("bakery", "plumber") are industry words, which the
// turn's searches weigh lightly; a word whose stem a business topic shares
// ("accountancy" stems as "account", "fabricator" as "fabric") must not be
// among them, or every question about an account or a fabric would lose it.
func TestKindsOfBusinessAreIndustryWords(t *testing.T) {
	s, _ := fullService(t)
	d := s.Diagnoser.(*chat.DiagnosisAdapter)
	for _, w := range []string{"bakery", "plumbers", "dentist", "3pl", "warehouse", "tutoring", "florist"} {
		if st := textproc.Stem(w); !d.BusinessKind(st) || !d.IndustryTerm(st) {
			t.Errorf("%q: kind of business %v, industry word %v; want both", w, d.BusinessKind(st), d.IndustryTerm(st))
		}
	}
	for _, w := range []string{"account", "accounts", "consulting", "fabric", "quote", "customer", "price", "overtime", "shift"} {
		if d.BusinessKind(textproc.Stem(w)) {
			t.Errorf("%q is read as a kind of business", w)
		}
	}
	r := chat.Read("cut overtime costs at my bakery", nil, operator(t), chat.Words{Industry: d.IndustryTerm, Kind: d.BusinessKind})
	if got := r.KindStems(nil); len(got) != 1 || got[0] != textproc.Stem("bakery") {
		t.Errorf("kind stems %v, want the bakery alone", got)
	}
}
