package client

import (
	"context"
	"fmt"
	"regexp"
	"strings"
)

// Entity types of citation tokens.
const (
	TypeFramework = "framework"
	TypePaper     = "paper"
	TypeBlog      = "blog"
)

// Token is a citation token: written [type:slug] in answers, type:slug in
// lists such as Verdict.Citations and RagHit.Source.
type Token struct {
	Type string `json:"type"` // framework, paper or blog
	Slug string `json:"slug"` // [a-z0-9_-]+
}

// String returns type:slug.
func (t Token) String() string { return t.Type + ":" + t.Slug }

var (
	textToken = regexp.MustCompile(`\[(framework|paper|blog):([a-z0-9_-]+)\]`)
	bareToken = regexp.MustCompile(`^(framework|paper|blog):([a-z0-9_-]+)$`)
)

// FindTokens returns the citation tokens written [type:slug] in text, in
// order of first appearance, each once. Only the types framework, paper
// and blog and slugs of [a-z0-9_-]+ count.
func FindTokens(text string) []Token {
	var out []Token
	seen := map[Token]bool{}
	for _, m := range textToken.FindAllStringSubmatch(text, -1) {
		t := Token{Type: m[1], Slug: m[2]}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// ParseToken reads a token written type:slug (brackets allowed).
func ParseToken(s string) (Token, error) {
	m := bareToken.FindStringSubmatch(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(s), "["), "]"))
	if m == nil {
		return Token{}, fmt.Errorf("assistant: %q is not a citation token type:slug", s)
	}
	return Token{Type: m[1], Slug: m[2]}, nil
}

// MaxResolveBatch is the most tokens one resolve request may carry.
const MaxResolveBatch = 100

// ResolveAll resolves any number of tokens, in requests of at most
// MaxResolveBatch tokens, one after the other. Duplicates are sent once.
// Resolved and Unresolved are merged in input order, each token once, as
// one Resolve call returns them. No tokens make no request. The first
// failing request ends the call with its error.
func (c *Client) ResolveAll(ctx context.Context, tokens []Token) (*ResolveResponse, error) {
	out := &ResolveResponse{Resolved: []EntityCard{}, Unresolved: []UnresolvedToken{}}
	var unique []Token
	seen := map[Token]bool{}
	for _, t := range tokens {
		if !seen[t] {
			seen[t] = true
			unique = append(unique, t)
		}
	}
	for start := 0; start < len(unique); start += MaxResolveBatch {
		batch := unique[start:min(start+MaxResolveBatch, len(unique))]
		r, err := c.Resolve(ctx, batch)
		if err != nil {
			return nil, fmt.Errorf("assistant: resolving tokens %d to %d of %d: %w", start+1, start+len(batch), len(unique), err)
		}
		out.Resolved = append(out.Resolved, r.Resolved...)
		out.Unresolved = append(out.Unresolved, r.Unresolved...)
	}
	return out, nil
}
