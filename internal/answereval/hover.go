package answereval

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/constraintlab/assistant/internal/textproc"
)

// CardText returns the text a reader sees on the hover card of a citation
// token (type:slug), as /resolve serves it, and false when the token does
// not resolve.
type CardText func(token string) (text string, ok bool)

// minHoverShare is the share of a cited sentence's content words its
// card must hold for the sentence to be checkable on hover.
const minHoverShare = 0.5

// Hover is the figure of hover-checkable citations.
type Hover struct {
	// Ratio is the cited sentences checkable on a card they cite (N) out
	// of all cited sentences (Of).
	Ratio
	// Unchecked lists the cited sentences that are not checkable.
	Unchecked []UncheckedSentence `json:"unchecked"`
}

// UncheckedSentence is a cited sentence none of whose cards holds half
// its content words.
type UncheckedSentence struct {
	Answer   string   `json:"answer"` // the answer's id
	Sentence string   `json:"sentence"`
	Tokens   []string `json:"tokens"`
	// Best is the largest share of the sentence's content words found on
	// one of its cards (0 when none resolves).
	Best float64 `json:"best"`
}

// HoverCheckable measures how many cited sentences a reader can check on
// the hover card of what they cite. A cited sentence is a sentence (four
// or more words without its tokens; headings are not sentences) carrying
// at least one citation token and at least one content word. Its content
// words are the stems of its words other than stop words, tokens removed
// (textproc.Terms), so "pricing" on the card counts for "price" in the
// answer. It is checkable when at least half of its distinct content words
// are on the card of one of its tokens: a sentence citing several tokens
// is checkable if it is checkable on any of them, since a reader hovers
// each. A token whose card does not resolve checks nothing.
func HoverCheckable(answers []Answer, cards CardText) Hover {
	h := Hover{Unchecked: []UncheckedSentence{}}
	cardTerms := map[string]map[string]bool{} // token -> the card's content words; nil when it does not resolve
	termsOf := func(token string) map[string]bool {
		if t, ok := cardTerms[token]; ok {
			return t
		}
		var set map[string]bool
		if text, ok := cards(token); ok {
			set = textproc.TermSet(text)
		}
		cardTerms[token] = set
		return set
	}
	cited, checkable := 0, 0
	for _, a := range answers {
		for _, s := range sentences(a.Text) {
			words := distinct(textproc.Terms(s.bare))
			if len(s.tokens) == 0 || len(words) == 0 {
				continue
			}
			cited++
			best := 0.0
			for _, tok := range s.tokens {
				best = max(best, shareOn(words, termsOf(tok)))
			}
			if best >= minHoverShare {
				checkable++
				continue
			}
			h.Unchecked = append(h.Unchecked, UncheckedSentence{Answer: a.ID, Sentence: s.text, Tokens: s.tokens, Best: round4(best)})
		}
	}
	h.Ratio = ratio(checkable, cited)
	return h
}

// shareOn is the share of words found in card.
func shareOn(words []string, card map[string]bool) float64 {
	found := 0
	for _, w := range words {
		if card[w] {
			found++
		}
	}
	return float64(found) / float64(len(words))
}

func distinct(words []string) []string {
	slices.Sort(words)
	return slices.Compact(words)
}

// cardIdentifiers are the fields of a card that name or link rather than
// say anything: they are not part of its text.
var cardIdentifiers = map[string]bool{"type": true, "slug": true, "token": true, "url": true, "related": true, "archetypes": true}

// CardTextFromJSON returns the text of one card as /resolve serves it (an
// element of its `resolved` list): every string of the card, in nested
// lists and objects too, except identifiers (fields named type, slug,
// token, url, related or archetypes, at any depth). Fields the card gains later, such as the
// applications of a framework, count without a change here.
func CardTextFromJSON(card []byte) (string, error) {
	var fields map[string]any
	dec := json.NewDecoder(bytes.NewReader(card))
	dec.UseNumber()
	if err := dec.Decode(&fields); err != nil {
		return "", err
	}
	return strings.Join(appendStrings(nil, fields), "\n"), nil
}

// appendStrings appends the strings of a decoded JSON value.
func appendStrings(parts []string, v any) []string {
	switch v := v.(type) {
	case string:
		if strings.TrimSpace(v) != "" {
			parts = append(parts, v)
		}
	case []any:
		for _, x := range v {
			parts = appendStrings(parts, x)
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if !cardIdentifiers[k] {
				parts = appendStrings(parts, v[k])
			}
		}
	}
	return parts
}
