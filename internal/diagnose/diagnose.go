package diagnose

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/constraintlab/assistant/internal/assistant"
)

// MaxTextLength bounds the free text a diagnosis reads, in characters.
const MaxTextLength = 4000

// Diagnoser matches descriptions of a constraint to the catalog's archetypes
// and composes archetype previews. It is built once from the catalog, the
// embedded content and the knowledge entities, and is safe for concurrent
// use: after New it only remembers the applications it composed.
type Diagnoser struct {
	catalog    *Catalog
	content    *Content
	archetypes map[string]Item
	verticals  map[string]Item
	ix         *index
	// compositions remembers composed applications by [archetype,
	// vertical] (see composed).
	compositions sync.Map
	// frameworks groups the neutral applications by framework, made once
	// (see byFramework).
	frameworksOnce sync.Once
	frameworks     map[assistant.Token][]CatalogApplication
}

// New builds a Diagnoser. entities are the knowledge entities the preview
// may cite and whose archetype tags serve as matching evidence; every token
// the content cites must be among them (an error names the first that is
// not).
func New(cat *Catalog, entities []assistant.Entity) (*Diagnoser, error) {
	return newDiagnoser(cat, entities, defaultParams)
}

// Load builds a Diagnoser from the catalog and every entity of store, the
// knowledge base the preview cites (embedded and imported entities alike).
func Load(ctx context.Context, cat *Catalog, store assistant.KnowledgeStore) (*Diagnoser, error) {
	entities, err := store.AllEntities(ctx)
	if err != nil {
		return nil, err
	}
	return New(cat, entities)
}

func newDiagnoser(cat *Catalog, entities []assistant.Entity, p params) (*Diagnoser, error) {
	if cat == nil {
		return nil, fmt.Errorf("diagnose: a catalog is required")
	}
	c, err := LoadContent()
	if err != nil {
		return nil, err
	}
	known := map[assistant.Token]bool{}
	for _, e := range entities {
		known[e.Token()] = true
	}
	for _, id := range assistant.ArchetypeIDs {
		for _, app := range c.Archetypes[id].Applications {
			t := assistant.Token{Type: assistant.Framework, Slug: app.Framework}
			if !known[t] {
				return nil, fmt.Errorf("content/archetypes/%s.yaml: framework %q is not in the knowledge base", id, app.Framework)
			}
			for _, s := range app.Supporting {
				t, err := assistant.ParseToken(s)
				if err != nil || t.Type == assistant.Framework || !known[t] {
					return nil, fmt.Errorf("content/archetypes/%s.yaml: supporting token %q of %s is not a paper or essay of the knowledge base", id, s, app.Framework)
				}
			}
		}
	}
	d := &Diagnoser{catalog: cat, content: c, archetypes: map[string]Item{}, verticals: map[string]Item{}}
	for _, it := range cat.Archetypes {
		d.archetypes[it.ID] = it
	}
	for _, it := range cat.Verticals {
		d.verticals[it.ID] = it
	}
	d.ix = buildIndex(cat, c, entities, p)
	return d, nil
}

// Catalog returns the catalog the Diagnoser was built with.
func (d *Diagnoser) Catalog() *Catalog { return d.catalog }

// Content returns the catalog content (symptoms, metrics, vocabulary,
// applications). Callers must not modify it.
func (d *Diagnoser) Content() *Content { return d.content }

// Match is one archetype ranked for a description.
type Match struct {
	ArchetypeID string
	Name        string
	// Probability is the share of belief the matcher puts on this
	// archetype; the probabilities of one Diagnosis sum to 1.
	Probability float64
	// Score is the raw matching score (comparable within one Diagnosis).
	Score float64
	// Evidence is the catalog symptom closest to the description, if any.
	Evidence string
}

// Diagnosis is the ranked answer to "which constraint is this?".
type Diagnosis struct {
	Text     string
	Vertical string // "" when none was given
	// Matches holds every archetype, most likely first; ties break in
	// catalog order.
	Matches []Match
	// Confidence is the probability of the first match. Band reports
	// how it reads.
	Confidence float64
}

