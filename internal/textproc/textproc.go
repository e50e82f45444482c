// Package textproc is the text analysis shared by retrieval, diagnosis and
// claim verification: splitting text into words, dropping stop words,
// stemming (the Snowball English stemmer) and splitting sentences, so that
// every part of the service compares words the same way.
package textproc

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"

	"github.com/constraintlab/assistant/internal/memo"
)

// Words returns the lowercase words of text: runs of letters and digits.
// Every other character separates words, apostrophes included, as in the
// full-text index: "don't" is don, t and "owner's" is owner, s (the
// fragments are stop words). It is the one word splitter of retrieval,
// diagnosis and verification.
func Words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// Stems returns the stems of text's words (Words, Stem), in order, stop
// words included (a phrase such as "not now" keeps both words): the form
// in which a phrase is looked for in a question (ContainsRun).
func Stems(text string) []string {
	words := Words(text)
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = Stem(w)
	}
	return out
}

// ContainsRun reports whether run occurs in text as consecutive elements
// (both lists of stems, Stems): a phrase of the question, whatever its
// word forms. An empty run occurs nowhere.
func ContainsRun(text, run []string) bool { return ContainsRunWhere(text, run, nil) }

// ContainsRunWhere is ContainsRun counting only the occurrences whose
// position in text keep accepts (all of them when keep is nil): a phrase
// said in a way that denies it, say.
func ContainsRunWhere(text, run []string, keep func(at int) bool) bool {
	if len(run) == 0 {
		return false
	}
	for i := 0; i+len(run) <= len(text); i++ {
		if slices.Equal(text[i:i+len(run)], run) && (keep == nil || keep(i)) {
			return true
		}
	}
	return false
}

// WordCount is len(Words(text)), counted without building the list.
func WordCount(text string) int {
	if !isASCII(text) {
		return len(Words(text))
	}
	n, in := 0, false
	for i := 0; i < len(text); i++ {
		w := isASCIIWordByte(text[i])
		if w && !in {
			n++
		}
		in = w
	}
	return n
}

// FirstWord is the first of Words(text), or "" when it has none, found
// without splitting the rest of the text.
func FirstWord(text string) string {
	if !isASCII(text) {
		if words := Words(text); len(words) > 0 {
			return words[0]
		}
		return ""
	}
	start := 0
	for start < len(text) && !isASCIIWordByte(text[start]) {
		start++
	}
	end := start
	for end < len(text) && isASCIIWordByte(text[end]) {
		end++
	}
	return strings.ToLower(text[start:end])
}

