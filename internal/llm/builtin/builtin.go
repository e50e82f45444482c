// Package builtin is the offline model provider, the default. It speaks
// the same protocol as a hosted model: it reads the persona's mode, the
// caller's vertical and the turn's reading of the question from the
// request (llm.Request.Mode, .Vertical, .Reading), the tool results (their
// shapes are the contract in internal/tooling), and the persona's record
// (internal/persona), which says everything persona-specific: the tool
// order, the search angle, the situations, the sections and what fills
// each. Its own code is a planner, a sentence picker and a small
// interpreter of the persona's sections. It is deterministic: the same
// conversation always gets the same answer.
//
// Evidence first: every sentence it asserts is a sentence of an entity it
// read and cites, one a reader sees on that entity's card (/resolve). Its
// own words are headings, questions back to the user and plain statements
// of what the knowledge base covers; it never splices the user's words
// into a sentence of its own.
//
// Planning, by round:
//  1. search_knowledge on the reading's search text (with the persona's
//     angle and situation; in a follow-up that says enough on its own, a
//     second search for its own words) and diagnose_constraint, in the
//     persona's order; a question about a subject never advised on
//     (health, law, tax...) is declined at once, with no tool;
//  2. out of scope, nothing more: the answer declines. Otherwise the
//     persona's method search when it has one; then get_entity on the
//     entities that best match the question;
//  3. the answer (answer.go).
package builtin

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/constraintlab/assistant/internal/llm"
	"github.com/constraintlab/assistant/internal/persona"
	"github.com/constraintlab/assistant/internal/textproc"
	"github.com/constraintlab/assistant/internal/tooling"
)

// Provider is the builtin model.
type Provider struct{}

// New returns the builtin provider.
func New() *Provider { return &Provider{} }

// ReadsResults implements llm.ResultReader: the builtin model reads the
// chat turn's search and diagnosis results as values.
func (*Provider) ReadsResults() bool { return true }

// QuotesOnly implements llm.Quoter: every sentence the builtin asserts is
// a sentence of the knowledge it cites.
func (*Provider) QuotesOnly() bool { return true }

// Name implements llm.Provider.
func (*Provider) Name() string { return "builtin" }

// turn is what the builtin model reads of a conversation.
type turn struct {
	persona   persona.Persona
	reading   tooling.Reading
	vertical  string   // the caller's vertical, "" when not given
	previous  []string // earlier assistant answers, oldest first
	searches  []searchResult
	entities  []entityResult
	diagnosis *diagnoseResult
	calls     int // tool calls already made this turn
	canCall   map[string]bool
}

func read(req llm.Request) (turn, error) {
	personas, err := persona.Load()
	if err != nil {
		return turn{}, err
	}
	mode := strings.TrimSpace(req.Mode)
	if mode == "" {
		mode = persona.Modes[0]
	}
	p, ok := personas[mode]
	if !ok {
		return turn{}, fmt.Errorf("%w: builtin: unknown mode %q", llm.ErrMisconfigured, mode)
	}
	t := turn{persona: p, vertical: strings.TrimSpace(req.Vertical), canCall: map[string]bool{}}
	for _, tool := range req.Tools {
		t.canCall[tool.Name] = true
	}
	lastUser := -1
	for i, m := range req.Messages {
		if m.Role == llm.RoleUser {
			lastUser = i
		}
	}
	for i, m := range req.Messages {
		switch {
		case m.Role == llm.RoleAssistant && i < lastUser:
			t.previous = append(t.previous, m.Content)
		case m.Role == llm.RoleAssistant && i > lastUser:
			t.calls += len(m.ToolCalls)
		case m.Role == llm.RoleTool && i > lastUser:
			switch m.Name {
			case tooling.ToolSearch:
				if r, ok := searchOf(m); ok {
					t.searches = append(t.searches, r)
				}
			case tooling.ToolEntity:
				if r, ok := decode(entityResults, m.Content); ok && r.Found {
					t.entities = append(t.entities, r)
				}
			case tooling.ToolDiagnose:
				if r, ok := diagnosisOf(m); ok && len(r.Matches) > 0 {
					t.diagnosis = &r
				}
			}
		}
	}
	if req.Reading != nil {
		t.reading = *req.Reading
	} else if lastUser >= 0 {
		t.reading = plainReading(req.Messages[lastUser].Content)
	}
	// The workspace's own knowledge can bring a question into scope: the
	// search says so.
	if len(t.searches) > 0 && t.searches[0].Scope.Workspace {
		t.reading.Scope = t.searches[0].Scope
	}
	return t, nil
}

