package knowledge

import (
	_ "embed"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/textproc"
)

// premisesYAML lists the frameworks written for one precondition and the
// phrases that show it (docs/knowledge-format.md, "Premises").
//
//go:embed premises.yaml
var premisesYAML []byte

// Premises maps the token of an entity written for one precondition (a
// champion who has left, a customer who has cancelled, an in-house tool
// to sell against) to the phrases that show the precondition in a
// question. An entity not listed presumes nothing.
type Premises map[assistant.Token][]string

// premises is the embedded list, parsed once at start; it is never
// modified afterwards.
var premises = func() Premises {
	p, err := ParsePremises(premisesYAML)
	if err != nil {
		panic(err) // a build defect, caught by the package's tests
	}
	return p
}()

// DefaultPremises returns the premises shipped with the embedded corpus
// (internal/knowledge/premises.yaml). They are shared and must not be
// modified.
func DefaultPremises() Premises { return premises }

// Of returns the phrases of which a question must show one for the
// entity to fit it, or nil when the entity presumes nothing.
func (p Premises) Of(t assistant.Token) []string { return p[t] }

// ParsePremises reads a YAML map of citation token to phrases. Every key
// must be a well-formed token with at least one phrase, every phrase must
// hold a word, and no phrase may have the stems of another phrase of the
// same entity: phrases are matched by their stems, so "shifts" beside
// "shift" would match nothing the first does not.
func ParsePremises(data []byte) (Premises, error) {
	var raw map[string][]string
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("premises: %w", err)
	}
	out := make(Premises, len(raw))
	for _, key := range slices.Sorted(maps.Keys(raw)) {
		t, err := assistant.ParseToken(key)
		if err != nil {
			return nil, fmt.Errorf("premises: %q is not a citation token", key)
		}
		if len(raw[key]) == 0 {
			return nil, fmt.Errorf("premises: %s lists no phrase", key)
		}
		said := make(map[string]string, len(raw[key])) // a phrase's stems -> the phrase
		for _, phrase := range raw[key] {
			stems := textproc.Stems(phrase)
			if len(stems) == 0 {
				return nil, fmt.Errorf("premises: %s has a phrase with no word (%q)", key, phrase)
			}
			run := strings.Join(stems, " ")
			if earlier, ok := said[run]; ok {
				return nil, fmt.Errorf("premises: %s lists %q, which matches what %q does", key, phrase, earlier)
			}
			said[run] = phrase
		}
		out[t] = slices.Clip(raw[key])
	}
	return out, nil
}

// Check reports the premises that do not fit the corpus of files: one
// whose token belongs to no entity.
func (p Premises) Check(files []File) []error {
	tokens := tokensOf(files)
	var problems []error
	for _, t := range slices.SortedFunc(maps.Keys(p), compareTokens) {
		if !tokens[t] {
			problems = append(problems, fmt.Errorf("premises of %s: no entity has that token", t))
		}
	}
	return problems
}
