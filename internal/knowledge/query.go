package knowledge

import (
	"strings"

	"github.com/constraintlab/assistant/internal/textproc"
)

// MaxQueryTerms caps how many terms of a query are searched, so a long
// query cannot make retrieval arbitrarily expensive.
const MaxQueryTerms = 32

// QueryTerms reduces free text to the lowercase words worth searching for:
// letters and digits only (so no query syntax survives), stop words and
// bare numbers removed, duplicates dropped, at most MaxQueryTerms, in
// order of first appearance. A bare number is the asker's figure ("9
// product ideas and 4 engineers"), not a subject: searched, it matched
// whichever card happened to print the same digits. Dropping it raised
// the reciprocal rank of the reader's first choice on the 320 labelled
// blind questions from 0.464 to 0.490 (docs/evaluation.md, "Sixteenth
// session"). A number with letters ("b2b", "3pl", "q4") is kept, and the
// vocabulary still reads every word ("80 20" adds the Pareto terms).
func QueryTerms(text string) []string { return queryTerms(words(text)) }

// queryTerms is QueryTerms of text already split into words.
func queryTerms(ws []string) []string {
	seen := map[string]bool{}
	var terms []string
	for _, w := range ws {
		if textproc.IsStopWord(w) || seen[w] || len(w) > 64 || strings.Trim(w, "0123456789") == "" {
			continue
		}
		seen[w] = true
		terms = append(terms, w)
		if len(terms) == MaxQueryTerms {
			break
		}
	}
	return terms
}
