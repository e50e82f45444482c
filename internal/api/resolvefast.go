package api

import (
	"context"
	"sync"

	"github.com/constraintlab/assistant/internal/assistant"
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
	return appendResolveBody(make([]tokenRef, 0, 8), body)
}

// resolveRefs are the token lists rememberResolves parses bodies into,
// given back once the answer is made (an answer keeps no token).
var resolveRefs = sync.Pool{New: func() any { r := make([]tokenRef, 0, 32); return &r }}

// appendResolveBody is parseResolveBody appending the tokens to refs,
// whose elements it overwrites.
func appendResolveBody(refs []tokenRef, body []byte) ([]tokenRef, bool) {
	p := resolveParser{b: body}
	p.space()
	if !p.byte('{') || !p.key("tokens") || !p.byte('[') {
		return nil, false
	}
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
// would write it: the tokens that resolve, in request order and once,
// then those that do not (resolveTokens gives the same). A token's card
// is taken from tokenCards when it resolved before at the current
// knowledge version; only the others are looked up in the store, so a
// batch of tokens seen before builds no map of entities.
func (s *Server) resolveAnswerOf(ctx context.Context, refs []tokenRef) (*resolveAnswer, error) {
	version, verr := s.Knowledge.KnowledgeVersion(ctx)
	remembered := verr == nil
	type item struct {
		ref   tokenRef
		token assistant.Token
		valid bool
		card  []byte // nil: not remembered (looked up), or does not resolve
	}
	items := make([]item, 0, len(refs))
	missing := 0
	s.tokenCards.mu.RLock()
	current := remembered && s.tokenCards.version == version
	eachDistinctRef(refs, func(ref tokenRef) {
		t := assistant.Token{Type: assistant.EntityType(ref.Type), Slug: ref.Slug}
		it := item{ref: ref, token: t, valid: t.Valid()}
		if it.valid {
			if current {
				it.card = s.tokenCards.cards[ref]
			}
			if it.card == nil {
				missing++
			}
		}
		items = append(items, it)
	})
	s.tokenCards.mu.RUnlock()

	if missing > 0 {
		lookup := make([]assistant.Token, 0, missing)
		for _, it := range items {
			if it.valid && it.card == nil {
				lookup = append(lookup, it.token)
			}
		}
		found, err := s.Knowledge.Entities(ctx, lookup)
		if err != nil {
			return nil, err
		}
		for i := range items {
			if it := &items[i]; it.valid && it.card == nil {
				if e, ok := found[it.token]; ok {
					it.card = s.cards.json(e, s.card)
					if remembered {
						s.tokenCards.put(version, it.ref, it.card)
					}
				}
			}
		}
	}

	resolved := 0
	for _, it := range items {
		if it.card != nil {
			resolved++
		}
	}
	cards := make([][]byte, 0, resolved)
	var unresolved []unresolvedToken
	if resolved < len(items) {
		unresolved = make([]unresolvedToken, 0, len(items)-resolved)
	}
	for _, it := range items {
		switch {
		case !it.valid:
			unresolved = append(unresolved, unresolvedToken{Type: it.ref.Type, Slug: it.ref.Slug, Reason: "invalid"})
		case it.card == nil:
			unresolved = append(unresolved, unresolvedToken{Type: it.ref.Type, Slug: it.ref.Slug, Reason: "not_found"})
		default:
			cards = append(cards, it.card)
		}
	}
	rest, err := unresolvedJSON(unresolved)
	if err != nil {
		return nil, err
	}
	return newResolveAnswer(cards, rest), nil
}

// tokenCardMemo remembers the card JSON of each token that resolved at one
// knowledge version (as requested, so an alias has its own entry with its
// target's card); a new version, or a full memo, starts it again. The
// card of a token is a function of the knowledge at a version (cardCache
// holds the bytes), so a token resolved before needs no lookup. Tokens
// that did not resolve are not remembered: they are looked up each time.
type tokenCardMemo struct {
	mu      sync.RWMutex
	version int64
	cards   map[tokenRef][]byte
}

// maxRememberedTokenCards bounds tokenCardMemo; the tokens that resolve
// are the knowledge base's and their aliases'.
const maxRememberedTokenCards = 20_000

// put remembers card as the card of ref at version.
func (m *tokenCardMemo) put(version int64, ref tokenRef, card []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.version != version || m.cards == nil || len(m.cards) >= maxRememberedTokenCards {
		m.version, m.cards = version, map[tokenRef][]byte{}
	}
	m.cards[ref] = card
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
