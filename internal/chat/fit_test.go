package chat_test

import (
	"context"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/chat"
)

// TestCardsStayOutOfQuestionsTheyDoNotFit: a card written for one
// situation is not cited for a question about another that merely
// shares its words or its constraint: choosing a first hire is not the
// answer to a machine shop's late deliveries, a seasonal-peak plan is not
// a refund policy, capital budgeting is not a cash squeeze, and asking
// about budget is not reviving a quiet prospect. Each of these was once
// cited there (docs/knowledge-sources-13.md, "Later edits").
func TestCardsStayOutOfQuestionsTheyDoNotFit(t *testing.T) {
	s, _ := fullService(t)
	for _, c := range []struct {
		mode, question string
		notCited       []string
	}{
		{"operator", "Our machine shop's on-time delivery fell from 95% to 80% while orders grew; where is the bottleneck likely to be?",
			[]string{"framework:first-hire-decision", "framework:peak-season-support-readiness"}},
		{"support", "What should our refund policy say about people who ask for their money back after 60 days?",
			[]string{"framework:peak-season-support-readiness", "framework:marketplace-dispute-resolution"}},
		{"operator", "Cash is tight every month before payroll even though we are profitable; most of our customers pay at 60 days. What do I do first?",
			[]string{"framework:capital-budgeting"}},
		{"customer", "The prospect went quiet after our demo two weeks ago. How do I restart the conversation?",
			[]string{"framework:budget-discovery-questions"}},
		{"success", "A client bought 300 seats and only 60 people log in after three months. How do we lift adoption?",
			[]string{"blog:dixon-2015-come-for-the-tool"}},
	} {
		r, _, err := s.Run(context.Background(), chat.Request{Message: c.question, Mode: c.mode}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, token := range c.notCited {
			if strings.Contains(r.Response, "["+token+"]") {
				t.Errorf("%q cites %s:\n%s", c.question, token, r.Response)
			}
		}
	}
}