// plainReading reads a question for a caller that is not a chat turn and
// gives no reading: in scope, searched as written, every content word a
// key term.
func plainReading(question string) tooling.Reading {
	r := tooling.Reading{Question: question, Search: question, Scope: tooling.Scope{InScope: true, Language: "en"}}
	for _, term := range textproc.Terms(question) {
		if !slices.ContainsFunc(r.KeyTerms, func(k tooling.KeyTerm) bool { return k.Stem == term }) {
			r.KeyTerms = append(r.KeyTerms, tooling.KeyTerm{Stem: term, Word: term, Weight: 0.5})
		}
	}
	return r
}

// Complete implements llm.Provider.
func (p *Provider) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return llm.Response{}, err
	}
	t, err := read(req)
	if err != nil {
		return llm.Response{}, err
	}
	if calls := t.plan(); len(calls) > 0 {
		return llm.Response{ToolCalls: calls}, nil
	}
	return llm.Response{Content: t.compose()}, nil
}

func (t turn) plan() []llm.ToolCall {
	call := func(name string, args any) llm.ToolCall {
		b, _ := json.Marshal(args)
		t.calls++
		return llm.ToolCall{ID: fmt.Sprintf("call_%d", t.calls), Name: name, Arguments: b}
	}
	if !t.canCall[tooling.ToolSearch] || t.reading.Scope.Care != "" || strings.TrimSpace(t.reading.Search) == "" {
		return nil // nothing to look up: answer (or decline) now
	}
	if len(t.searches) == 0 {
		query := strings.TrimSpace(strings.Join([]string{t.reading.Search, t.persona.SearchAngle, t.reading.SituationTerms}, " "))
		var calls []llm.ToolCall
		for _, tool := range t.persona.Tools {
			switch {
			case tool == tooling.ToolSearch:
				calls = append(calls, call(tooling.ToolSearch, tooling.SearchArgs{Query: query, Limit: 10}))
				if own := t.asksQuery(); own != "" {
					calls = append(calls, call(tooling.ToolSearch, tooling.SearchArgs{Query: own, Limit: 6}))
				}
			case tool == tooling.ToolDiagnose && t.canCall[tooling.ToolDiagnose] && t.diagnosis == nil:
				calls = append(calls, call(tooling.ToolDiagnose, tooling.DiagnoseArgs{Description: t.reading.Search, Vertical: t.vertical}))
			}
		}
		return calls
	}
	if !t.inScope() || t.productQuestionWithoutDocs() || len(t.entities) > 0 {
		return nil
	}
	var calls []llm.ToolCall
	for _, tok := range t.toRead() {
		calls = append(calls, call(tooling.ToolEntity, tooling.EntityArgs{Token: tok}))
	}
	return calls
}

// asksQuery is, in a follow-up that says enough on its own, the search
// for what the message itself asks (reading.Asks), from the persona's
// angle; "" otherwise.
func (t turn) asksQuery() string {
	if t.reading.Asks == "" {
		return ""
	}
	return strings.TrimSpace(strings.Join([]string{t.reading.Asks, t.persona.SearchAngle, t.reading.SituationTerms}, " "))
}

// earlierWeight is what a hit of the whole conversation's search counts
// for, against the follow-up's own search (asksQuery), when it has one:
// the earlier question's words weigh half, as they do in its key terms.
const earlierWeight = 0.5

func (t turn) inScope() bool { return t.reading.Scope.InScope }

