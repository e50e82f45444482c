package verify

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/constraintlab/assistant/internal/assistant"
)

// WiCERow is one row of a WiCE-format file: a claim, the sentences of the
// article it cites, and a label (supported counts as verified).
type WiCERow struct {
	Claim    string   `json:"claim"`
	Evidence []string `json:"evidence"`
	Label    string   `json:"label"`
}

// InDomainRow is one row of an in-domain file: a cited claim and whether
// it should be verified against the knowledge base.
type InDomainRow struct {
	Text   string `json:"text"`
	Expect string `json:"expect"`
	// Kind groups the rows of the corpus dev set (original, reversed,
	// wrong_number); empty elsewhere.
	Kind string `json:"kind,omitempty"`
}

// ReadJSONL decodes one JSON object per non-blank line into T.
func ReadJSONL[T any](r io.Reader) ([]T, error) {
	var out []T
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		out = append(out, v)
	}
	return out, sc.Err()
}

// EvidenceScore is the probability, 0 to 1, that the evidence sentences
// (in page order) support every part of the claim: the score a claim is
// held to the threshold with, computed as for the knowledge base.
func EvidenceScore(claim string, evidence []string) float64 {
	ev := newEvidence()
	for _, s := range evidence {
		ev.add(s, 0)
	}
	f := ev.features(claim)
	return probability(f.x[:])
}

// WiCEResult is the D26 report of `assistant eval verify` on a WiCE file.
type WiCEResult struct {
	N                int     `json:"n"`
	BalancedAccuracy float64 `json:"balanced_accuracy"`
	Threshold        float64 `json:"threshold"`
}

// EvaluateWiCE scores every row and reports balanced accuracy at the
// threshold (verified when the score reaches it).
func EvaluateWiCE(rows []WiCERow, threshold float64) WiCEResult {
	res, _ := EvaluateWiCEFailures(rows, threshold)
	return res
}

// Failure is a row the verifier got wrong: the claim (or text), the
// expected and the obtained outcome (verified or not_verified) and the
// score.
type Failure struct {
	Claim    string  `json:"claim"`
	Expected string  `json:"expected"`
	Got      string  `json:"got"`
	Score    float64 `json:"score"`
}

func outcome(verified bool) string {
	if verified {
		return "verified"
	}
	return "not_verified"
}

// EvaluateWiCEFailures is EvaluateWiCE that also lists the rows it got
// wrong, in file order.
func EvaluateWiCEFailures(rows []WiCERow, threshold float64) (WiCEResult, []Failure) {
	scores := make([]float64, len(rows))
	var failures []Failure
	for i, r := range rows {
		scores[i] = EvidenceScore(r.Claim, r.Evidence)
		if got, want := scores[i] >= threshold, r.Label == "supported"; got != want {
			failures = append(failures, Failure{Claim: r.Claim, Expected: outcome(want) + " (" + r.Label + ")", Got: outcome(got), Score: math.Round(scores[i]*1000) / 1000})
		}
	}
	return WiCEResult{N: len(rows), BalancedAccuracy: balancedAccuracy(rows, scores, threshold), Threshold: threshold}, failures
}

// TuneWiCE returns the threshold (in steps of 0.01) with the best balanced
// accuracy on rows: for development sets only, never for reporting.
func TuneWiCE(rows []WiCERow) WiCEResult {
	scores := make([]float64, len(rows))
	for i, r := range rows {
		scores[i] = EvidenceScore(r.Claim, r.Evidence)
	}
	best := WiCEResult{N: len(rows)}
	for t := 0.0; t <= 1.0001; t += 0.01 {
		if ba := balancedAccuracy(rows, scores, t); ba > best.BalancedAccuracy {
			best.BalancedAccuracy, best.Threshold = ba, math.Round(t*100)/100
		}
	}
	return best
}

func balancedAccuracy(rows []WiCERow, scores []float64, threshold float64) float64 {
	var tp, fn, tn, fp float64
	for i, r := range rows {
		predicted := scores[i] >= threshold
		switch actual := r.Label == "supported"; {
		case actual && predicted:
			tp++
		case actual:
			fn++
		case predicted:
			fp++
		default:
			tn++
		}
	}
	tpr, tnr := 0.0, 0.0
	if tp+fn > 0 {
		tpr = tp / (tp + fn)
	}
	if tn+fp > 0 {
		tnr = tn / (tn + fp)
	}
	return math.Round((tpr+tnr)/2*10000) / 10000
}

// InDomainResult is the D26 report on an in-domain file.
type InDomainResult struct {
	N        int     `json:"n"`
	Accuracy float64 `json:"accuracy"`
	// ByKind reports each kind of row apart, when the rows have kinds.
	ByKind map[string]KindResult `json:"by_kind,omitempty"`
}

// KindResult is the report on the rows of one kind: how many, the share
// that got the expected outcome, and how many had a claim contradicted.
type KindResult struct {
	N            int     `json:"n"`
	Accuracy     float64 `json:"accuracy"`
	Contradicted int     `json:"contradicted"`
}

// EvaluateInDomain checks each row's text against the entities it cites
// (looked up with resolve) and compares the outcome (every claim verified
// or not) with the expectation.
func (c *Checker) EvaluateInDomain(rows []InDomainRow, resolve func([]assistant.Token) map[assistant.Token]assistant.Entity) InDomainResult {
	res, _ := c.EvaluateInDomainFailures(rows, resolve)
	return res
}

// EvaluateInDomainFailures is EvaluateInDomain that also lists the rows it
// got wrong, in file order; a failure's score is the answer's confidence
// score.
func (c *Checker) EvaluateInDomainFailures(rows []InDomainRow, resolve func([]assistant.Token) map[assistant.Token]assistant.Entity) (InDomainResult, []Failure) {
	correct := 0
	var failures []Failure
	byKind := map[string]*KindResult{}
	for _, r := range rows {
		var tokens []assistant.Token
		for _, cl := range SplitClaims(r.Text) {
			tokens = append(tokens, cl.Citations...)
		}
		conf := c.Check(r.Text, resolve(tokens), nil)
		verified := conf.TotalClaims > 0 && conf.VerifiedClaims == conf.TotalClaims
		kind := byKind[r.Kind]
		if kind == nil {
			kind = &KindResult{}
			byKind[r.Kind] = kind
		}
		kind.N++
		if slices.ContainsFunc(conf.Verdicts, func(v Verdict) bool { return v.Status == Contradicted }) {
			kind.Contradicted++
		}
		if verified == (r.Expect == "verified") {
			correct++
			kind.Accuracy++
		} else {
			failures = append(failures, Failure{Claim: strings.TrimSpace(r.Text), Expected: r.Expect, Got: outcome(verified), Score: conf.Score})
		}
	}
	res := InDomainResult{N: len(rows)}
	if len(rows) > 0 {
		res.Accuracy = math.Round(float64(correct)/float64(len(rows))*10000) / 10000
	}
	if _, plain := byKind[""]; !plain {
		res.ByKind = map[string]KindResult{}
		for k, kr := range byKind {
			kr.Accuracy = math.Round(kr.Accuracy/float64(kr.N)*10000) / 10000
			res.ByKind[k] = *kr
		}
	}
	return res, failures
}
