package chat

import (
	"testing"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/tooling"
	"github.com/constraintlab/assistant/internal/verify"
)

// TestRelevanceDepthAndSubstance: the relevance is the mean of how
// closely the three best verified cited claims speak to the question and
// how many verified cited claims the answer brings; uncited claims count
// for neither, and an answer whose claims together take up little of the
// question is low at most.
func TestRelevanceDepthAndSubstance(t *testing.T) {
	reading := Reading{Scope: tooling.Scope{InScope: true}, KeyTerms: []tooling.KeyTerm{
		{Stem: "refund", Word: "refund", Weight: 1, Specificity: 1},
		{Stem: "damag", Word: "damaged", Weight: 1, Specificity: 1},
	}}
	claim := func(text string, cited bool) verify.Verdict {
		v := verify.Verdict{Claim: text, Status: verify.Verified}
		if cited {
			v.Citations = []string{"framework:service-recovery"}
		}
		return v
	}
	confidence := func(verdicts ...verify.Verdict) verify.Confidence {
		return verify.Confidence{Score: 1, TotalClaims: len(verdicts), VerifiedClaims: len(verdicts), Verdicts: verdicts}
	}
	repeat := func(n int, v verify.Verdict) []verify.Verdict {
		out := make([]verify.Verdict, n)
		for i := range out {
			out[i] = v
		}
		return out
	}
	on := claim("Offer a refund for a damaged order before the customer asks.", true)
	off := claim("Measure the queue every week and staff for its peaks.", true)
	tests := []struct {
		name      string
		verdicts  []verify.Verdict
		relevance float64
		level     string
	}{
		// Ten on-target claims: full depth, full substance.
		{"deep and substantial", repeat(10, on), 1, "high"},
		// Three on-target claims: full depth, substance 0.3.
		{"deep but thin", repeat(3, on), 0.65, "medium"},
		// Ten claims of which the best three are on target.
		{"substantial, best three deep", append(repeat(3, on), repeat(7, off)...), 1, "high"},
		// Ten claims, none on target: substance only, and the coverage cap.
		{"substantial but off target", repeat(10, off), 0.5, "low"},
		// The same on-target claims uncited: they are not the knowledge answering.
		{"uncited", repeat(10, claim(on.Claim, false)), minRelevance, "low"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := withRelevance(confidence(tc.verdicts...), reading, "", fit{Situation: -1, Search: -1}, false, false)
			if c.Relevance == nil || *c.Relevance != tc.relevance || c.Level != tc.level {
				t.Errorf("relevance %v level %s, want %v %s", deref(c.Relevance), c.Level, tc.relevance, tc.level)
			}
		})
	}
}

func deref(f *float64) float64 {
	if f == nil {
		return -1
	}
	return *f
}

// TestSituationFitScalesRelevance: the relevance is scaled by the square
// root of the situation fit over fullFitAt when the fit is below it; a
// closer fit, or no fit (-1), leaves the relevance as it is.
func TestSituationFitScalesRelevance(t *testing.T) {
	reading, on := refundQuestion()
	three := verify.Confidence{Score: 1, TotalClaims: 3, VerifiedClaims: 3, Verdicts: []verify.Verdict{on, on, on}}
	ten := verify.Confidence{Score: 1, TotalClaims: 10, VerifiedClaims: 10}
	for range 10 {
		ten.Verdicts = append(ten.Verdicts, on)
	}
	tests := []struct {
		name      string
		c         verify.Confidence
		fit       float64
		relevance float64
		level     string
	}{
		{"no situations to compare", three, -1, 0.65, "medium"},
		{"a fit at the full mark", three, fullFitAt, 0.65, "medium"},
		{"a quarter of the full mark halves it", three, fullFitAt / 4, 0.325, "low"},
		{"a close fit leaves it as it is", three, 1, 0.65, "medium"},
		{"a close fit never lifts it into high", verify.Confidence{Score: 1, TotalClaims: 5, VerifiedClaims: 5, Verdicts: ten.Verdicts[:5]}, 1, 0.75, "medium"},
		{"already high stays high", ten, 1, 1, "high"},
		{"a poor fit takes high away", ten, fullFitAt / 4, 0.5, "medium"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := withRelevance(tc.c, reading, "", fit{Situation: tc.fit, Search: -1}, false, false)
			if c.Relevance == nil || *c.Relevance != tc.relevance || c.Level != tc.level {
				t.Errorf("relevance %v level %s, want %v %s", deref(c.Relevance), c.Level, tc.relevance, tc.level)
			}
		})
	}
}

