package chat

import (
	_ "embed"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/constraintlab/assistant/internal/knowledge"
	"github.com/constraintlab/assistant/internal/textproc"
	"github.com/constraintlab/assistant/internal/tooling"
)

// Scope is the service's reading of whether a question is one the
// knowledge base can answer (D29); its shape is part of the tool contract
// (internal/tooling) because search_knowledge returns it.
type Scope = tooling.Scope

//go:embed scope.yaml
var scopeYAML []byte

// lexicon holds the stems (and stemmed phrases) of the scope word lists.
type lexicon struct {
	business, weakBusiness, offTopic wordList
	offTopicShapes                   []shape
	// care are the subjects never advised on (scope.yaml's care), in
	// order; injection the shapes of an attempt to change the
	// instructions; tried the phrases that introduce what was tried; vague
	// the stems that say little of a situation.
	care      []careTopic
	injection []shape
	tried     wordList
	report    reportWords
	vague     map[string]bool
	howTo     shape
	source    shape
}

// reportWords tell a clause that reports what the user did (scope.yaml's
// report), as written and in lower case.
type reportWords struct {
	fillers, subjects, irregular, notAttempts map[string]bool
}

// reportsAttempt reports whether a clause (its words, in lower case)
// opens with what the user did, in the past tense: "we reshipped with a
// signature", "sent the email", "ok we put a second person on it".
func (r reportWords) reportsAttempt(words []string) bool {
	i := 0
	for i < len(words) && r.fillers[words[i]] {
		i++
	}
	if i < len(words) && r.subjects[words[i]] {
		i++
	}
	if i < len(words) && words[i] == "already" {
		i++
	}
	if i >= len(words) {
		return false
	}
	w := words[i]
	if r.notAttempts[w] {
		return false
	}
	return r.irregular[w] || len(w) > 4 && strings.HasSuffix(w, "ed")
}

// careTopic is one subject the assistant never advises on.
type careTopic struct {
	id, subject, note string
	urgent            bool
	shapes            []shape
	// kinds are narrower cases of the subject with a note of their own
	// (for health: an emergency, a person's mental health), in order;
	// they choose the note of a question the shapes above already matched.
	kinds []careKind
}

// careKind is a narrower case of a care subject whose note fits it better
// than the subject's (to call emergency services now, for the signs of an
// emergency).
type careKind struct {
	note   string
	shapes []shape
}

// wordList is one scope word list: entries of one stem, or of a phrase's
// stems, indexed by their first stem.
type wordList struct {
	entries [][]string
	// byFirst lists, for each stem that starts an entry, those entries
	// (positions in entries, ascending): at each word of a text only they
	// can match.
	byFirst map[string][]int
}

func newWordList(entries [][]string) wordList {
	l := wordList{entries: entries, byFirst: map[string][]int{}}
	for i, e := range entries {
		l.byFirst[e[0]] = append(l.byFirst[e[0]], i)
	}
	return l
}

var loadLexicon = sync.OnceValue(func() *lexicon {
	var raw struct {
		Business     string   `yaml:"business"`
		WeakBusiness string   `yaml:"weak_business"`
		OffTopic     string   `yaml:"off_topic"`
		Shapes       []string `yaml:"off_topic_patterns"`
		Care         []struct {
			ID       string   `yaml:"id"`
			Subject  string   `yaml:"subject"`
			Note     string   `yaml:"note"`
			Urgent   bool     `yaml:"urgent"`
			Patterns []string `yaml:"patterns"`
			Kinds    []struct {
				// name (in the file) only says which kind it is
				Note     string   `yaml:"note"`
				Patterns []string `yaml:"patterns"`
			} `yaml:"kinds"`
		} `yaml:"care"`
		Injection []string `yaml:"injection"`
		Tried     string   `yaml:"tried"`
		Report    struct {
			Fillers        string `yaml:"fillers"`
			Subjects       string `yaml:"subjects"`
			IrregularPasts string `yaml:"irregular_pasts"`
			NotAttempts    string `yaml:"not_attempts"`
		} `yaml:"report"`
		Vague  string `yaml:"vague"`
		HowTo  string `yaml:"how_to"`
		Source string `yaml:"source_claim"`
	}
	if err := yaml.Unmarshal(scopeYAML, &raw); err != nil {
		panic("chat: scope.yaml: " + err.Error()) // embedded; a test loads it
	}
	parse := func(list string) wordList {
		var out [][]string
		for _, entry := range strings.Fields(list) {
			var stems []string
			for _, w := range strings.Split(entry, "-") {
				stems = append(stems, textproc.Stem(strings.ToLower(w)))
			}
			out = append(out, stems)
		}
		return newWordList(out)
	}
	lex := &lexicon{business: parse(raw.Business), weakBusiness: parse(raw.WeakBusiness), offTopic: parse(raw.OffTopic)}
	for _, p := range raw.Shapes {
		lex.offTopicShapes = append(lex.offTopicShapes, newShape(`(?i)`+p))
	}
	for _, c := range raw.Care {
		topic := careTopic{id: c.ID, subject: c.Subject, note: c.Note, urgent: c.Urgent}
		for _, p := range c.Patterns {
			topic.shapes = append(topic.shapes, newShape(`(?i)`+p))
		}
		for _, k := range c.Kinds {
			kind := careKind{note: k.Note}
			for _, p := range k.Patterns {
				kind.shapes = append(kind.shapes, newShape(`(?i)`+p))
			}
			topic.kinds = append(topic.kinds, kind)
		}
		lex.care = append(lex.care, topic)
	}
	for _, p := range raw.Injection {
		lex.injection = append(lex.injection, newShape(`(?i)`+p))
	}
	lex.tried = parse(raw.Tried)
	set := func(list string) map[string]bool {
		m := map[string]bool{}
		for _, w := range strings.Fields(list) {
			m[w] = true
		}
		return m
	}
	lex.report = reportWords{fillers: set(raw.Report.Fillers), subjects: set(raw.Report.Subjects),
		irregular: set(raw.Report.IrregularPasts), notAttempts: set(raw.Report.NotAttempts)}
	lex.howTo = newShape(`(?i)` + raw.HowTo)
	lex.source = newShape(`(?i)` + raw.Source)
	lex.vague = map[string]bool{}
	for _, w := range strings.Fields(raw.Vague) {
		lex.vague[textproc.Stem(w)] = true
	}
	return lex
})

