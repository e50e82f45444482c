// Package knowledge reads, validates and loads the knowledge base: the
// frameworks, papers and essays the assistant cites.
//
// Each entity is a Markdown file with YAML front matter
// (docs/knowledge-format.md). The default corpus is embedded in the binary
// under corpus/<type>/<slug>.md and synchronised into the store at start,
// idempotently: unchanged entities are not rewritten. Entities can also be
// read from JSON lines (ParseJSONL, what `kb export` writes) and BibTeX
// (ParseBibTeX); Merge lays imported entities over the embedded ones, and
// Validate checks any set of them. Tokens of entities merged into another
// one live on as aliases (aliases.yaml): WithAliases wraps a store so that
// they still resolve, to the entity that absorbed them.
//
// The package also analyses search queries for every store: QueryTerms
// reduces text to plain words (no query syntax survives), and Vocabulary
// (synonyms.txt, the business vocabulary) adds synonyms and associations at
// lower weights, so that an owner's description of a situation reaches the
// concept words the entities use.
package knowledge
