package chat

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
)

// shape is one of the scope's off_topic_patterns. Running a dozen
// case-insensitive regexps over every question was most of the cost of the
// scope rule, though nearly every question matches none; so each pattern
// keeps, when its syntax shows them, the literal texts one of which begins
// every match of it. A question that contains none of them cannot match,
// and the regexp is not run.
type shape struct {
	re *regexp.Regexp
	// prefixes are case-folded (see foldCase); nil when the pattern's
	// matches need not begin with a literal text.
	prefixes []string
}

// maxPrefixes bounds the literal texts kept for one pattern; past it, the
// shorter prefixes found so far are kept.
const maxPrefixes = 256

func newShape(pattern string) shape {
	sh := shape{re: regexp.MustCompile(pattern)}
	parsed, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return sh // unreachable: MustCompile parsed it
	}
	prefixes, _, ok := literalPrefixes(parsed)
	for _, p := range prefixes {
		if p == "" {
			ok = false // a match may begin anywhere
		}
	}
	if ok {
		sh.prefixes = prefixes
	}
	return sh
}

// find returns the leftmost match of the pattern in text, or "". folded is
// foldCase(text).
func (sh shape) find(text, folded string) string {
	if sh.prefixes != nil && !containsAny(folded, sh.prefixes) {
		return ""
	}
	return sh.re.FindString(text)
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// literalPrefixes returns texts (case-folded) one of which begins every
// match of re, and whether they are exactly re's matches (complete). ok is
// false when re's syntax does not show such texts; an empty text among
// them says no more. Only literals, alternations, captures,
// concatenations, optional parts (x?), repeated ones (x+: a match of x
// begins it) and empty-width assertions are looked into; anything else
// ends a concatenation's prefixes, or makes a pattern that begins with it
// unknown.
func literalPrefixes(re *syntax.Regexp) (prefixes []string, complete, ok bool) {
	switch re.Op {
	case syntax.OpLiteral:
		// Folding both the literal and the question covers case-sensitive
		// literals too: an exact match is also a folded one.
		return []string{foldCase(string(re.Rune))}, true, true
	case syntax.OpEmptyMatch, syntax.OpWordBoundary, syntax.OpNoWordBoundary,
		syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText:
		return []string{""}, true, true
	case syntax.OpCapture:
		return literalPrefixes(re.Sub[0])
	case syntax.OpQuest:
		// Nothing, or a match of its operand.
		p, c, ok := literalPrefixes(re.Sub[0])
		if !ok {
			return []string{""}, false, true
		}
		return append(p, ""), c, true
	case syntax.OpPlus:
		// A match of its operand first.
		p, _, ok := literalPrefixes(re.Sub[0])
		return p, false, ok
	case syntax.OpAlternate:
		complete = true
		for _, sub := range re.Sub {
			p, c, ok := literalPrefixes(sub)
			if !ok {
				return nil, false, false
			}
			prefixes, complete = append(prefixes, p...), complete && c
		}
		return prefixes, complete, true
	case syntax.OpConcat:
		prefixes = []string{""}
		for _, sub := range re.Sub {
			p, c, ok := literalPrefixes(sub)
			if !ok || len(prefixes)*len(p) > maxPrefixes {
				return prefixes, false, true // what came before begins every match
			}
			var next []string
			for _, a := range prefixes {
				for _, b := range p {
					next = append(next, a+b)
				}
			}
			prefixes = next
			if !c {
				return prefixes, false, true
			}
		}
		return prefixes, true, true
	}
	return nil, false, false
}

// foldCase maps every rune to the smallest of the runes it matches
// case-insensitively (its simple case folding orbit, as regexp's (?i)
// does), so that a text that matches a literal case-insensitively contains
// it once both are folded.
func foldCase(s string) string {
	return strings.Map(func(r rune) rune {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		return least
	}, s)
}
