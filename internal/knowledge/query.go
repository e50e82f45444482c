package knowledge

import "github.com/constraintlab/assistant/internal/textproc"

// MaxQueryTerms caps how many terms of a query are searched, so a long
// query cannot make retrieval arbitrarily expensive.
const MaxQueryTerms = 32

// QueryTerms reduces free text to the lowercase words worth searching for:
// letters and digits only (so no query syntax survives), stop words
// removed, duplicates dropped, at most MaxQueryTerms, in order of first
// appearance.
func QueryTerms(text string) []string { return queryTerms(words(text)) }

// queryTerms is QueryTerms of text already split into words.
func queryTerms(ws []string) []string {
	seen := map[string]bool{}
	var terms []string
	for _, w := range ws {
		if textproc.IsStopWord(w) || seen[w] || len(w) > 64 {
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