// isASCII reports whether text is all ASCII, where Words's rules (and
// lowercasing) are a byte's business alone.
func isASCII(text string) bool {
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func isASCIIWordByte(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
}

// Stem returns the Snowball (Porter 2) stem of a lowercase word. Stems
// are remembered (up to maxRememberedStems words of up to 40 bytes): a chat
// turn stems the same few thousand words of the knowledge base again and
// again, and stemming was a third of its cost. British and American
// spellings of a word share its stem (americanSpelling).
func Stem(word string) string {
	return stems.Get(word, func(w string) string { return english.Stem(americanSpelling(w), true) })
}

var stems = memo.Bounded[string, string]{Max: maxRememberedStems, Remember: func(w string) bool { return len(w) <= 40 },
	MaxBytes: memo.Share(0.1), Size: func(w, stem string) int64 { return memo.EntryBytes + int64(len(w)+len(stem)) }}

// listBytes is the Size of the memos of text to a list of strings.
func listBytes(text string, list []string) int64 {
	return memo.EntryBytes + memo.StringBytes + int64(len(text)) + memo.StringsBytes(list)
}

const maxRememberedStems = 200_000

// Texts of up to maxRememberedText bytes have their term lists and
// sentence splits remembered (up to maxRememberedSplits of each).
const (
	maxRememberedText   = 4096
	maxRememberedSplits = 50_000
)

func rememberText(text string) bool { return len(text) <= maxRememberedText }

// Terms returns the stems of the content words of text, in order, with
// stop words removed (duplicates kept). Results for texts up to 4 KB are
// remembered, like Sentences'; the slice returned is the caller's own.
func Terms(text string) []string {
	return slices.Clone(termLists.Get(text, terms))
}

// SharedTerms is Terms(text) without the copy: the slice may be the
// memo's own, shared by every caller, who must only read it.
func SharedTerms(text string) []string {
	return termLists.Get(text, terms)
}

var termLists = memo.Bounded[string, []string]{Max: maxRememberedSplits, Remember: rememberText, MaxBytes: memo.Share(0.15), Size: listBytes}

func terms(text string) []string {
	words := Words(text)
	out := words[:0]
	for _, w := range words {
		if !IsStopWord(w) {
			out = append(out, Stem(w))
		}
	}
	return out
}

// TermSet is Terms as a set.
func TermSet(text string) map[string]bool {
	set := map[string]bool{}
	for _, t := range SharedTerms(text) {
		set[t] = true
	}
	return set
}

var sentenceEnd = regexp.MustCompile(`([.!?])\s+`)

// Sentences splits prose into sentences at ., ! or ? followed by space,
// keeping the punctuation. It does not split after common abbreviations
// ("e.g.", "Dr.", single initials such as "J."). Splits of texts up to
// 4 KB are remembered (up to maxRememberedSplits): the knowledge base's
// summaries are split again and again, by every turn that reads them. The
// slice returned is the caller's own.
func Sentences(text string) []string {
	return slices.Clone(SharedSentences(text))
}

// SharedSentences is Sentences(text) without the copy: the slice may be
// the memo's own, shared by every caller, who must only read it.
func SharedSentences(text string) []string {
	return sentenceSplits.Get(text, splitSentences)
}

var sentenceSplits = memo.Bounded[string, []string]{Max: maxRememberedSplits, Remember: rememberText, MaxBytes: memo.Share(0.1), Size: listBytes}

func splitSentences(text string) []string {
	var out []string
	start := 0
	for _, m := range sentenceEnd.FindAllStringSubmatchIndex(text, -1) {
		end := m[3] // after the punctuation
		if isAbbreviation(text[start:end]) {
			continue
		}
		if s := strings.TrimSpace(text[start:end]); s != "" {
			out = append(out, s)
		}
		start = m[1]
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// isAbbreviation reports whether the last word of s is an abbreviation.
// It looks at that word only: s can be the whole text since the last
// sentence end, and reading all of it for every candidate end made
// Sentences quadratic (200,000 characters of ". " took 109 s, 10,000 took
// 0.8 s; found by FuzzParse).
func isAbbreviation(s string) bool {
	s = strings.TrimRightFunc(s, unicode.IsSpace)
	if s == "" {
		return false
	}
	last := strings.ToLower(s[strings.LastIndexFunc(s, unicode.IsSpace)+1:])
	switch last {
	case "e.g.", "i.e.", "etc.", "vs.", "dr.", "mr.", "mrs.", "ms.", "jr.", "sr.", "st.", "no.", "inc.", "co.", "approx.":
		return true
	}
	// A single initial such as "J." or dotted ones such as "F.W."; two
	// letters without a dot between them are a word or an acronym ("AI.",
	// "HR.") that ends the sentence.
	trimmed := strings.TrimSuffix(last, ".")
	if !strings.Contains(trimmed, ".") {
		return len(trimmed) <= 1 && !strings.ContainsAny(trimmed, "0123456789") // a lone "." ends nothing
	}
	return len(trimmed) <= 3 && !strings.ContainsAny(trimmed, "0123456789") && len(strings.ReplaceAll(trimmed, ".", "")) <= 2
}

// stopWords are function words that say nothing about a topic, the
// fragments a split at an apostrophe leaves ("don't" -> don, t) and the
// same contractions typed without the apostrophe ("dont", "cant").
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be because been
	before being below between both but by can could did do does doing down during each few for from further had has
	have having he her here hers herself him himself his how i if in into is it its itself just me more most my myself
	no nor not now of off on once only or other our ours ourselves out over own same she should so some such than that
	the their theirs them themselves then there these they this those through to too under until up very was we were
	what when where which while who whom why will with would you your yours yourself yourselves also even ever every
	much many one get got keep keeps us yet still its may might must shall let lets
	t s d ll re ve m don doesn didn won isn aren wasn weren couldn shouldn wouldn haven hasn hadn
	dont doesnt didnt cant cannot wont isnt arent wasnt werent couldnt shouldnt wouldnt havent hasnt hadnt
	im ive youre youve youd theyre theyve weve thats theres whats lets`) {
		m[w] = true
	}
	return m
}()

// IsStopWord reports whether w (lowercase) is a stop word.
func IsStopWord(w string) bool { return stopWords[w] }

// StopList is the shared stop-word list adapted by a caller: extra words
// added, some of the shared words kept as content words.
type StopList struct {
	extra, keep map[string]bool
}

// NewStopList returns the shared list plus extra, less keep (all
// lowercase).
func NewStopList(extra, keep []string) StopList {
	l := StopList{extra: map[string]bool{}, keep: map[string]bool{}}
	for _, w := range extra {
		l.extra[w] = true
	}
	for _, w := range keep {
		l.keep[w] = true
	}
	return l
}

// Contains reports whether w (lowercase) is a stop word of the list.
func (l StopList) Contains(w string) bool {
	return l.extra[w] || stopWords[w] && !l.keep[w]
}

// Cut returns s cut to at most max bytes at a word boundary when there is
// one in its second half, never inside a UTF-8 character, with "…"
// appended when anything was cut.
func Cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	end := max
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	if sp := strings.LastIndex(s[:end], " "); sp >= max/2 {
		end = sp
	}
	return strings.TrimRight(s[:end], " ") + "…"
}