// TestSituationFit: knowledge written for the situation asked about fits
// better than knowledge that shares no situation word, each entity counted
// as often as the answer cites it; entities without situations (an
// imported article) are left out, and with only those there is no fit; an
// entity the question names by its title fits.
func TestSituationFit(t *testing.T) {
	reading := Reading{Scope: tooling.Scope{InScope: true}, KeyTerms: []tooling.KeyTerm{
		{Stem: "refund", Word: "refund", Weight: 1, Specificity: 1},
		{Stem: "damag", Word: "damaged", Weight: 1, Specificity: 1},
	}}
	specific := func(string) float64 { return 1 }
	recovery := assistant.Entity{Type: assistant.Framework, Slug: "recovery", WhenToUse: []string{"A customer wants a refund for a damaged order."}}
	queue := assistant.Entity{Type: assistant.Framework, Slug: "queue", WhenToUse: []string{"Calls wait too long at lunchtime."}}
	article := assistant.Entity{Type: assistant.Framework, Slug: "article"}
	found := map[assistant.Token]assistant.Entity{recovery.Token(): recovery, queue.Token(): queue, article.Token(): article}
	fit := func(times map[assistant.Token]int) float64 {
		var cited []assistant.Token
		for _, t := range []assistant.Token{recovery.Token(), queue.Token(), article.Token()} {
			if times[t] > 0 {
				cited = append(cited, t)
			}
		}
		return situationFit(reading, specific, cited, times, found)
	}
	onTarget, offTarget := fit(map[assistant.Token]int{recovery.Token(): 1}), fit(map[assistant.Token]int{queue.Token(): 1})
	if onTarget <= 0.3 || offTarget != 0 {
		t.Errorf("fit on target %v, off target %v", onTarget, offTarget)
	}
	if mixed := fit(map[assistant.Token]int{recovery.Token(): 1, queue.Token(): 3}); mixed <= 0 || mixed >= onTarget/2 {
		t.Errorf("three off-target citations to one on target: fit %v, want well under half of %v", mixed, onTarget)
	}
	if f := fit(map[assistant.Token]int{article.Token(): 2}); f != -1 {
		t.Errorf("no situations: fit %v, want -1", f)
	}

	// A question that names an entity by its title ("what should a QBR
	// contain?") fits it, whatever words its situations use.
	qbr := Reading{Scope: tooling.Scope{InScope: true}, KeyTerms: []tooling.KeyTerm{
		{Stem: "qbr", Word: "QBR", Weight: 1, Specificity: 1},
		{Stem: "contain", Word: "contain", Weight: 1, Specificity: 1},
	}}
	review := assistant.Entity{Type: assistant.Framework, Slug: "review", Title: "Quarterly business review (QBR)",
		WhenToUse: []string{"Executives stopped coming to our quarterly meetings with the client."}}
	named := situationFit(qbr, specific, []assistant.Token{review.Token()}, map[assistant.Token]int{review.Token(): 1}, map[assistant.Token]assistant.Entity{review.Token(): review})
	if named <= 0.3 {
		t.Errorf("an entity the question names by its title: fit %v, want above 0.3", named)
	}
}

// refundQuestion is a question about refunding damaged orders, with two
// key terms, and a verified cited claim that addresses both.
func refundQuestion() (Reading, verify.Verdict) {
	reading := Reading{Scope: tooling.Scope{InScope: true}, KeyTerms: []tooling.KeyTerm{
		{Stem: "refund", Word: "refund", Weight: 1, Specificity: 1},
		{Stem: "damag", Word: "damaged", Weight: 1, Specificity: 1},
	}}
	on := verify.Verdict{Claim: "Offer a refund for a damaged order before the customer asks.", Status: verify.Verified,
		Citations: []string{"framework:service-recovery"}}
	return reading, on
}
