package diagnose

import (
	"github.com/constraintlab/assistant/internal/textproc"
	"slices"
	"strings"
)

// stopWords carry no evidence about which constraint a text describes:
// the shared list (internal/textproc) plus spans of time and small numbers
// ("after two months" appears in the symptoms of every constraint) and
// vague words. Negations and first-person pronouns of the shared list are
// kept on purpose: "I approve everything" and "nobody applies" say
// something; so are the modal verbs, as before the lists were merged.
var stopWords = textproc.NewStopList(strings.Fields(`
	enough lot lots really quite gets make makes made thing things way
	day days week weeks month months year years two three four five six seven eight nine ten
	first second last next`),
	strings.Fields(`i me my myself no nor not may might must shall other`))

// wordsKeep splits text into lowercase words (the shared splitter of
// internal/textproc), stop words included (concept groups may list them).
// Words over 40 characters are dropped.
func wordsKeep(text string) []string {
	raw := textproc.Words(text)
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
		if !stopWords.Contains(w) {
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
