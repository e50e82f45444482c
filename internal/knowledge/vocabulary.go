package knowledge

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"github.com/constraintlab/assistant/internal/textproc"
	"slices"
	"strings"
	"unicode"
)

// Weights of the terms of an analysed query. The owner's own words count
// most; a synonym (a line of equivalent terms) a little less; an
// association (the right side of a one-way line, everyday words pointing at
// concept words) less again, so that expansion can lift an entity the
// owner's words miss but cannot bury one they name.
const (
	WeightOriginal    = 1.0
	WeightSynonym     = 0.6
	WeightAssociation = 0.45
)

// MaxExpandedTerms caps the terms of an analysed query, originals included,
// so that expansion cannot make a search arbitrarily expensive.
const MaxExpandedTerms = 64

//go:embed synonyms.txt
var synonymsFile []byte

// vocabulary is the business vocabulary shipped in synonyms.txt, parsed
// once at start. It is never modified afterwards.
var vocabulary = mustParseVocabulary("synonyms.txt", synonymsFile)

// DefaultVocabulary returns the embedded business vocabulary
// (internal/knowledge/synonyms.txt). It is shared and must not be modified.
func DefaultVocabulary() *Vocabulary { return vocabulary }

// Vocabulary expands a query with synonyms and business associations. Build
// one with ParseVocabulary; the zero value expands nothing.
type Vocabulary struct {
	rules []rule
	// byFirstStem lists the triggers of every rule by their first stem, so
	// that Analyze tries at each word of a query only the triggers that
	// start with it.
	byFirstStem map[string][]trigger
}

// trigger is one trigger of a rule: its stemmed words and the rule's
// position in rules.
type trigger struct {
	rule  int
	stems []string
}

// rule is one line of the vocabulary: when any trigger occurs in a query,
// every target is added with the weight.
type rule struct {
	triggers   [][]string // stemmed word sequences
	targets    []string   // phrases of plain lowercase words
	targetKeys []string   // each target's words stemmed, joined by spaces
	// targetStems are each target's words stemmed (targetKeys split at
	// its spaces), shared by every Related answer.
	targetStems [][]string
	weight      float64
}

// WeightedTerm is one term of an analysed query: a word or a phrase of
// plain lowercase letters and digits (never query syntax) with its weight.
type WeightedTerm struct {
	Text   string
	Weight float64
}

// ParseVocabulary reads a vocabulary file. Each non-blank line not starting
// with # is either a group of equivalent terms, "a, b, c", where any member
// found in a query adds the others as synonyms; or a one-way association,
// "a, b => c, d", where a or b found in a query adds c and d as
// associations. Terms are words or phrases of letters and digits; matching
// ignores case and common word endings (leaving ~ leave, prices ~ price).
// name is used in error messages only.
func ParseVocabulary(name string, data []byte) (*Vocabulary, error) {
	v := &Vocabulary{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		left, right, oneWay := strings.Cut(line, "=>")
		triggers, err := vocabularyTerms(left)
		if err == nil && oneWay {
			var targets []string
			targets, err = vocabularyTerms(right)
			if err == nil {
				v.rules = append(v.rules, newRule(triggers, targets, WeightAssociation))
			}
		} else if err == nil {
			if len(triggers) < 2 {
				err = fmt.Errorf("a group needs at least two terms")
			}
			v.rules = append(v.rules, newRule(triggers, triggers, WeightSynonym))
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, n, err)
		}
	}
	v.byFirstStem = map[string][]trigger{}
	for i, r := range v.rules {
		for _, stems := range r.triggers {
			v.byFirstStem[stems[0]] = append(v.byFirstStem[stems[0]], trigger{i, stems})
		}
	}
	return v, sc.Err()
}

func mustParseVocabulary(name string, data []byte) *Vocabulary {
	v, err := ParseVocabulary(name, data)
	if err != nil {
		panic(err) // the embedded file is part of the build; a test parses it
	}
	return v
}

// vocabularyTerms splits a comma-separated list of terms and checks that
// each is plain words.
func vocabularyTerms(list string) ([]string, error) {
	var terms []string
	for _, t := range strings.Split(list, ",") {
		if strings.ContainsFunc(t, func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsSpace(r) && r != '\'' && r != '-'
		}) {
			return nil, fmt.Errorf("term %q: only letters, digits, spaces, apostrophes and hyphens are allowed", strings.TrimSpace(t))
		}
		ws := words(t) // "can't" -> can t, as in a query
		if len(ws) == 0 {
			return nil, fmt.Errorf("empty term in %q", strings.TrimSpace(list))
		}
		terms = append(terms, strings.Join(ws, " "))
	}
	return terms, nil
}

func newRule(triggers, targets []string, weight float64) rule {
	r := rule{targets: targets, weight: weight}
	for _, t := range triggers {
		r.triggers = append(r.triggers, stemAll(strings.Fields(t)))
	}
	for _, t := range targets {
		key := strings.Join(stemAll(strings.Fields(t)), " ")
		r.targetKeys = append(r.targetKeys, key)
		r.targetStems = append(r.targetStems, slices.Clip(strings.Fields(key)))
	}
	return r
}

