package answereval_test

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/answereval"
	"github.com/constraintlab/assistant/internal/assistant"
)

// TestReadLabels: a labels file is read line by line, and each malformed
// line is an EInvalid error naming it.
func TestReadLabels(t *testing.T) {
	got, err := answereval.ReadLabels(strings.NewReader(answereval.LabelsHeader + "\n# a comment\nq1\tdirect\tframework:five-whys paper:x-2001\twhy not\n\nq2\tnone\t\tnothing fits\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []answereval.Label{{ID: "q1", Fit: answereval.FitDirect, Tokens: []string{"framework:five-whys", "paper:x-2001"}, Reason: "why not"}, {ID: "q2", Fit: answereval.FitNone, Reason: "nothing fits"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	for name, text := range map[string]string{
		"no header":           "q1\tdirect\tframework:five-whys\tx\n",
		"an unknown fit":      answereval.LabelsHeader + "\nq1\tperfect\tframework:five-whys\tx\n",
		"none with a token":   answereval.LabelsHeader + "\nq1\tnone\tframework:five-whys\tx\n",
		"direct and no token": answereval.LabelsHeader + "\nq1\tdirect\t\tx\n",
		"four tokens":         answereval.LabelsHeader + "\nq1\tdirect\tframework:a framework:b framework:c framework:d\tx\n",
		"not a token":         answereval.LabelsHeader + "\nq1\tdirect\tfive-whys\tx\n",
		"an id twice":         answereval.LabelsHeader + "\nq1\tdirect\tframework:a\tx\nq1\tpartial\tframework:b\ty\n",
		"too few fields":      answereval.LabelsHeader + "\nq1\tdirect\n",
		"nothing":             answereval.LabelsHeader + "\n",
	} {
		if _, err := answereval.ReadLabels(strings.NewReader(text)); assistant.ErrorCode(err) != assistant.EInvalid {
			t.Errorf("%s: error %v, want EInvalid", name, err)
		}
	}
}

// TestLabelFigures: how often in-scope answers cite the labelled entries,
// overall and by level; a label of no answer is an error.
func TestLabelFigures(t *testing.T) {
	answers := []answereval.Answer{
		{ID: "a", Kind: answereval.KindIn, Level: "high", Text: "Find the constraint [framework:toc]. Ask why [framework:five-whys]."},
		{ID: "b", Kind: answereval.KindIn, Level: "low", Text: "Ask why [framework:five-whys]. Count it [framework:pareto]."},
		{ID: "c", Kind: answereval.KindFollowup, Level: "low", Text: "Something else [framework:kano]."},
		{ID: "d", Kind: answereval.KindIn, Level: "medium", Text: "Nothing fits here [framework:kano]."},
		{ID: "e", Kind: answereval.KindIn, Level: "low", Text: "Not labelled [framework:kano]."},
		{ID: "o", Kind: answereval.KindOut, Level: "none", Text: "I cannot help with that."},
	}
	labels := []answereval.Label{
		{ID: "a", Fit: answereval.FitDirect, Tokens: []string{"framework:toc", "framework:five-whys"}},
		{ID: "b", Fit: answereval.FitPartial, Tokens: []string{"framework:toc", "framework:five-whys"}},
		{ID: "c", Fit: answereval.FitDirect, Tokens: []string{"framework:toc"}},
		{ID: "d", Fit: answereval.FitNone},
		{ID: "o", Fit: answereval.FitDirect, Tokens: []string{"framework:toc"}},
	}
	got, err := answereval.LabelFigures(answers, labels)
	if err != nil {
		t.Fatal(err)
	}
	want := answereval.Labelled{
		Labelled: 3, NothingFits: 1, Unlabelled: []string{"e"},
		CitesFirst: share(1, 3), CitesAny: share(2, 3), CitedLabelled: share(3, 5),
		CitesFirstByLevel: map[string]answereval.Ratio{"high": share(1, 1), "low": share(0, 2)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if _, err := answereval.LabelFigures(answers, []answereval.Label{{ID: "zz", Fit: answereval.FitDirect, Tokens: []string{"framework:toc"}}}); assistant.ErrorCode(err) != assistant.EInvalid {
		t.Errorf("a label of no answer: error %v, want EInvalid", err)
	}
}

// share is the Ratio n of of as answereval computes it.
func share(n, of int) answereval.Ratio {
	return answereval.Ratio{N: n, Of: of, Share: math.Round(float64(n)/float64(of)*10000) / 10000}
}
