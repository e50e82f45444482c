package api

import (
	"bytes"
	"testing"

	"github.com/constraintlab/assistant/internal/diagnose"
)

// TestAppendPreviewMatchIsTheEncoding: the match written directly is the
// encoder's output, for plain and escaped strings and awkward floats.
func TestAppendPreviewMatchIsTheEncoding(t *testing.T) {
	for _, p := range []diagnose.Preview{
		{Method: diagnose.MethodArchetypeID, Confidence: 1, Alternatives: []diagnose.Match{}},
		{Method: diagnose.MethodFreeText, Confidence: 0.4123456789012345, Alternatives: []diagnose.Match{
			{ArchetypeID: "capacity", Name: "Capacity bottleneck", Probability: 1e-7},
			{ArchetypeID: "churn", Name: "Churn <& \"quoted\">", Probability: 0.25},
			{ArchetypeID: "cash", Name: "Cash — ünïcode \u2028", Probability: 3.5e-22},
		}},
		{Method: diagnose.MethodFreeText, Confidence: 0, Alternatives: []diagnose.Match{{ArchetypeID: "a", Name: "b", Probability: 123456789}}},
	} {
		match := previewMatch{Method: p.Method, Confidence: p.Confidence, Alternatives: []previewAlternative{}}
		for _, a := range p.Alternatives {
			match.Alternatives = append(match.Alternatives, previewAlternative{ArchetypeID: a.ArchetypeID, Name: a.Name, Score: a.Probability})
		}
		want, err := marshalJSON(match)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendPreviewMatch(nil, &p); !bytes.Equal(got, want) {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
}
