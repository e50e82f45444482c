package knowledge

import (
	"strings"
)

// MaxQueryTerms caps how many terms of a query are searched, so a long
// query cannot make retrieval arbitrarily expensive.
const MaxQueryTerms = 32

// stopWords are words too common to say anything about what a query is
// about.
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be
	because been before being below between both but by can could did do does doing down during each
	few for from further had has have having he her here hers herself him himself his how i if in into
	is it its itself just me more most my myself no nor not now of off on once only or other our ours
	ourselves out over own same she should so some such than that the their theirs them themselves then
	there these they this those through to too under until up very was we were what when where which
	while who whom why will with would you your yours yourself yourselves get got keep keeps us also
	even every still yet ever much many one
	t s d ll re ve m don doesn didn won isn aren wasn weren couldn shouldn wouldn haven hasn hadn`) {
		stopWords[w] = true
	}
}

// QueryTerms reduces free text to the lowercase words worth searching for:
// letters and digits only (so no query syntax survives), stop words
// removed, duplicates dropped, at most MaxQueryTerms, in order of first
// appearance.
func QueryTerms(text string) []string {
	seen := map[string]bool{}
	var terms []string
	for _, w := range words(text) {
		if stopWords[w] || seen[w] || len(w) > 64 {
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
