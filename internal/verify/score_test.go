package verify

import (
	"testing"

	"github.com/constraintlab/assistant/internal/textproc"
)

func TestTermWeights(t *testing.T) {
	common, rare := termWeight(textproc.Stem("time")), termWeight(textproc.Stem("utilization"))
	if !(common < rare) || common < 0.1 || rare > 1 {
		t.Errorf("weights: time %.2f, utilization %.2f", common, rare)
	}
	if w := termWeight("1961"); w != 1 {
		t.Errorf("a number weighs %.2f", w)
	}
	if len(ranks) < 20000 {
		t.Errorf("only %d ranked stems", len(ranks))
	}
}

func TestEvidenceFeatures(t *testing.T) {
	ev := newEvidence()
	for _, s := range []string{"The Tozzer library holds over 260,000 volumes.", "It opened in Cambridge in 1870.", "Weather is mild."} {
		ev.add(s, 0)
	}
	f := ev.features("The Tozzer library opened in Cambridge and holds 260,000 volumes.")
	if f.x[fMissNum] != 0 || f.x[fMissName] != 0 || f.x[fGreedy] < 0.99 || probability(f.x) < DefaultThreshold {
		t.Errorf("supported claim: %v, p %.3f", f.x, probability(f.x))
	}
	f = ev.features("The Tozzer library holds over 360,000 volumes.")
	if f.x[fMissNum] != 1 || probability(f.x) > missingNumberCap {
		t.Errorf("wrong number: %v, p %.3f", f.x, probability(f.x))
	}
	f = ev.features("The Tozzer library opened in Boston in 1870.")
	if f.x[fMissName] != 1 {
		t.Errorf("missing name not counted: %v", f.x)
	}
}