// matches returns the words of the text (as written) that one of the
// list's entries matches: a single stem, or a phrase of consecutive stems.
// stems are the stems of words.
func (l wordList) matches(words, stems []string) []string {
	var out []string
	for i := range stems {
		for _, j := range l.byFirst[stems[i]] {
			e := l.entries[j]
			if i+len(e) > len(stems) || !slices.Equal(stems[i:i+len(e)], e) {
				continue
			}
			phrase := strings.Join(words[i:i+len(e)], " ")
			if !slices.Contains(out, phrase) {
				out = append(out, phrase)
			}
		}
	}
	return out
}

// AssessScope decides whether a question is in scope: it is when the words
// that place it in running a business outweigh, by at least one, those
// that place it elsewhere. A word that as often means something else, such
// as "return" or "account", weighs half (in full when counted: "85
// accounts"), and so does speaking as "we" or
// "our", the way people speak of their company. A question shaped like a programming task, a matter of
// one's own life or a trivia question weighs two against. A question in another language is read through
// a small glossary of business words. A follow-up that names no business
// itself ("we tried that, now what?") is in scope when the conversation's
// earlier user turns were and it has nothing off topic.
func AssessScope(question string, earlier []string) Scope {
	s := assessText(question)
	if s.InScope || len(s.OffTopic) > 0 || len(earlier) == 0 {
		return s
	}
	if before := assessText(strings.Join(earlier, "\n")); before.InScope {
		s.InScope, s.FollowUp = true, true
	}
	return s
}

// counted reports whether a one-word phrase stands right after a number
// of two or more ("85 accounts") among words.
func counted(words []string, phrase string) bool {
	if strings.Contains(phrase, " ") {
		return false
	}
	for i := 1; i < len(words); i++ {
		if words[i] == phrase {
			if n, err := strconv.Atoi(strings.ReplaceAll(words[i-1], ",", "")); err == nil && n >= 2 {
				return true
			}
		}
	}
	return false
}

// understoodIn is what a question in another language is understood to be
// about: the English for the business words of the glossary, then the
// English business words it uses as they are ("tickets", "churn", "demo"),
// each once.
func understoodIn(text string, lex *lexicon) []string {
	return withLoanwords(textproc.TranslateBusinessWords(text), textproc.Words(text), textproc.Stems(text), lex)
}

// withLoanwords adds to translated the English business words among words
// (with their stems), each once.
func withLoanwords(translated, words, stems []string, lex *lexicon) []string {
	out := translated
	for _, w := range lex.business.matches(words, stems) {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

func assessText(text string) Scope {
	lex := loadLexicon()
	s := Scope{Language: textproc.Language(text)}
	words := textproc.Words(text)
	written := len(words) // the message's own words, before any translation
	foreign := s.Language != "en" && s.Language != ""
	var translated []string
	if foreign {
		translated = textproc.TranslateBusinessWords(text)
		words = append(words, translated...)
	}
	stems := make([]string, len(words))
	for i, w := range words {
		stems[i] = textproc.Stem(w)
	}
	if foreign {
		s.Understood = withLoanwords(translated, words[:written], stems[:written], lex)
	}
	strong := lex.business.matches(words, stems)
	halves := 0 // the weak words that weigh half
	for _, w := range lex.weakBusiness.matches(words, stems) {
		// Counted, such a word names what a business has ("85 accounts",
		// "12 trucks", "3 stores"), not one's own bank account or shop: it
		// weighs in full.
		if !counted(words, w) {
			halves++
		}
		if !slices.Contains(strong, w) {
			strong = append(strong, w)
		}
	}
	// The everyday phrases the search vocabulary knows ("cold calls",
	// "send me some info", "no shows") describe business situations too.
	for _, p := range knowledge.DefaultVocabulary().Phrasings(stems[:written]) {
		if !slices.Contains(strong, p) {
			strong = append(strong, p)
		}
	}
	s.Business = strong
	s.OffTopic = lex.offTopic.matches(words, stems)
	weight := float64(len(strong)) - float64(halves)/2
	if slices.ContainsFunc(words, func(w string) bool { return w == "we" || w == "our" || w == "us" || w == "were" || w == "weve" }) {
		weight += 0.5 // companies speak of themselves as "we"
	}
	against := float64(len(s.OffTopic))
	// Someone quoted ("my dog didn't like the treats", a cancel reason)
	// speaks of their own life, not the asker's: the shapes of a
	// question about something else are looked for outside quotations.
	own := withoutQuotedSpeech(text)
	folded := foldCase(own)
	for _, sh := range lex.offTopicShapes {
		if m := sh.find(own, folded); m != "" {
			s.OffTopic = append(s.OffTopic, strings.TrimSpace(m))
			against += 2
		}
	}
	s.InScope = weight-against >= 1
	return s
}
