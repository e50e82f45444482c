package verify

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokenAt reports whether s[i:] starts with a citation token as
// tokenPattern matches it ([type:slug], type of a-z, slug of a-z, 0-9, _
// and -), and returns its end and the offsets of the colon.
func tokenAt(s string, i int) (end, colon int, ok bool) {
	if i >= len(s) || s[i] != '[' {
		return 0, 0, false
	}
	j := i + 1
	for j < len(s) && 'a' <= s[j] && s[j] <= 'z' {
		j++
	}
	if j == i+1 || j >= len(s) || s[j] != ':' {
		return 0, 0, false
	}
	colon = j
	j++
	for j < len(s) && ('a' <= s[j] && s[j] <= 'z' || '0' <= s[j] && s[j] <= '9' || s[j] == '_' || s[j] == '-') {
		j++
	}
	if j == colon+1 || j >= len(s) || s[j] != ']' {
		return 0, 0, false
	}
	return j + 1, colon, true
}

// eachToken calls f with the type and slug of every citation token in s,
// in order, as tokenPattern.FindAllStringSubmatch finds them (leftmost,
// not overlapping).
func eachToken(s string, f func(typ, slug string)) {
	for i := 0; i < len(s); {
		k := strings.IndexByte(s[i:], '[')
		if k < 0 {
			return
		}
		i += k
		if end, colon, ok := tokenAt(s, i); ok {
			f(s[i+1:colon], s[colon+1:end-1])
			i = end
			continue
		}
		i++
	}
}

// withoutTokens is tokenPattern.ReplaceAllString(s, ""): s itself when it
// holds no token.
func withoutTokens(s string) string {
	var b []byte
	written := 0 // s[:written] is in b, or dropped
	for i := 0; i < len(s); {
		k := strings.IndexByte(s[i:], '[')
		if k < 0 {
			break
		}
		i += k
		if end, _, ok := tokenAt(s, i); ok {
			if b == nil {
				b = make([]byte, 0, len(s))
			}
			b = append(b, s[written:i]...)
			written, i = end, end
			continue
		}
		i++
	}
	if b == nil {
		return s
	}
	return string(append(b, s[written:]...))
}

// claimText is the claim as a verdict states it: the text without its
// citation tokens, its words separated by single spaces, no space before
// a full stop. It is
//
//	strings.ReplaceAll(strings.Join(strings.Fields(tokenPattern.ReplaceAllString(s, "")), " "), " .", ".")
//
// built in one buffer: in the joined text a space is followed by "." only
// where a word starts with ".", so that space is the one dropped.
func claimText(s string) string {
	var stack [256]byte
	b := stack[:0]
	space := false // a space is owed before the next word
	for i := 0; i < len(s); {
		if s[i] == '[' {
			if end, _, ok := tokenAt(s, i); ok {
				i = end
				continue
			}
		}
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		if unicode.IsSpace(r) {
			space = len(b) > 0
			i += size
			continue
		}
		if space && s[i] != '.' {
			b = append(b, ' ')
		}
		space = false
		b = append(b, s[i:i+size]...)
		i += size
	}
	return string(b)
}
