package diagnose

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/constraintlab/assistant/internal/assistant"
)

//go:embed content
var contentFS embed.FS

// ArchetypeContent is what the catalog knows about one archetype beyond its
// name and description (content/archetypes/<id>.yaml).
type ArchetypeContent struct {
	ID string `yaml:"id"`
	// Symptoms are short phrases in the words owners use for this
	// constraint, across verticals.
	Symptoms []string `yaml:"symptoms"`
	// Keywords are single words and short terms that point at the
	// constraint.
	Keywords []string `yaml:"keywords"`
	// Metrics are the measures that reveal the constraint.
	Metrics []string `yaml:"metrics"`
	// Applications are the frameworks that address it, best first.
	Applications []FrameworkApplication `yaml:"applications"`
}

// FrameworkApplication is the text of one framework applied to one
// archetype. Why and Steps may use the vocabulary placeholders of the
// verticals ({customer}, {offer}, ...); a placeholder written with a capital
// ({Customers}) is filled capitalised.
type FrameworkApplication struct {
	Framework  string   `yaml:"framework"` // slug of a framework entity
	Why        string   `yaml:"why"`
	Steps      []string `yaml:"steps"`
	Metrics    []string `yaml:"metrics"`
	Supporting []string `yaml:"supporting"` // paper and blog tokens
}

// VerticalContent is what the catalog knows about one vertical
// (content/verticals/<id>.yaml).
type VerticalContent struct {
	ID string `yaml:"id"`
	// Businesses are the kinds of business the vertical takes in, as
	// owners name them ("bakery", "plumber"): a question that names one is
	// asked from the vertical, and the word says where the question comes
	// from rather than what it asks.
	Businesses []string `yaml:"businesses"`
	// Vocabulary fills the placeholders of the applications.
	Vocabulary map[string]string `yaml:"vocabulary"`
	// KeyMetrics and FirstMoves hold for the vertical whatever the
	// constraint.
	KeyMetrics []string `yaml:"key_metrics"`
	FirstMoves []string `yaml:"first_moves"`
	// Archetypes holds, per archetype id, the metrics and first moves in
	// this vertical's terms.
	Archetypes map[string]VerticalArchetype `yaml:"archetypes"`
}

// VerticalArchetype is one archetype seen from one vertical.
type VerticalArchetype struct {
	// Signals are words and short phrases owners in this vertical use for
	// the constraint; they are matching evidence only.
	Signals []string `yaml:"signals"`
	Metrics []string `yaml:"metrics"`
	Moves   []string `yaml:"moves"`
}

// vocabularyKeys are the placeholders every vertical must define.
var vocabularyKeys = []string{
	"customer", "customers", "offer", "sale", "sales", "lead", "leads",
	"unit", "units", "team", "bottleneck", "channel", "repeat",
}

var placeholder = regexp.MustCompile(`\{([A-Za-z_]+)\}`)

// Content is the parsed and checked catalog content.
type Content struct {
	Archetypes map[string]*ArchetypeContent
	Verticals  map[string]*VerticalContent
	// Concepts are groups of interchangeable words (content/concepts.yaml).
	Concepts map[string][]string
}

// LoadContent parses the embedded content files and checks them: one file
// per catalog id, the ids agree with the file names, every archetype has
// symptoms, metrics and at least three applications, every vertical defines
// the whole vocabulary and metrics and first moves for every archetype, and
// every placeholder is known. Tokens are checked against the knowledge base
// by New.
func LoadContent() (*Content, error) {
	c := &Content{Archetypes: map[string]*ArchetypeContent{}, Verticals: map[string]*VerticalContent{}}
	for _, id := range assistant.ArchetypeIDs {
		a := &ArchetypeContent{}
		if err := readYAML(path.Join("content/archetypes", id+".yaml"), id, a, &a.ID); err != nil {
			return nil, err
		}
		if err := checkArchetype(a); err != nil {
			return nil, err
		}
		c.Archetypes[id] = a
	}
	for _, id := range assistant.VerticalIDs {
		v := &VerticalContent{}
		if err := readYAML(path.Join("content/verticals", id+".yaml"), id, v, &v.ID); err != nil {
			return nil, err
		}
		if err := checkVertical(v); err != nil {
			return nil, err
		}
		c.Verticals[id] = v
	}
	data, err := contentFS.ReadFile("content/concepts.yaml")
	if err != nil {
		return nil, err
	}
	if err := yaml.Unmarshal(data, &c.Concepts); err != nil {
		return nil, fmt.Errorf("content/concepts.yaml: %w", err)
	}
	for _, dir := range []string{"content/archetypes", "content/verticals"} {
		entries, err := fs.ReadDir(contentFS, dir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			id := strings.TrimSuffix(e.Name(), ".yaml")
			if c.Archetypes[id] == nil && c.Verticals[id] == nil {
				return nil, fmt.Errorf("%s/%s: not a catalog id", dir, e.Name())
			}
		}
	}
	return c, nil
}

