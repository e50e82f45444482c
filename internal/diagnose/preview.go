package diagnose

import (
	"context"
	"slices"
	"strings"

	"github.com/constraintlab/assistant/internal/assistant"
)

// Preview methods: how the archetype of a preview was chosen.
const (
	MethodArchetypeID = "archetype_id"
	MethodFreeText    = "free_text"
)

// MaxAlternatives is how many ranked alternatives a free-text preview lists.
const MaxAlternatives = 3

// PreviewRequest asks for the structured citation block of one archetype in
// one vertical. Exactly one of ArchetypeID and FreeText must be set.
type PreviewRequest struct {
	Vertical    string
	ArchetypeID string
	FreeText    string
}

// Preview is the composed citation block (D11) before titles are attached.
type Preview struct {
	Vertical     Item
	Archetype    Item
	Method       string
	Confidence   float64
	Alternatives []Match // ranked, the chosen archetype excluded
	Applications []Application
	// Citations lists every token the preview uses, each once, in order of
	// first use.
	Citations []assistant.Token
}

// Application is one framework applied to the archetype in the vertical.
type Application struct {
	Rank        int
	Framework   assistant.Token
	Application string
	FirstSteps  []string
	Metrics     []string
	Supporting  []assistant.Token
}

// Preview composes the framework applications for a vertical and either an
// archetype id or a free-text description, which is diagnosed first. It
// returns EInvalid when both or neither of ArchetypeID and FreeText are set
// and for unknown ids (the message lists the allowed ones). The same request
// always gives the same Preview.
func (d *Diagnoser) Preview(ctx context.Context, req PreviewRequest) (*Preview, error) {
	p, err := d.PreviewMatch(ctx, req)
	if err != nil {
		return nil, err
	}
	p.Applications, p.Citations, err = d.Applications(p.Vertical.ID, p.Archetype.ID)
	return p, err
}

// PreviewMatch is Preview without the applications and citations: the
// vertical, the archetype and how it was chosen. A caller that remembers
// what Applications returns for each (vertical, archetype) pair, which
// never changes, needs only this part of each request.
func (d *Diagnoser) PreviewMatch(ctx context.Context, req PreviewRequest) (*Preview, error) {
	hasID, hasText := req.ArchetypeID != "", strings.TrimSpace(req.FreeText) != ""
	if hasID == hasText {
		return nil, assistant.Errorf(assistant.EInvalid,
			"Send exactly one of archetype_id and free_text; this request has %s.", map[bool]string{true: "both", false: "neither"}[hasID])
	}
	v, ok := d.verticals[req.Vertical]
	if !ok {
		return nil, unknownVertical(req.Vertical)
	}
	p := &Preview{Vertical: v, Method: MethodArchetypeID, Confidence: 1, Alternatives: []Match{}}
	archetype := req.ArchetypeID
	if hasID {
		if _, ok := d.archetypes[archetype]; !ok {
			return nil, unknownArchetype(archetype)
		}
	} else {
		g, err := d.Diagnose(ctx, req.FreeText, req.Vertical)
		if err != nil {
			return nil, err
		}
		archetype = g.Matches[0].ArchetypeID
		p.Method, p.Confidence = MethodFreeText, g.Confidence
		p.Alternatives = slices.Clone(g.Matches[1 : 1+MaxAlternatives])
	}
	p.Archetype = d.archetypes[archetype]
	return p, nil
}

// compose builds the applications of an archetype for a vertical: the
// archetype x framework text with the vertical's vocabulary filled in, and
// first steps and metrics that interleave the framework's own with the
// vertical's moves and metrics for this archetype, so that each vertical's
// preview differs in substance and not only in words.
func (d *Diagnoser) compose(archetype, vertical string) []Application {
	a := d.content.Archetypes[archetype]
	v, ok := d.content.Verticals[vertical]
	if !ok {
		v = neutralVertical
	}
	va := v.Archetypes[archetype]
	apps := make([]Application, 0, len(a.Applications))
	for i, fa := range a.Applications {
		app := Application{
			Rank:        i + 1,
			Framework:   assistant.Token{Type: assistant.Framework, Slug: fa.Framework},
			Application: v.fill(fa.Why),
		}
		// First steps: the framework's first step, then this vertical's
		// move for the archetype (a different one for each application,
		// in turn), then the framework's remaining steps.
		app.FirstSteps = append(app.FirstSteps, v.fill(fa.Steps[0]))
		if len(va.Moves) > 0 {
			app.FirstSteps = append(app.FirstSteps, va.Moves[i%len(va.Moves)])
		}
		for _, s := range fa.Steps[1:] {
			app.FirstSteps = append(app.FirstSteps, v.fill(s))
		}
		// Metrics: the vertical's metric for the archetype first, then the
		// framework's, then the vertical's next one.
		if n := len(va.Metrics); n > 0 {
			app.Metrics = appendNew(app.Metrics, capitalise(va.Metrics[i%n]))
		}
		for _, m := range fa.Metrics {
			app.Metrics = appendNew(app.Metrics, capitalise(v.fill(m)))
		}
		if n := len(va.Metrics); n > 0 {
			app.Metrics = appendNew(app.Metrics, capitalise(va.Metrics[(i+1)%n]))
		}
		for _, s := range fa.Supporting {
			t, _ := assistant.ParseToken(s) // checked by New
			app.Supporting = append(app.Supporting, t)
		}
		apps = append(apps, app)
	}
	return apps
}