// Analyze turns free text into the weighted terms to search for: the
// query's own terms (QueryTerms) at WeightOriginal, then the terms the
// vocabulary adds, each at the highest weight any matching line gives it,
// at most MaxExpandedTerms in all. A term already in the query is never
// added again at a lower weight.
func (v *Vocabulary) Analyze(text string) []WeightedTerm {
	ws := words(text)
	originals := queryTerms(ws)
	if v == nil {
		out := make([]WeightedTerm, 0, len(originals))
		for _, t := range originals {
			out = append(out, WeightedTerm{Text: t, Weight: WeightOriginal})
		}
		return out
	}
	// The terms are gathered on the stack, each with its stemmed key
	// (found by a scan: there are at most MaxExpandedTerms), and the
	// answer is made once, at its size.
	var termsBuf [MaxExpandedTerms]WeightedTerm
	var keysBuf [MaxExpandedTerms]string
	out, keys := termsBuf[:0], keysBuf[:0]
	for _, t := range originals { // at most MaxQueryTerms (queryTerms)
		keys = append(keys, stem(t))
		out = append(out, WeightedTerm{Text: t, Weight: WeightOriginal})
	}
	// Triggers match the stemmed words of the query both with and without
	// its stop words, so "cannot keep up" and "customers are leaving" match.
	all := stemAll(ws)
	content := make([]string, 0, len(all))
	for i, w := range ws {
		if !textproc.IsStopWord(w) {
			content = append(content, all[i])
		}
	}
	matched := make([]bool, len(v.rules))
	v.match(all, matched)
	v.match(content, matched)
	for ri := range v.rules {
		if !matched[ri] {
			continue
		}
		r := &v.rules[ri]
		for j, t := range r.targets {
			key := r.targetKeys[j]
			// The last term of the key: two words of the query with one
			// stem ("customer", "customers") were indexed by the later.
			if i := lastIndex(keys, key); i >= 0 {
				out[i].Weight = max(out[i].Weight, r.weight)
				continue
			}
			if len(out) == MaxExpandedTerms {
				break
			}
			keys = append(keys, key)
			out = append(out, WeightedTerm{Text: t, Weight: r.weight})
		}
	}
	return slices.Clone(out)
}

// The query's own terms fit Analyze's stack arrays.
var _ [MaxExpandedTerms - MaxQueryTerms]struct{}

// lastIndex is the position of the last s in list, or -1.
func lastIndex(list []string, s string) int {
	for i := len(list) - 1; i >= 0; i-- {
		if list[i] == s {
			return i
		}
	}
	return -1
}

// Phrasings returns the everyday phrases of several words (the triggers
// of its lines, such as "cold calls" or "send me some info") that occur in
// a text given as its words' stems (textproc.Stem of textproc.Words, in
// order), each as its stems joined by spaces, first occurrence first.
// Each is a way people describe a business situation, so the scope rule
// counts them as business words (internal/chat). Single-word triggers are
// left out: alone, a word like "stock" or "returns" says too little.
func (v *Vocabulary) Phrasings(stems []string) []string {
	if v == nil {
		return nil
	}
	var out []string
	for i, st := range stems {
		for _, t := range v.byFirstStem[st] {
			if len(t.stems) < 2 || i+len(t.stems) > len(stems) || !slices.Equal(stems[i:i+len(t.stems)], t.stems) {
				continue
			}
			if p := strings.Join(t.stems, " "); !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// Related returns, for each stem of a text's words that belongs to a
// trigger occurring in it, the concept phrases that trigger's line adds (its
// targets; for a group of equivalent terms, the other members), each as
// its words' stems. "cfo" relates to "economic buyer" and "decision
// process": a sentence about the economic buyer speaks to a question about
// the CFO. Stop words are skipped when triggers are matched, as in Analyze.
func (v *Vocabulary) Related(text string) map[string][][]string {
	if v == nil {
		return nil
	}
	ws := words(text)
	stems := stemAll(ws)
	out := map[string][][]string{}
	add := func(query []string) {
		for i, st := range query {
			for _, t := range v.byFirstStem[st] {
				if i+len(t.stems) > len(query) || !slices.Equal(query[i:i+len(t.stems)], t.stems) {
					continue
				}
				r := &v.rules[t.rule]
				for _, trig := range t.stems {
					for _, phrase := range r.targetStems {
						if slices.Equal(phrase, t.stems) || slices.ContainsFunc(out[trig], func(p []string) bool { return slices.Equal(p, phrase) }) {
							continue
						}
						out[trig] = append(out[trig], phrase)
					}
				}
			}
		}
	}
	add(stems)
	content := make([]string, 0, len(stems))
	for i, w := range ws {
		if !textproc.IsStopWord(w) {
			content = append(content, stems[i])
		}
	}
	add(content)
	return out
}

// match marks in matched the rules one of whose triggers occurs as a run
// of words in query (stemmed).
func (v *Vocabulary) match(query []string, matched []bool) {
	for i, st := range query {
		for _, t := range v.byFirstStem[st] {
			if !matched[t.rule] && i+len(t.stems) <= len(query) && slices.Equal(query[i:i+len(t.stems)], t.stems) {
				matched[t.rule] = true
			}
		}
	}
}

// words is the shared word splitter (internal/textproc): lowercase runs of
// letters and digits, split at apostrophes as the full-text index does.
func words(text string) []string { return textproc.Words(text) }

func stemAll(ws []string) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = stem(w)
	}
	return out
}

// stem is the shared Snowball stemmer (internal/textproc); a vocabulary
// term and a query word are stemmed alike.
func stem(w string) string { return textproc.Stem(w) }

// Phrases returns every multi-word term the vocabulary can add to a query,
// sorted and without duplicates. A query's own terms are single words, so
// these are the only phrases Analyze ever returns: an index can match them
// ahead of time.
func (v *Vocabulary) Phrases() []string {
	if v == nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, r := range v.rules {
		for _, t := range r.targets {
			if strings.Contains(t, " ") && !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	slices.Sort(out)
	return out
}
