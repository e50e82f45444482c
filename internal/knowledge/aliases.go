package knowledge

import (
	"context"
	_ "embed"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/constraintlab/assistant/internal/assistant"
)

// aliasesYAML maps the tokens of merged entities to the entity that now
// answers for each (docs/knowledge-format.md).
//
//go:embed aliases.yaml
var aliasesYAML []byte

// Aliases maps an old citation token to the token of the entity it was
// merged into.
type Aliases map[assistant.Token]assistant.Token

// EmbeddedAliases returns the aliases shipped with the embedded corpus.
func EmbeddedAliases() (Aliases, error) {
	return ParseAliases(aliasesYAML)
}

// ParseAliases reads a YAML map of old token to surviving token. Both must
// be well-formed tokens, and a surviving token is never itself an alias
// (so one lookup always suffices).
func ParseAliases(data []byte) (Aliases, error) {
	var raw map[string]string
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("aliases: %w", err)
	}
	out := make(Aliases, len(raw))
	for _, old := range slices.Sorted(maps.Keys(raw)) {
		from, err := assistant.ParseToken(old)
		if err != nil {
			return nil, fmt.Errorf("aliases: %q is not a citation token", old)
		}
		to, err := assistant.ParseToken(raw[old])
		if err != nil {
			return nil, fmt.Errorf("aliases: %s points at %q, not a citation token", old, raw[old])
		}
		out[from] = to
	}
	for from, to := range out {
		if _, chained := out[to]; chained {
			return nil, fmt.Errorf("aliases: %s points at %s, which is itself an alias", from, to)
		}
	}
	return out, nil
}

// Check reports the aliases that do not fit the corpus of files: an alias
// whose token still belongs to an entity, or whose target does not exist.
func (a Aliases) Check(files []File) []error {
	tokens := tokensOf(files)
	var problems []error
	for _, from := range slices.SortedFunc(maps.Keys(a), compareTokens) {
		switch to := a[from]; {
		case tokens[from]:
			problems = append(problems, fmt.Errorf("alias %s: an entity still has that token", from))
		case !tokens[to]:
			problems = append(problems, fmt.Errorf("alias %s: its target %s does not exist", from, to))
		}
	}
	return problems
}

// tokensOf is the set of the files' entity tokens.
func tokensOf(files []File) map[assistant.Token]bool {
	tokens := make(map[assistant.Token]bool, len(files))
	for _, f := range files {
		tokens[f.Entity.Token()] = true
	}
	return tokens
}

func compareTokens(x, y assistant.Token) int { return strings.Compare(x.String(), y.String()) }

// WithAliases returns store with its Entities lookups following aliases:
// a requested token that no entity has, but that is an alias, is answered
// with the entity it was merged into, keyed by the requested token. A real
// entity with the token (an imported one, say) always wins over an alias.
// Every other method is store's own.
func WithAliases(store assistant.KnowledgeStore, aliases Aliases) assistant.KnowledgeStore {
	if len(aliases) == 0 {
		return store
	}
	return aliasedStore{KnowledgeStore: store, aliases: aliases}
}

type aliasedStore struct {
	assistant.KnowledgeStore
	aliases Aliases
}

// Entities implements assistant.KnowledgeStore, following aliases.
func (s aliasedStore) Entities(ctx context.Context, tokens []assistant.Token) (map[assistant.Token]assistant.Entity, error) {
	lookup, aliased := tokens, false
	for _, t := range tokens {
		to, ok := s.aliases[t]
		if !ok {
			continue
		}
		aliased = true
		if !slices.Contains(lookup, to) {
			lookup = append(slices.Clip(lookup), to)
		}
	}
	found, err := s.KnowledgeStore.Entities(ctx, lookup)
	if err != nil || !aliased {
		return found, err
	}
	out := make(map[assistant.Token]assistant.Entity, len(tokens))
	for _, t := range tokens {
		if e, ok := found[t]; ok {
			out[t] = e
		} else if e, ok := found[s.aliases[t]]; ok {
			out[t] = e
		}
	}
	return out, nil
}

// Lookup returns a function that finds an entity by token, following
// aliases as Entities does, when store can look entities up one at a time
// (retrieval.Reader); nil otherwise.
func (s aliasedStore) Lookup(ctx context.Context) (func(assistant.Token) (assistant.Entity, bool), error) {
	l, ok := s.KnowledgeStore.(interface {
		Lookup(context.Context) (func(assistant.Token) (assistant.Entity, bool), error)
	})
	if !ok {
		return nil, nil
	}
	find, err := l.Lookup(ctx)
	if err != nil || find == nil {
		return nil, err
	}
	return func(t assistant.Token) (assistant.Entity, bool) {
		if e, ok := find(t); ok {
			return e, true
		}
		if to, ok := s.aliases[t]; ok {
			return find(to)
		}
		return assistant.Entity{}, false
	}, nil
}
