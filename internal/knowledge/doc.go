// Package knowledge reads, validates and loads the knowledge base: the
// frameworks, papers and essays the assistant cites.
//
// Each entity is a Markdown file with YAML front matter
// (docs/knowledge-format.md). The default corpus is embedded in the binary
// under corpus/<type>/<slug>.md and synchronised into the store at start,
// idempotently: unchanged entities are not rewritten.
package knowledge