// toRead picks the entities to read in full: up to three frameworks and
// one paper or essay, best match to the question first. The search's own
// order decides, nudged towards the knowledge written for situations like
// the question's (writtenFor) and the diagnosis's likeliest constraints
// (likeliest); a follow-up's own search leads the whole conversation's;
// the workspace's own knowledge that tops the search leads.
func (t turn) toRead() []string {
	var hits []searchHit
	asksQuery := t.asksQuery()
	// A follow-up's own search and the whole conversation's are merged:
	// an entity found by both adds its scores, the conversation's at
	// earlierWeight.
	at := map[string]int{}
	for _, s := range t.searches {
		weight := 1.0
		if asksQuery != "" && s.Query != asksQuery {
			weight = earlierWeight
		}
		for _, h := range s.Hits {
			h.Score *= weight
			if i, ok := at[h.Token]; ok {
				hits[i].Score += h.Score
				continue
			}
			at[h.Token] = len(hits)
			hits = append(hits, h)
		}
	}
	var imported, frameworks, support []string
	add := func(tok string) {
		switch {
		case slices.Contains(imported, tok) || slices.Contains(frameworks, tok) || slices.Contains(support, tok):
		case strings.HasPrefix(tok, "framework:"):
			if len(frameworks) < 3 {
				frameworks = append(frameworks, tok)
			}
		default:
			if len(support) < 2 {
				support = append(support, tok)
			}
		}
	}
	if len(hits) > 0 && hits[0].Imported {
		imported = append(imported, hits[0].Token)
	}
	likely := map[string]bool{}
	if t.diagnosis != nil {
		for _, m := range t.likeliest() {
			likely[m.ArchetypeID] = true
		}
	}
	// A follow-up that says what was tried moves on: what the earlier
	// answers cited gives way to knowledge not yet offered.
	offered := map[string]bool{}
	if t.reading.Tried {
		for _, prev := range t.previous {
			for _, m := range tokenPattern.FindAllStringSubmatch(prev, -1) {
				offered[m[1]] = true
			}
		}
	}
	// Knowledge off the persona's side loses part of its score, both when
	// ranking and when judging a further hit.
	personaPenalty := map[string]float64{}
	for _, h := range hits {
		if t.offPersona(h.Archetypes) {
			personaPenalty[h.Token] = offPersonaPenalty
		}
	}
	rank := func(h searchHit) float64 {
		score := h.Score + writtenForRank*t.writtenFor(h)
		if slices.ContainsFunc(h.Archetypes, func(a string) bool { return likely[a] }) {
			score += 0.25
		}
		if offered[h.Token] {
			score -= 0.3
		}
		return score - personaPenalty[h.Token]
	}
	ranks := make(map[string]float64, len(hits)) // worked out once per hit, not per comparison
	for _, h := range hits {
		ranks[h.Token] = rank(h)
	}
	slices.SortStableFunc(hits, func(a, b searchHit) int { return cmp.Compare(ranks[b.Token], ranks[a.Token]) })
	if len(hits) > 0 {
		add(hits[0].Token)
	}
	// A framework named for a word of the question that the knowledge base
	// rarely uses ("QBR", "MEDDIC", "Erlang") is what the question asks
	// about: it is read whatever its rank. (A paper's title is a sentence
	// whose words are incidental: "meta-analytic" is not "Meta ads".)
	for _, h := range hits {
		if strings.HasPrefix(h.Token, "framework:") && t.named(h.Title) {
			add(h.Token)
		}
	}
	if t.diagnosisLeads() {
		for _, a := range t.diagnosis.Applications[:min(2, len(t.diagnosis.Applications))] {
			add(a.Token)
		}
	}
	// Further hits are read only when they score well against the best:
	// at 0.4 of the top score, knowledge that shared a word with the
	// question but not its situation spoke too often (40 answers rated
	// blind in pairs went from 2.50 to 2.65 when the bar rose to 0.55).
	for _, h := range hits {
		if h.Score-personaPenalty[h.Token] >= alsoReadFrom {
			add(h.Token)
		}
	}
	out := append(imported, frameworks...)
	return append(out, support...)
}

// writtenFor is the share of the question's key terms that a hit's title
// and "When to use" situations hold: how close the situations it is
// written for are to the question's. 0 for a hit that lists none.
func (t turn) writtenFor(h searchHit) float64 {
	if len(h.WhenToUse) == 0 {
		return 0
	}
	texts := make([]*analysis, 0, len(h.WhenToUse)+1)
	texts = append(texts, analyse(h.Title))
	for _, w := range h.WhenToUse {
		texts = append(texts, analyse(w))
	}
	return t.reading.AddressedShare(func(stem string) bool {
		return slices.ContainsFunc(texts, func(a *analysis) bool { return slices.Contains(a.terms, stem) })
	})
}

