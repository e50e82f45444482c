package verify

import (
	_ "embed"
	"strings"
	"sync"
)

// wordforms.txt joins the stems of derivationally related words, so that
// a claim's "proved" meets a passage's "proof" and "retained" meets
// "retention": one stem a line, then the stems of its related forms. It is
// generated from WordNet 3.0 (Debian package wordnet-base; the licence and
// the rules are in docs/decisions.md) by `go generate ./internal/verify`
// (cmd/verifygen wordforms); do not edit it by hand.
//
//go:embed wordforms.txt
var wordFormFile string

var (
	wordFormOnce sync.Once
	wordFormsOf  map[string][]string // stem -> stems of its related forms
)

func loadWordForms() {
	wordFormsOf = map[string][]string{}
	for _, line := range strings.Split(wordFormFile, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Fields(line)
		wordFormsOf[f[0]] = f[1:]
	}
}

// RelatedForms returns the stems of the forms derivationally related to
// stem ("decis" for "decid": decide, decision), nil when it has none. The
// slice is shared: do not modify it.
func RelatedForms(stem string) []string { return relatedForms(stem) }

// relatedForms returns the stems of the forms derivationally related to
// stem, nil when it has none.
func relatedForms(stem string) []string {
	wordFormOnce.Do(loadWordForms)
	return wordFormsOf[stem]
}
