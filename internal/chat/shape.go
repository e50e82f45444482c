package chat

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
)

// shape is one of the scope's patterns (off topic, care, injection).
// Running a few dozen case-insensitive regexps over every question was
// most of the cost of the scope rule, though nearly every question
// matches none; so each pattern keeps, when its syntax shows them, literal
// texts one of which occurs in every match of it (requiredTexts). A
// question that contains none of them cannot match, and the regexp is not
// run.
type shape struct {
	re *regexp.Regexp
	// prefixes are the texts, case-folded (see foldCase), one of which
	// every match contains; nil when the pattern's syntax shows none.
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
	sh.prefixes = requiredTexts(parsed)
	return sh
}

// requiredTexts returns texts (case-folded) one of which occurs in every
// match of re, the most telling ones its syntax shows (the longest
// shortest text), or nil when it shows none. Literal prefixes
// (literalPrefixes) of re, or of any tail of a concatenation in it, are
// such texts: "(?i)^\W*who (won|wrote)" must contain "who won" or "who
// wrote", and "h.?1b" must contain "1b" (a better text than "h").
func requiredTexts(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpCapture:
		return requiredTexts(re.Sub[0])
	case syntax.OpAlternate:
		// Each alternative must hold one of its own.
		var out []string
		for _, sub := range re.Sub {
			r := requiredTexts(sub)
			if r == nil || len(out)+len(r) > maxPrefixes {
				return nil
			}
			out = append(out, r...)
		}
		return out
	case syntax.OpConcat:
		// Every run of parts, from each part on, as far as its literal
		// prefixes go (a longer run gives longer texts, but more of them).
		var best []string
		for i := range re.Sub {
			for j := i + 1; j <= len(re.Sub); j++ {
				run := &syntax.Regexp{Op: syntax.OpConcat, Flags: re.Flags, Sub: re.Sub[i:j]}
				p, complete, ok := literalPrefixes(run)
				if ok && tellsMore(p, best) {
					best = p
				}
				if !ok || !complete {
					break // a longer run has the same prefixes
				}
			}
			if r := requiredTexts(re.Sub[i]); tellsMore(r, best) {
				best = r
			}
		}
		return best
	case syntax.OpPlus:
		return requiredTexts(re.Sub[0])
	}
	if p, _, ok := literalPrefixes(re); ok && tellsMore(p, nil) {
		return p
	}
	return nil
}

// tellsMore reports whether the texts a filter a question better than the
// texts b (nil for none): a has no empty text, and its shortest text is
// longer than b's, or as long with fewer texts. Past telling (six
// characters) length no longer counts, only the number of texts to look
// for in every question.
func tellsMore(a, b []string) bool {
	if len(a) == 0 || slices.Contains(a, "") {
		return false
	}
	if len(b) == 0 {
		return true
	}
	la, lb := min(shortest(a), telling), min(shortest(b), telling)
	return la > lb || la == lb && len(a) < len(b)
}

// telling is the length of a required text past which a longer one
// hardly filters better.
const telling = 6

// shortest is the least length of the texts, a text with a character
// other than a letter or a space (a digit, a hyphen) counting one more:
// prose has fewer of them ("2" is rarer than "w").
func shortest(list []string) int {
	n := -1
	for _, s := range list {
		l := len(s)
		if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && r != ' ' }) >= 0 {
			l++
		}
		if n < 0 || l < n {
			n = l
		}
	}
	return n
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