// Applications composes the framework applications of an archetype in a
// vertical's terms, and every token they cite. An empty vertical means the
// industry is not known: the applications are then written in neutral
// words that belong to no industry, without any vertical's own moves or
// metrics (D28). The slices returned are the caller's.
func (d *Diagnoser) Applications(vertical, archetype string) ([]Application, []assistant.Token, error) {
	if _, ok := d.archetypes[archetype]; !ok {
		return nil, nil, unknownArchetype(archetype)
	}
	if _, ok := d.verticals[vertical]; vertical != "" && !ok {
		return nil, nil, unknownVertical(vertical)
	}
	c := d.composed(archetype, vertical)
	apps := make([]Application, len(c.apps))
	for i, app := range c.apps {
		app.FirstSteps, app.Metrics, app.Supporting = slices.Clone(app.FirstSteps), slices.Clone(app.Metrics), slices.Clone(app.Supporting)
		apps[i] = app
	}
	return apps, slices.Clone(c.citations), nil
}

// composition is what Applications returns for one (archetype, vertical)
// pair; it is shared and never modified.
type composition struct {
	apps      []Application
	citations []assistant.Token
}

// composed returns the composition of an archetype (and a vertical, or
// ""), composing it the first time it is asked for: the content never
// changes, and filling the vocabulary in is most of the cost of a
// diagnosis turn's plan. There are at most as many as archetypes times
// verticals (and the neutral words), ids checked by the caller.
func (d *Diagnoser) composed(archetype, vertical string) *composition {
	key := [2]string{archetype, vertical}
	if c, ok := d.compositions.Load(key); ok {
		return c.(*composition)
	}
	c := &composition{apps: d.compose(archetype, vertical)}
	for _, app := range c.apps {
		for _, t := range append([]assistant.Token{app.Framework}, app.Supporting...) {
			if !slices.Contains(c.citations, t) {
				c.citations = append(c.citations, t)
			}
		}
	}
	stored, _ := d.compositions.LoadOrStore(key, c)
	return stored.(*composition)
}

// neutralVertical fills the placeholders when the industry is unknown.
var neutralVertical = &VerticalContent{Vocabulary: map[string]string{
	"customer": "customer", "customers": "customers", "offer": "product or service",
	"sale": "sale", "sales": "sales", "lead": "lead", "leads": "leads",
	"unit": "job", "units": "jobs", "team": "team", "bottleneck": "busiest step",
	"channel": "main channel", "repeat": "repeat purchase",
}}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// CatalogApplication is the catalog's application of one framework to
// one archetype, in neutral words: what a framework's card shows of the
// catalog.
type CatalogApplication struct {
	Archetype   string
	Application string
	FirstSteps  []string
}

// ApplicationsOf returns the catalog's applications of the framework to
// every archetype it serves, in the catalog's order of archetypes and in
// neutral words; nil for an entity the catalog does not apply. The lists
// are shared: callers must only read them.
func (d *Diagnoser) ApplicationsOf(t assistant.Token) []CatalogApplication {
	return d.byFramework()[t]
}

// byFramework groups the neutral applications of every archetype by
// framework, composed once.
func (d *Diagnoser) byFramework() map[assistant.Token][]CatalogApplication {
	d.frameworksOnce.Do(func() {
		d.frameworks = map[assistant.Token][]CatalogApplication{}
		for _, a := range d.catalog.Archetypes {
			for _, app := range d.composed(a.ID, "").apps {
				d.frameworks[app.Framework] = append(d.frameworks[app.Framework],
					CatalogApplication{Archetype: a.ID, Application: app.Application, FirstSteps: app.FirstSteps})
			}
		}
	})
	return d.frameworks
}
