package api

import (
	"context"
)

// A resolve body not answered from memory is, nearly always, the plain
// shape a client writes: {"tokens":[{"type":"...","slug":"..."},...]}
// with 1 to 100 tokens whose strings need no escaping. huma would decode
// such a body twice (into a generic value to validate it against the
// schema, then into resolveInput) before the handler runs, about a
// quarter of the request's CPU. parseResolveBody reads that shape in one
// pass; any other body (another key, a duplicate key, an escape, a
// character outside printable ASCII, a number, too few or too many
// tokens, malformed JSON) is left to huma, so every error keeps its status
// and problem document, and every valid body of another shape is decoded
// as before.

// parseResolveBody returns the tokens of a resolve body of the plain shape,
// and false for any other body.
func parseResolveBody(body []byte) ([]tokenRef, bool) {
	p := resolveParser{b: body}
	p.space()
	if !p.byte('{') || !p.key("tokens") || !p.byte('[') {
		return nil, false
	}
	refs := make([]tokenRef, 0, 8)
	for {
		ref, ok := p.tokenRef()
		if !ok || len(refs) == MaxResolveTokens {
			return nil, false
		}
		refs = append(refs, ref)
		if p.byte(',') {
			continue
		}
		if !p.byte(']') || !p.byte('}') {
			return nil, false
		}
		break
	}
	if p.i != len(p.b) {
		return nil, false
	}
	return refs, true
}

// resolveParser reads a resolve body; each method skips the white space
// after what it read.
type resolveParser struct {
	b []byte
	i int
}

// space skips JSON white space.
func (p *resolveParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// byte reads c.
func (p *resolveParser) byte(c byte) bool {
	if p.i >= len(p.b) || p.b[p.i] != c {
		return false
	}
	p.i++
	p.space()
	return true
}

// plainString reads a string of printable ASCII characters other than
// the quote and the backslash (written as is, no escapes) and returns its
// characters, which alias the body.
func (p *resolveParser) plainString() ([]byte, bool) {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return nil, false
	}
	start := p.i + 1
	for j := start; j < len(p.b); j++ {
		switch c := p.b[j]; {
		case c == '"':
			p.i = j + 1
			p.space()
			return p.b[start:j], true
		case c < 0x20 || c > 0x7e || c == '\\':
			return nil, false
		}
	}
	return nil, false
}

// key reads the object key name and the colon after it.
func (p *resolveParser) key(name string) bool {
	s, ok := p.plainString()
	return ok && string(s) == name && p.byte(':')
}

// tokenRef reads {"type":"...","slug":"..."}, its two keys once each in
// either order and no other.
func (p *resolveParser) tokenRef() (tokenRef, bool) {
	var ref tokenRef
	if !p.byte('{') {
		return ref, false
	}
	var haveType, haveSlug bool
	for range 2 {
		k, ok := p.plainString()
		if !ok || !p.byte(':') {
			return ref, false
		}
		v, ok := p.plainString()
		if !ok {
			return ref, false
		}
		switch {
		case string(k) == "type" && !haveType:
			ref.Type, haveType = internTokenType(v), true
		case string(k) == "slug" && !haveSlug:
			ref.Slug, haveSlug = string(v), true
		default:
			return ref, false
		}
		if !haveType || !haveSlug {
			if !p.byte(',') {
				return ref, false
			}
		}
	}
	return ref, p.byte('}')
}

// internTokenType returns the entity type spelled by v without allocating
// for the three types there are.
func internTokenType(v []byte) string {
	switch string(v) {
	case "framework":
		return "framework"
	case "paper":
		return "paper"
	case "blog":
		return "blog"
	}
	return string(v)
}

// resolveAnswerOf returns the answer to a resolve of refs, as resolveJSON
// would write it.
func (s *Server) resolveAnswerOf(ctx context.Context, refs []tokenRef) (*resolveAnswer, error) {
	found, resolved, unresolved, err := s.resolveTokens(ctx, refs)
	if err != nil {
		return nil, err
	}
	cards := make([][]byte, len(resolved))
	for i, t := range resolved {
		cards[i] = s.cards.json(found[t], s.card)
	}
	rest, err := unresolvedJSON(unresolved)
	if err != nil {
		return nil, err
	}
	return newResolveAnswer(cards, rest), nil
}

// unresolvedJSON encodes the unresolved tokens as huma's JSON format does.
// Strings of printable ASCII without quotes or backslashes are written as
// they are, which is what the encoder would write; others go through the
// encoder.
func unresolvedJSON(unresolved []unresolvedToken) ([]byte, error) {
	if len(unresolved) == 0 {
		return []byte("[]"), nil
	}
	for _, u := range unresolved {
		if !plainJSONString(u.Type) || !plainJSONString(u.Slug) {
			return marshalJSON(unresolved)
		}
	}
	n := 2
	for _, u := range unresolved {
		n += len(`{"type":"","slug":"","reason":""},`) + len(u.Type) + len(u.Slug) + len(u.Reason)
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, u := range unresolved {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"`...)
		b = append(b, u.Type...)
		b = append(b, `","slug":"`...)
		b = append(b, u.Slug...)
		b = append(b, `","reason":"`...)
		b = append(b, u.Reason...)
		b = append(b, `"}`...)
	}
	return append(b, ']'), nil
}

// plainJSONString reports whether s is written in JSON as it is, between
// quotes: printable ASCII without the quote or the backslash.
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
