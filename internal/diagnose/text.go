package diagnose

import (
	"github.com/constraintlab/assistant/internal/textproc"
	"slices"
	"strings"
	"unicode"
)

// stopWords carry no evidence about which constraint a text describes.
// Spans of time and small numbers ("after two months") appear in the
// symptoms of every constraint, so they are not evidence either.
// Negations and first-person pronouns are kept on purpose: "I approve
// everything" and "nobody applies" say something.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be
	because been before being below between both but by can could did do does doing down during each
	few for from further had has have having he her here hers herself him himself his how if in into
	is it its itself just more most of off on once only or our ours ourselves out over own same
	she should so some such than that the their theirs them themselves then there these they this those
	through to too under until up very was we were what when where which while who whom why will with
	would you your yours yourself yourselves get got gets keep keeps us also even every still yet ever
	much many lot lots enough really quite just now s t d ll re ve m don doesn didn isn aren wasn weren
	cannot can't won wouldn couldn shouldn let lets make makes made thing things way
	day days week weeks month months year years one two three four five six seven eight nine ten
	first second last next`) {
		m[w] = true
	}
	return m
}()

// wordsKeep splits text into lowercase words of letters and digits, stop
// words included (concept groups may list them). Apostrophes inside words
// are dropped so "can't" is "cant".
func wordsKeep(text string) []string {
	text = strings.ToLower(strings.ReplaceAll(strings.ReplaceAll(text, "’", ""), "'", ""))
	raw := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	out := raw[:0]
	for _, w := range raw {
		if len(w) <= 40 {
			out = append(out, w)
		}
	}
	return out
}

// analyzer turns text into the features the matcher compares: Porter stems
// of the content words, the bigrams of adjacent stems ("win_rate"), and the
// concept groups of content/concepts.yaml ("c:leaving").
type analyzer struct {
	concepts map[string][]string // stem -> concept features
}

func newAnalyzer(groups map[string][]string) *analyzer {
	a := &analyzer{concepts: map[string][]string{}}
	names := make([]string, 0, len(groups))
	for name := range groups {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		for _, w := range groups[name] {
			st := stem(strings.ToLower(w))
			if !slices.Contains(a.concepts[st], "c:"+name) {
				a.concepts[st] = append(a.concepts[st], "c:"+name)
			}
		}
	}
	return a
}

func (a *analyzer) terms(text string) []string {
	ws := wordsKeep(text)
	stems := make([]string, 0, len(ws))
	var out []string
	for _, w := range ws {
		st := stem(w)
		out = append(out, a.concepts[st]...)
		if !stopWords[w] {
			stems = append(stems, st)
		}
	}
	out = append(out, stems...)
	for i := 0; i+1 < len(stems); i++ {
		out = append(out, stems[i]+"_"+stems[i+1])
	}
	return out
}

// stem is the shared Snowball stemmer (internal/textproc).
func stem(w string) string { return textproc.Stem(w) }
