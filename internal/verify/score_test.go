package verify

import (
	"math"
	"strings"
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
	if f.x[fMissNum] != 0 || f.x[fMissName] != 0 || f.x[fBest] < 0.99 || probability(f.x[:]) < DefaultThreshold {
		t.Errorf("supported claim: %v, p %.3f", f.x, probability(f.x[:]))
	}
	f = ev.features("The Tozzer library holds over 360,000 volumes.")
	if f.x[fMissNum] != 1 || probability(f.x[:]) > missingNumberCap {
		t.Errorf("wrong number: %v, p %.3f", f.x, probability(f.x[:]))
	}
	f = ev.features("The Tozzer library opened in Boston in 1870.")
	if f.x[fMissName] != 1 {
		t.Errorf("missing name not counted: %v", f.x)
	}
}

func TestYearRangeEnds(t *testing.T) {
	for text, want := range map[string]string{
		"the 2018–19 academic year": "2018 2019",
		"Get Back (1992-93)":        "1992 1993",
		"on 2018-05-12":             "2018 05 12", // a date, not a range
		"from 1990 to 85":           "1990 85",
		"3,800-3,700 BC":            "3800 3700",
	} {
		if got := strings.Join(numbersOf(text), " "); got != want {
			t.Errorf("numbersOf(%q) = %q, want %q", text, got, want)
		}
	}
	ev := newEvidence()
	ev.add("Full implementation will take place over the coming 2018-2019 academic year.", 0)
	if f := ev.features("Full implementation is taking place during the 2018–19 academic year."); f.x[fMissNum] != 0 {
		t.Errorf("a range's two-digit end counted missing: %v", f.x)
	}
}

func TestNamesByAbbreviationAndPlace(t *testing.T) {
	ev := newEvidence()
	for _, s := range []string{"Nov 10, 2018 at 8:26 PM", "Two photographers were in Misrata, Libya, in the middle of a war."} {
		ev.add(s, 0)
	}
	for claim, want := range map[string]float64{
		"Paterson died on November 10, 2018.":                     0,
		"He was killed in Misrata during the Libyan war.":         0,
		"He was killed in Misrata in October.":                    1,
		"He was killed in Misrata during the Syrian war.":         1,
		"He was killed in Misrata, Libya, with Hondros and Ross.": 2,
	} {
		f := ev.features(claim)
		if f.x[fMissName] != want || f.x[fMissNameLog] != math.Log1p(want) {
			t.Errorf("%q: %v missing names, want %v", claim, f.x[fMissName], want)
		}
	}
}
