package assistant

import (
	"fmt"
	"strings"
)

// EntityType is the kind of a knowledge entity. The values are the <type>
// part of a citation token.
type EntityType string

// The three entity types of interface.md section 1.
const (
	Framework EntityType = "framework"
	Paper     EntityType = "paper"
	Blog      EntityType = "blog" // an essay
)

// EntityTypes lists the valid entity types in display order.
var EntityTypes = []EntityType{Framework, Paper, Blog}

// Valid reports whether t is one of the three entity types.
func (t EntityType) Valid() bool {
	return t == Framework || t == Paper || t == Blog
}

// ValidSlug reports whether s matches the slug pattern [a-z0-9_-]+ (read
// byte by byte: resolve checks every token it is sent).
func ValidSlug(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// MaxSlugLength bounds slugs so a hostile token cannot make us store or echo
// arbitrarily long strings.
const MaxSlugLength = 200

// Token is a citation token such as framework:theory-of-constraints. Its
// written form inside an answer is [framework:theory-of-constraints].
type Token struct {
	Type EntityType
	Slug string
}

func (t Token) String() string { return string(t.Type) + ":" + t.Slug }

// Valid reports whether the token has a known type and a well-formed slug.
func (t Token) Valid() bool {
	return t.Type.Valid() && len(t.Slug) <= MaxSlugLength && ValidSlug(t.Slug)
}

// ParseToken parses "type:slug" (with or without the surrounding brackets).
func ParseToken(s string) (Token, error) {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	typ, slug, ok := strings.Cut(s, ":")
	t := Token{Type: EntityType(typ), Slug: slug}
	if !ok || !t.Valid() {
		return Token{}, Errorf(EInvalid, "%q is not a citation token of the form type:slug", s)
	}
	return t, nil
}

// Entity is one piece of knowledge the assistant can cite: a framework, a
// paper or an essay. See docs/knowledge-format.md for the source format.
type Entity struct {
	Type       EntityType
	Slug       string
	Title      string
	Authors    []string // personal or organisational names only
	Year       *int     // nil when unknown
	URL        string   // "" when there is no canonical address
	URLNote    string   // why URL is empty
	Tags       []string
	Archetypes []string // archetype ids of the catalog
	Related    []Token

	Summary   string
	KeyIdeas  []string
	WhenToUse []string
	Pitfalls  []string

	// Origin says where the entity came from: OriginEmbedded (the corpus
	// shipped in the binary) or OriginImported (kb import). An imported
	// entity wins over an embedded one with the same token.
	Origin string
}

// Entity origins.
const (
	OriginEmbedded = "embedded"
	OriginImported = "imported"
)

// Token returns the entity's citation token.
func (e *Entity) Token() Token { return Token{Type: e.Type, Slug: e.Slug} }

// Citation is the written form [type:slug] of the entity's token.
func (e *Entity) Citation() string { return fmt.Sprintf("[%s]", e.Token()) }

// KnowledgeStats counts the entities by type (interface.md, Knowledge stats).
type KnowledgeStats struct {
	Total      int
	Frameworks int
	Papers     int
	Blogs      int
}
