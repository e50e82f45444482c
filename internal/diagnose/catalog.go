// Package diagnose is the constraint diagnosis: the catalog of archetypes
// (the one constraint holding a business back) and business verticals, the
// content written for each (content/: symptoms in owners' words, revealing
// metrics, vertical vocabulary, key metrics and first moves, and the
// framework applications of each archetype), the free-text matcher that
// turns a description into ranked archetypes with a confidence (Diagnose),
// and the archetype preview composed for a vertical (Preview, D11).
//
// Everything is parsed and checked once in New; a Diagnoser's answers never
// change afterwards (it only remembers the applications it composed), so
// they are deterministic, and it is safe for concurrent use.
package diagnose

import (
	_ "embed"
	"fmt"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/constraintlab/assistant/internal/assistant"
)

//go:embed catalog.yaml
var catalogYAML []byte

// Item is one archetype or vertical of the catalog.
type Item struct {
	ID          string `yaml:"id"`
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
}

// Catalog is the parsed catalog, in catalog order.
type Catalog struct {
	Archetypes []Item `yaml:"archetypes"`
	Verticals  []Item `yaml:"verticals"`
}

// LoadCatalog parses the embedded catalog and checks that it covers exactly
// the fixed ids of spec/catalog.md, in order, each with a name and a
// description.
func LoadCatalog() (*Catalog, error) {
	var c Catalog
	if err := yaml.Unmarshal(catalogYAML, &c); err != nil {
		return nil, fmt.Errorf("parsing the catalog: %w", err)
	}
	if err := checkItems("archetype", c.Archetypes, assistant.ArchetypeIDs); err != nil {
		return nil, err
	}
	if err := checkItems("vertical", c.Verticals, assistant.VerticalIDs); err != nil {
		return nil, err
	}
	return &c, nil
}

func checkItems(kind string, items []Item, ids []string) error {
	got := make([]string, len(items))
	for i, it := range items {
		got[i] = it.ID
		if it.Name == "" || it.Description == "" {
			return fmt.Errorf("catalog %s %q needs a name and a description", kind, it.ID)
		}
	}
	if !slices.Equal(got, ids) {
		return fmt.Errorf("catalog %ss are %v; they must be %v", kind, got, ids)
	}
	return nil
}
