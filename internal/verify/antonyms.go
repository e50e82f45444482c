package verify

import (
	_ "embed"
	"sort"
	"strings"
	"sync"

	"github.com/constraintlab/assistant/internal/textproc"
)

// antonyms.txt lists pairs of opposite words, one pair a line: the direct
// antonyms of WordNet 3.0 (Debian package wordnet-base, pointer "!" of
// data.adj, data.verb, data.adv and data.noun) whose two words are both
// among the 40,000 most frequent words of wordrank.txt.gz.
//
//go:embed antonyms.txt
var antonymFile string

// opposites adds comparatives and quantifiers that WordNet does not pair.
const opposites = `more less
more fewer
most least
most fewest
higher lower
larger smaller
bigger smaller
always never
all none
before after
above below
increase decrease
increase reduce
rise fall
rise decline
grow shrink
grow decline
gain loss
win lose
faster slower
longer shorter
better worse
best worst
cheaper dearer
first last
earlier later
majority minority
`

var (
	antonymOnce sync.Once
	antonymsOf  map[string][]string // stem -> stems of its opposites
)

func loadAntonyms() {
	antonymsOf = map[string][]string{}
	for _, line := range strings.Split(antonymFile+opposites, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		a, b := stemAny(f[0]), stemAny(f[1])
		if a == b {
			continue
		}
		antonymsOf[a] = append(antonymsOf[a], b)
		antonymsOf[b] = append(antonymsOf[b], a)
	}
	for k := range antonymsOf {
		sort.Strings(antonymsOf[k])
	}
}

// stemAny stems a word as analyse does: stop words are kept as they are.
func stemAny(w string) string {
	if textproc.IsStopWord(w) {
		return w
	}
	return textproc.Stem(w)
}

// opposable returns the stems that have an opposite, in no particular
// order: the only stems of a claim contrasts needs to look at.
func opposable(stems map[string]bool) []string {
	antonymOnce.Do(loadAntonyms)
	var out []string
	for st := range stems {
		if len(antonymsOf[st]) > 0 {
			out = append(out, st)
		}
	}
	return out
}

// contrasts counts the claim's stems whose opposite the passage uses while
// the passage does not use the stem itself. opposed are the claim's stems
// that have an opposite (opposable of claim).
func contrasts(opposed []string, claim, passage map[string]bool) int {
	antonymOnce.Do(loadAntonyms)
	n := 0
	for _, st := range opposed {
		if passage[st] {
			continue
		}
		for _, o := range antonymsOf[st] {
			if passage[o] && !claim[o] {
				n++
				break
			}
		}
	}
	return n
}
