// Package answereval measures a set of chat answers the way the blind
// evaluation protocol asks (docs/evaluation.md): the figures a program can
// take on its own (declines, repeated sentences, hover-checkable citations,
// broken output, the confidence distribution) and, from a rater's file of
// usefulness scores, the figures that need a reader (mean usefulness,
// Spearman between confidence and usefulness, precision of `high`).
//
// It works on plain values: an Answer carries what the figures read of a
// chat response, and the text a hover card shows comes in through a
// CardText function, so the package follows whatever /resolve serves and
// knows nothing of HTTP, the chat turn or the store. Every function is
// pure.
package answereval

import (
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/constraintlab/assistant/internal/textproc"
)

// The kinds of row of a blind set.
const (
	KindIn       = "in"       // an in-scope question
	KindOut      = "out"      // out of scope, close to business words
	KindLang     = "lang"     // a question in another language
	KindInject   = "inject"   // an injection attempt
	KindFollowup = "followup" // the second turn of a conversation
)

// Kinds lists the kinds of row in the order reports show them.
var Kinds = []string{KindIn, KindFollowup, KindOut, KindLang, KindInject}

// InScope reports whether rows of a kind count as in-scope turns: in and
// followup. Questions in other languages and injection attempts are
// reported by kind only, since what a good answer to them is depends on
// the row.
func InScope(kind string) bool { return kind == KindIn || kind == KindFollowup }

// Answer is what the figures read of one chat turn.
type Answer struct {
	ID   string
	Kind string
	Mode string
	// Text is the response's Markdown, citation tokens included.
	Text string
	// RagHits is the number of rag_hits of the response.
	RagHits int
	// Level and Score are the response's confidence.
	Level string
	Score float64
}

// Confident reports whether the answer's confidence is medium or high.
func (a Answer) Confident() bool { return a.Level == "medium" || a.Level == "high" }

// Declined reports whether the answer declined the question. A decline is
// marked as D29 describes it: no citation token in the text, no rag_hits
// and the confidence level none. An answer that cites anything, or that
// claims some confidence, answered (however weakly).
func Declined(a Answer) bool {
	return !citationToken.MatchString(a.Text) && a.RagHits == 0 && a.Level == "none"
}

// citationToken matches a citation token as answers write it.
var citationToken = regexp.MustCompile(`\[([a-z]+):([a-z0-9_-]+)\]`)

// citedTokens lists the citation tokens a text carries (type:slug), each
// once, in the order they first appear.
func citedTokens(text string) []string {
	var out []string
	for _, m := range citationToken.FindAllStringSubmatch(text, -1) {
		if t := m[1] + ":" + m[2]; !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// minSentenceWords is the fewest words (citation tokens removed) a
// sentence needs to count, as for the verifier's claims: shorter fragments
// are labels, not statements.
const minSentenceWords = 4

// sentence is one sentence of an answer's prose.
type sentence struct {
	// text is the sentence as written, tokens included.
	text string
	// bare is the sentence with its citation tokens removed and its
	// spaces collapsed.
	bare string
	// tokens are the citation tokens it carries (type:slug), each once.
	tokens []string
}

// listMarker matches the marker at the start of a list item or quote.
var listMarker = regexp.MustCompile(`^(?:[-*+]|\d+[.)]|>)\s+`)

// sentences splits an answer into the sentences the figures count: every
// line that is not a Markdown heading, with its list marker and bold marks
// removed, split at sentence ends (textproc.Sentences); sentences of fewer
// than minSentenceWords words once citation tokens are removed are left
// out.
func sentences(text string) []sentence {
	var out []sentence
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || heading.MatchString(line) {
			continue
		}
		line = listMarker.ReplaceAllString(line, "")
		line = strings.ReplaceAll(line, "**", "")
		for _, s := range textproc.Sentences(line) {
			bare := strings.Join(strings.Fields(citationToken.ReplaceAllString(s, " ")), " ")
			if len(textproc.Words(bare)) < minSentenceWords {
				continue
			}
			out = append(out, sentence{text: s, bare: bare, tokens: citedTokens(s)})
		}
	}
	return out
}

// normalise is the form in which two sentences are compared word for
// word: lower case, runs of white space as one space, and the punctuation,
// quotes and brackets at either end removed (so "Do it." and "do it" are
// one sentence, while the words and the punctuation inside must match).
func normalise(bare string) string {
	s := strings.ToLower(strings.Join(strings.Fields(bare), " "))
	return strings.TrimFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// Ratio is a count out of a total, with their share (0 when the total is
// 0).
type Ratio struct {
	N     int     `json:"n"`
	Of    int     `json:"of"`
	Share float64 `json:"share"`
}

func ratio(n, of int) Ratio {
	r := Ratio{N: n, Of: of}
	if of > 0 {
		r.Share = round4(float64(n) / float64(of))
	}
	return r
}

func round4(f float64) float64 {
	if f < 0 {
		return -round4(-f)
	}
	return float64(int64(f*1e4+0.5)) / 1e4
}
