package api

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/verify"
)

// Verify limits: the text is held to chat's message limit (D4); the extra
// evidence to resolve's token limit (D10).
const (
	MaxVerifyText      = MaxMessageLength
	MaxVerifyCitations = 100
)

type verifyRequest struct {
	Text      string   `json:"text" example:"Kingman showed that waiting time explodes as utilization approaches one [paper:kingman-1961-heavy-traffic]. Kingman published the heavy traffic result in 1973 [paper:kingman-1961-heavy-traffic]. Waiting time grows without bound as a queue's utilization approaches one." doc:"The text to check, 1 to 8000 characters after trimming, with citation tokens written [type:slug] as in chat answers. Each assertive sentence or list item is a claim; a claim is checked against the entities its own tokens cite. A token that does not resolve makes its claim unsupported and is never repeated in the response."`
	Citations []string `json:"citations,omitempty" maxItems:"100" example:"[\"paper:kingman-1961-heavy-traffic\"]" doc:"Extra evidence, at most 100 citation tokens (type:slug): the entities that claims citing nothing are checked against (as chat checks uncited claims against the knowledge it retrieved). Every token must resolve (400 otherwise)."`
	Threshold *float64 `json:"threshold,omitempty" minimum:"0" maximum:"1" example:"0.6" doc:"The score a claim must reach to be verified, 0 to 1. Default: the service's own bar (0.6 for the builtin checker)."`
	Source    string   `json:"source,omitempty" maxLength:"200" example:"docs" doc:"A label of the calling integration; recorded with usage, never changes the verdict."`
}

type verifyInput struct {
	Body verifyRequest
}

// Resolve adds the checks the schema cannot express: the text is trimmed
// before its length is checked, as chat's message is (D4), and each
// citation must be a well-formed token.
func (in *verifyInput) Resolve(huma.Context) []error {
	var errs []error
	t := strings.TrimSpace(in.Body.Text)
	switch {
	case t == "":
		errs = append(errs, &huma.ErrorDetail{Location: "body.text", Message: "must not be empty", Value: in.Body.Text})
	case utf8.RuneCountInString(t) > MaxVerifyText:
		errs = append(errs, &huma.ErrorDetail{Location: "body.text", Message: fmt.Sprintf("must be at most %d characters", MaxVerifyText),
			Value: fmt.Sprintf("(%d characters)", utf8.RuneCountInString(t))})
	}
	for i, c := range in.Body.Citations {
		if _, err := assistant.ParseToken(c); err != nil {
			errs = append(errs, &huma.ErrorDetail{Location: fmt.Sprintf("body.citations[%d]", i),
				Message: "must be a citation token type:slug, such as framework:theory-of-constraints", Value: c})
		}
	}
	return errs
}

type verifyOutput struct {
	Body verify.Confidence
}

// textToken is a citation token as answers write it (the chat's pattern).
var textToken = regexp.MustCompile(`\[([a-z]+):([a-z0-9_-]+)\]`)

// verifyText checks any text (D22): the confidence object chat returns,
// for text produced elsewhere.
func (s *Server) verifyText(ctx context.Context, in *verifyInput) (*verifyOutput, error) {
	usageFrom(ctx).setSource(in.Body.Source)
	text := strings.TrimSpace(in.Body.Text)

	var tokens []assistant.Token
	seen := map[assistant.Token]bool{}
	add := func(t assistant.Token) {
		if t.Valid() && !seen[t] {
			seen[t] = true
			tokens = append(tokens, t)
		}
	}
	for _, m := range textToken.FindAllStringSubmatch(text, -1) {
		add(assistant.Token{Type: assistant.EntityType(m[1]), Slug: m[2]})
	}
	extra := make([]assistant.Token, len(in.Body.Citations))
	for i, c := range in.Body.Citations {
		extra[i], _ = assistant.ParseToken(c) // well-formed: checked by Resolve
		add(extra[i])
	}
	found, err := s.Knowledge.Entities(ctx, tokens)
	if err != nil {
		return nil, err
	}

	// The extra evidence must exist: a caller who names evidence that is
	// not there would otherwise get verdicts silently made without it.
	var hits []assistant.Entity
	var bad []*huma.ErrorDetail
	used := map[assistant.Token]bool{}
	for i, t := range extra {
		e, ok := found[t]
		if !ok {
			bad = append(bad, &huma.ErrorDetail{Location: fmt.Sprintf("body.citations[%d]", i),
				Message: "does not resolve to an entity of the knowledge base (look tokens up with POST " + publicPrefix + "/resolve or GET " + publicPrefix + "/search)",
				Value:   in.Body.Citations[i]})
			continue
		}
		if !used[t] {
			used[t] = true
			hits = append(hits, e)
		}
	}
	if len(bad) > 0 {
		p := newProblem(ctx, http.StatusBadRequest, "")
		p.Errors = bad
		p.Detail = validationDetail(bad)
		return nil, p
	}

	threshold := verify.UseDefault
	if in.Body.Threshold != nil {
		threshold = *in.Body.Threshold
	}
	out := &verifyOutput{}
	out.Body = s.Verifier.Verify(ctx, text, found, hits, threshold)
	return out, nil
}