func readYAML(name, id string, v any, gotID *string) error {
	data, err := contentFS.ReadFile(name)
	if err != nil {
		return fmt.Errorf("catalog content for %q: %w", id, err)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if *gotID != id {
		return fmt.Errorf("%s: id is %q, want %q", name, *gotID, id)
	}
	return nil
}

func checkArchetype(a *ArchetypeContent) error {
	where := "content/archetypes/" + a.ID + ".yaml"
	if len(a.Symptoms) < 20 || len(a.Keywords) == 0 || len(a.Metrics) == 0 {
		return fmt.Errorf("%s needs at least 20 symptoms, some keywords and metrics", where)
	}
	if len(a.Applications) < 3 {
		return fmt.Errorf("%s needs at least 3 framework applications", where)
	}
	seen := map[string]bool{}
	for i, app := range a.Applications {
		if seen[app.Framework] {
			return fmt.Errorf("%s: framework %q is listed twice", where, app.Framework)
		}
		seen[app.Framework] = true
		if app.Why == "" || len(app.Steps) < 2 || len(app.Metrics) == 0 {
			return fmt.Errorf("%s: application %d (%s) needs why, at least 2 steps and metrics", where, i+1, app.Framework)
		}
		for _, s := range append(append([]string{app.Why}, app.Steps...), app.Metrics...) {
			for _, m := range placeholder.FindAllStringSubmatch(s, -1) {
				if !slices.Contains(vocabularyKeys, strings.ToLower(m[1])) {
					return fmt.Errorf("%s: application %s uses unknown placeholder {%s}", where, app.Framework, m[1])
				}
			}
		}
	}
	return nil
}

func checkVertical(v *VerticalContent) error {
	where := "content/verticals/" + v.ID + ".yaml"
	for _, k := range vocabularyKeys {
		if v.Vocabulary[k] == "" {
			return fmt.Errorf("%s: vocabulary lacks %q", where, k)
		}
	}
	if len(v.KeyMetrics) == 0 || len(v.FirstMoves) == 0 {
		return fmt.Errorf("%s needs key_metrics and first_moves", where)
	}
	for _, id := range assistant.ArchetypeIDs {
		va, ok := v.Archetypes[id]
		if !ok || len(va.Metrics) < 2 || len(va.Moves) < 2 || len(va.Signals) < 2 {
			return fmt.Errorf("%s: archetype %q needs at least 2 signals, 2 metrics and 2 moves", where, id)
		}
	}
	for id := range v.Archetypes {
		if !assistant.IsArchetype(id) {
			return fmt.Errorf("%s: %q is not an archetype id", where, id)
		}
	}
	return nil
}

// fill replaces the placeholders of s with the vertical's vocabulary, and
// mends the article before a filled word ("a order" -> "an order").
func (v *VerticalContent) fill(s string) string {
	filled := placeholder.ReplaceAllStringFunc(s, func(m string) string {
		key := m[1 : len(m)-1]
		val := v.Vocabulary[strings.ToLower(key)]
		if key[0] >= 'A' && key[0] <= 'Z' && val != "" {
			val = strings.ToUpper(val[:1]) + val[1:]
		}
		return articleMark + val
	})
	filled = anBeforeVowel.ReplaceAllString(filled, "${1}n ${2}")
	return strings.ReplaceAll(filled, articleMark, "")
}

// articleMark flags where a vocabulary word was filled in, so only those
// articles are adjusted; it never survives fill.
const articleMark = "\x00"

// anBeforeVowel finds "a" right before a filled word that starts with a
// vowel letter other than u ("a user" stays).
var anBeforeVowel = regexp.MustCompile(`\b([Aa]) \x00([aeioAEIO])`)
