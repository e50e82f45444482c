package chat

import (
	"testing"

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
			c := withRelevance(confidence(tc.verdicts...), reading, "", -1)
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