// writtenForRank is what writtenFor adds to a hit's search score when the
// entities to read are chosen.
const writtenForRank = 0.5

// offPersona reports whether knowledge helps with none of the constraints
// the persona's questions are about: call-centre staffing for a seller's
// "discovery call", a startup canvas for a success manager's accounts.
// Knowledge with no archetypes (the workspace's own) is never off persona.
func (t turn) offPersona(archetypes []string) bool {
	own := slices.Clip(t.persona.Archetypes) // appending never writes into the record
	if len(own) == 0 && t.diagnosis != nil && t.diagnosis.Band != "low" {
		// A persona whose questions may be about any constraint (the
		// operator) takes the question's: the diagnosis's likeliest,
		// when it could place the question at all.
		for _, m := range t.likeliest() {
			own = append(own, m.ArchetypeID)
		}
	}
	if len(own) == 0 || len(archetypes) == 0 {
		return false
	}
	return !slices.ContainsFunc(archetypes, func(a string) bool { return slices.Contains(own, a) })
}

// likeliest are the diagnosis's likeliest constraints: its best match,
// and the runner-up when it is a real contender (runnerUpFrom). The
// runner-up used to count whatever its probability, so a founder who
// approves everything, placed as a founder bottleneck at 0.99 and a hiring
// problem at 0.00, got staff-burnout knowledge (a hiring card) in the
// answer's reasons and steps. 124 answers over the blind sets moved when
// the runner-up needed 0.1, rated blind in pairs from 2.36 to 2.73 (59
// better, 29 worse; docs/evaluation.md, "Twenty-fifth session").
func (t turn) likeliest() []diagnoseMatch {
	m := t.diagnosis.Matches
	if len(m) > 1 && m[1].Probability >= runnerUpFrom {
		return m[:2]
	}
	return m[:min(1, len(m))]
}

// runnerUpFrom is the probability from which the diagnosis's second match
// counts among the likeliest constraints.
const runnerUpFrom = 0.1

// offPersonaPenalty is what an off-persona hit loses of its search score
// (relative to the best hit) when the entities to read are chosen.
const offPersonaPenalty = 0.5

// alsoReadFrom is the search score, relative to the best hit, from which
// a further hit is read.
const alsoReadFrom = 0.55

// named reports whether a title holds a key term of the question that
// is specific to the knowledge base (namedSpecificity): the question names
// the entity's subject.
func (t turn) named(title string) bool {
	if title == "" {
		return false
	}
	terms := analyse(title).terms
	for _, k := range t.reading.KeyTerms {
		if namesEntity(k) && slices.Contains(terms, k.Stem) {
			return true
		}
	}
	return false
}

// namesEntity reports whether a key term is specific enough to the
// knowledge base to name the entity whose title holds it.
func namesEntity(k tooling.KeyTerm) bool {
	return k.Specificity >= namedSpecificity && len(k.Stem) >= 3
}

// namedSpecificity is how specific to the knowledge base a question's word
// must be for an entity whose title holds it to count as named: a word
// few entities use, not one most of them do ("customer").
const namedSpecificity = 0.9

// diagnosisLeads reports whether the diagnosis is sure enough to lead the
// answer: the persona lets a diagnosis lead (its question is about the
// business, not a conversation, a fault or one account), the diagnosis is in the high
// band, and its best match stands clear of the runner-up. (Medium-band
// diagnoses led too until blind ratings showed their answers averaged 1.6
// of 5 against 2.4 for high-band ones; 40 operator answers rated in pairs
// went from 2.12 to 2.30 when only the high band led.)
func (t turn) diagnosisLeads() bool {
	d := t.diagnosis
	if d == nil || len(d.Applications) == 0 || !t.persona.DiagnosisLeads() || d.Band != "high" {
		return false
	}
	return t.diagnosisMargin() >= clearMargin
}

// clearMargin is how far the likeliest constraint must stand above the
// runner-up for the diagnosis to be named rather than offered as a
// hypothesis.
const clearMargin = 0.15

func (t turn) diagnosisMargin() float64 {
	m := t.diagnosis.Matches
	if len(m) < 2 {
		return m[0].Probability
	}
	return m[0].Probability - m[1].Probability
}
