package diagnose

import (
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

// --- the Porter stemmer (M. F. Porter, 1980), for lowercase ASCII words ---

func stem(w string) string {
	if len(w) <= 2 {
		return w
	}
	for _, r := range w {
		if r > unicode.MaxASCII || !unicode.IsLetter(r) {
			return w
		}
	}
	b := []byte(w)
	b = step1a(b)
	b = step1b(b)
	b = step1c(b)
	b = step2(b)
	b = step3(b)
	b = step4(b)
	b = step5(b)
	return string(b)
}

func isCons(b []byte, i int) bool {
	switch b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !isCons(b, i-1)
	}
	return true
}

// measure counts the VC sequences of b.
func measure(b []byte) int {
	n, i := 0, 0
	for i < len(b) && isCons(b, i) {
		i++
	}
	for i < len(b) {
		for i < len(b) && !isCons(b, i) {
			i++
		}
		if i >= len(b) {
			break
		}
		for i < len(b) && isCons(b, i) {
			i++
		}
		n++
	}
	return n
}

func hasVowel(b []byte) bool {
	for i := range b {
		if !isCons(b, i) {
			return true
		}
	}
	return false
}

func doubleCons(b []byte) bool {
	n := len(b)
	return n >= 2 && b[n-1] == b[n-2] && isCons(b, n-1)
}

// cvc reports whether b ends consonant-vowel-consonant, the last not w, x or y.
func cvc(b []byte) bool {
	n := len(b)
	if n < 3 || !isCons(b, n-1) || isCons(b, n-2) || !isCons(b, n-3) {
		return false
	}
	c := b[n-1]
	return c != 'w' && c != 'x' && c != 'y'
}

func hasSuffix(b []byte, s string) bool { return strings.HasSuffix(string(b), s) }

// replace swaps suffix s for r when the stem before s has measure > m.
func replace(b []byte, s, r string, m int) ([]byte, bool) {
	if !hasSuffix(b, s) {
		return b, false
	}
	base := b[:len(b)-len(s)]
	if measure(base) > m {
		return append(base[:len(base):len(base)], r...), true
	}
	return b, true
}

func step1a(b []byte) []byte {
	switch {
	case hasSuffix(b, "sses"), hasSuffix(b, "ies"):
		return b[:len(b)-2]
	case hasSuffix(b, "ss"):
		return b
	case hasSuffix(b, "s"):
		return b[:len(b)-1]
	}
	return b
}

func step1b(b []byte) []byte {
	if hasSuffix(b, "eed") {
		if measure(b[:len(b)-3]) > 0 {
			return b[:len(b)-1]
		}
		return b
	}
	var base []byte
	switch {
	case hasSuffix(b, "ed") && hasVowel(b[:len(b)-2]):
		base = b[:len(b)-2]
	case hasSuffix(b, "ing") && hasVowel(b[:len(b)-3]):
		base = b[:len(b)-3]
	default:
		return b
	}
	base = base[:len(base):len(base)]
	switch {
	case hasSuffix(base, "at"), hasSuffix(base, "bl"), hasSuffix(base, "iz"):
		return append(base, 'e')
	case doubleCons(base):
		if c := base[len(base)-1]; c != 'l' && c != 's' && c != 'z' {
			return base[:len(base)-1]
		}
	case measure(base) == 1 && cvc(base):
		return append(base, 'e')
	}
	return base
}

func step1c(b []byte) []byte {
	if hasSuffix(b, "y") && hasVowel(b[:len(b)-1]) {
		out := append([]byte{}, b...)
		out[len(out)-1] = 'i'
		return out
	}
	return b
}

var step2Rules = [][2]string{
	{"ational", "ate"}, {"tional", "tion"}, {"enci", "ence"}, {"anci", "ance"}, {"izer", "ize"},
	{"bli", "ble"}, {"alli", "al"}, {"entli", "ent"}, {"eli", "e"}, {"ousli", "ous"},
	{"ization", "ize"}, {"ation", "ate"}, {"ator", "ate"}, {"alism", "al"}, {"iveness", "ive"},
	{"fulness", "ful"}, {"ousness", "ous"}, {"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"},
	{"logi", "log"},
}

func step2(b []byte) []byte {
	for _, r := range step2Rules {
		if out, matched := replace(b, r[0], r[1], 0); matched {
			return out
		}
	}
	return b
}

var step3Rules = [][2]string{
	{"icate", "ic"}, {"ative", ""}, {"alize", "al"}, {"iciti", "ic"}, {"ical", "ic"}, {"ful", ""}, {"ness", ""},
}

func step3(b []byte) []byte {
	for _, r := range step3Rules {
		if out, matched := replace(b, r[0], r[1], 0); matched {
			return out
		}
	}
	return b
}

var step4Suffixes = []string{
	"al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent",
	"ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize",
}

func step4(b []byte) []byte {
	// Longest suffix first, as in the original algorithm.
	best := ""
	for _, s := range step4Suffixes {
		if hasSuffix(b, s) && len(s) > len(best) {
			best = s
		}
	}
	if best == "" {
		return b
	}
	base := b[:len(b)-len(best)]
	if best == "ion" && (len(base) == 0 || (base[len(base)-1] != 's' && base[len(base)-1] != 't')) {
		return b
	}
	if measure(base) > 1 {
		return base
	}
	return b
}

func step5(b []byte) []byte {
	if hasSuffix(b, "e") {
		base := b[:len(b)-1]
		if m := measure(base); m > 1 || (m == 1 && !cvc(base)) {
			b = base
		}
	}
	if hasSuffix(b, "ll") && measure(b) > 1 {
		b = b[:len(b)-1]
	}
	return b
}