// Top returns the first n matches (all if n exceeds them).
func (g Diagnosis) Top(n int) []Match { return g.Matches[:min(n, len(g.Matches))] }

// Band names the confidence band: high, medium or low. EvaluateArchetypes
// reports accuracy per band on labelled sets.
func (g Diagnosis) Band() string { return BandOf(g.Confidence) }

// Confidence bands. The thresholds were set on the development sets so that
// each higher band is more accurate (see EvaluateArchetypes).
const (
	HighConfidence   = 0.6
	MediumConfidence = 0.35
)

// BandOf names the band of a confidence value.
func BandOf(confidence float64) string {
	switch {
	case confidence >= HighConfidence:
		return "high"
	case confidence >= MediumConfidence:
		return "medium"
	}
	return "low"
}

// Summary describes the top three matches in one line, for traces and logs.
func (g Diagnosis) Summary() string {
	parts := make([]string, 0, 3)
	for _, m := range g.Top(3) {
		parts = append(parts, fmt.Sprintf("%s %.2f", m.ArchetypeID, m.Probability))
	}
	return fmt.Sprintf("%s (confidence %s)", strings.Join(parts, ", "), g.Band())
}

// Diagnose ranks the archetypes for a description of a constraint in an
// owner's words. vertical may be "" when it is not known; otherwise it must
// be a catalog vertical id, and its own vocabulary counts as evidence. It
// returns EInvalid for an unknown vertical, or for text that is empty or
// longer than MaxTextLength. The same arguments always give the same
// Diagnosis.
func (d *Diagnoser) Diagnose(ctx context.Context, text, vertical string) (Diagnosis, error) {
	if err := ctx.Err(); err != nil {
		return Diagnosis{}, err
	}
	if vertical != "" {
		if _, ok := d.verticals[vertical]; !ok {
			return Diagnosis{}, unknownVertical(vertical)
		}
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return Diagnosis{}, assistant.Errorf(assistant.EInvalid, "The description of the constraint is empty.")
	}
	if utf8.RuneCountInString(text) > MaxTextLength {
		return Diagnosis{}, assistant.Errorf(assistant.EInvalid, "The description of the constraint is longer than %d characters.", MaxTextLength)
	}
	sc := d.ix.score(text, vertical)
	probs := softmax(sc, d.ix.p.temperature)
	g := Diagnosis{Text: text, Vertical: vertical, Matches: make([]Match, len(sc))}
	for i, s := range sc {
		id := d.ix.ids[s.i]
		g.Matches[i] = Match{
			ArchetypeID: id, Name: d.archetypes[id].Name,
			Probability: round4(probs[i]), Score: round4(s.score), Evidence: s.evidence,
		}
	}
	order := make([]int, len(sc))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case probs[a] > probs[b]:
			return -1
		case probs[a] < probs[b]:
			return 1
		}
		return a - b
	})
	sorted := make([]Match, len(order))
	for i, j := range order {
		sorted[i] = g.Matches[j]
	}
	g.Matches = sorted
	g.Confidence = sorted[0].Probability
	return g, nil
}

func softmax(sc []scored, temperature float64) []float64 {
	mx := math.Inf(-1)
	for _, s := range sc {
		mx = max(mx, s.score)
	}
	out := make([]float64, len(sc))
	sum := 0.0
	for i, s := range sc {
		out[i] = math.Exp((s.score - mx) / temperature)
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
	return out
}

func round4(f float64) float64 { return math.Round(f*1e4) / 1e4 }

func unknownVertical(v string) error { return assistant.CheckVertical(v) }

func unknownArchetype(a string) error {
	return assistant.Errorf(assistant.EInvalid, "Unknown archetype_id %q. Allowed values: %s.", a, strings.Join(assistant.ArchetypeIDs, ", "))
}
