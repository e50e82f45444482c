package chat

import (
	"context"
	"sort"
	"strings"
	"sync"

	"github.com/constraintlab/assistant/internal/diagnose"
	"github.com/constraintlab/assistant/internal/textproc"
)

// DiagnosisAdapter gives the chat's diagnose_constraint tool what it needs
// of a *diagnose.Diagnoser.
type DiagnosisAdapter struct {
	D *diagnose.Diagnoser
	// verticalTerms maps a stemmed word to the one vertical it names.
	verticalTerms map[string]string
	// businessTerms holds the stemmed words that name a kind of business
	// (the verticals' businesses).
	businessTerms map[string]bool
	// plans remembers Plan's answers by [vertical, archetype]: at most
	// the catalog's archetypes times its verticals and the neutral words.
	plans sync.Map
}

// NewDiagnosisAdapter wraps d and prepares vertical guessing: the words of
// each vertical's name, description, kinds of business and vocabulary that
// belong to no other vertical.
func NewDiagnosisAdapter(d *diagnose.Diagnoser) *DiagnosisAdapter {
	a := &DiagnosisAdapter{D: d, verticalTerms: map[string]string{}, businessTerms: map[string]bool{}}
	owners := map[string]map[string]bool{}
	add := func(vertical, text string) []string {
		terms := textproc.Terms(text)
		for _, t := range terms {
			if owners[t] == nil {
				owners[t] = map[string]bool{}
			}
			owners[t][vertical] = true
		}
		return terms
	}
	for _, v := range d.Catalog().Verticals {
		add(v.ID, v.Name+" "+v.Description)
		if c := d.Content().Verticals[v.ID]; c != nil {
			for _, word := range c.Vocabulary {
				add(v.ID, word)
			}
			for _, word := range c.Businesses {
				for _, t := range add(v.ID, word) {
					a.businessTerms[t] = true
				}
			}
		}
	}
	for term, vs := range owners {
		if len(vs) == 1 {
			for v := range vs {
				a.verticalTerms[term] = v
			}
		}
	}
	return a
}

// Diagnose implements Diagnoser.
func (a *DiagnosisAdapter) Diagnose(ctx context.Context, text, vertical string) (diagnose.Diagnosis, error) {
	return a.D.Diagnose(ctx, text, vertical)
}

// ArchetypeDescription implements Diagnoser.
func (a *DiagnosisAdapter) ArchetypeDescription(id string) string {
	for _, it := range a.D.Catalog().Archetypes {
		if it.ID == id {
			return it.Description
		}
	}
	return ""
}

// Plan implements Diagnoser with the framework applications in the
// vertical's terms, or in neutral words when the vertical is unknown; the
// metrics are the vertical's own for the archetype first, then the
// archetype's.
// The plan is worked out once per (vertical, archetype) and shared: the
// content never changes, and copying it was a diagnosis turn's largest
// allocation.
func (a *DiagnosisAdapter) Plan(ctx context.Context, vertical, archetypeID string) (Plan, error) {
	key := [2]string{vertical, archetypeID}
	if p, ok := a.plans.Load(key); ok {
		return p.(Plan), nil
	}
	p, err := a.plan(vertical, archetypeID)
	if err != nil {
		return Plan{}, err
	}
	a.plans.Store(key, p)
	return p, nil
}

func (a *DiagnosisAdapter) plan(vertical, archetypeID string) (Plan, error) {
	apps, citations, err := a.D.Applications(vertical, archetypeID)
	if err != nil {
		return Plan{}, err
	}
	plan := Plan{Citations: citations}
	if v := a.D.Content().Verticals[vertical]; v != nil {
		for _, m := range v.Archetypes[archetypeID].Metrics {
			plan.Metrics = append(plan.Metrics, capitalise(m))
		}
	}
	if c := a.D.Content().Archetypes[archetypeID]; c != nil {
		plan.Metrics = append(plan.Metrics, c.Metrics...)
	}
	for _, app := range apps {
		item := DiagnoseApplying{Token: app.Framework.String(), Application: app.Application,
			FirstSteps: app.FirstSteps, Metrics: app.Metrics, Supporting: []string{}}
		for _, s := range app.Supporting {
			item.Supporting = append(item.Supporting, s.String())
		}
		plan.Applications = append(plan.Applications, item)
	}
	return plan, nil
}

// IndustryTerm reports whether a stem names one vertical's business (its
// name, description or vocabulary, and no other vertical's).
func (a *DiagnosisAdapter) IndustryTerm(stem string) bool {
	_, ok := a.verticalTerms[stem]
	return ok
}

// BusinessKind reports whether a stem names a kind of business ("bakery",
// "plumber").
func (a *DiagnosisAdapter) BusinessKind(stem string) bool {
	return a.businessTerms[stem]
}

// GuessVertical implements Diagnoser: the vertical whose own words the
// text uses, when the evidence is clear (at least two of its words, and at
// least twice as many as of any other vertical's); otherwise "".
func (a *DiagnosisAdapter) GuessVertical(text string) string {
	count := map[string]int{}
	for _, t := range textproc.SharedTerms(text) {
		if v, ok := a.verticalTerms[t]; ok {
			count[v]++
		}
	}
	type vc struct {
		v string
		n int
	}
	var list []vc
	for v, n := range count {
		list = append(list, vc{v, n})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].n > list[j].n || (list[i].n == list[j].n && list[i].v < list[j].v) })
	switch {
	case len(list) == 0 || list[0].n < 2:
		return "" // one word is not clear evidence ("cafes" may be the customers)
	case len(list) == 1 || list[0].n >= 2*list[1].n:
		return list[0].v
	}
	return "" // mixed evidence: neutral words are better than a wrong industry's
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
