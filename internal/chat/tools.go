package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/diagnose"
	"github.com/constraintlab/assistant/internal/knowledge"
	"github.com/constraintlab/assistant/internal/llm"
	"github.com/constraintlab/assistant/internal/memo"
	"github.com/constraintlab/assistant/internal/textproc"
	"github.com/constraintlab/assistant/internal/tooling"
)

// The tool names and the JSON shapes of tool arguments and results are
// the contract in internal/tooling; the aliases keep chat's callers on one
// import.
const (
	ToolSearch   = tooling.ToolSearch
	ToolEntity   = tooling.ToolEntity
	ToolDiagnose = tooling.ToolDiagnose
)

type (
	SearchArgs       = tooling.SearchArgs
	SearchHit        = tooling.SearchHit
	SearchResult     = tooling.SearchResult
	EntityArgs       = tooling.EntityArgs
	EntityResult     = tooling.EntityResult
	DiagnoseArgs     = tooling.DiagnoseArgs
	DiagnoseResult   = tooling.DiagnoseResult
	DiagnoseMatch    = tooling.DiagnoseMatch
	DiagnoseApplying = tooling.DiagnoseApplying
)

func schema(s string) json.RawMessage { return json.RawMessage(s) }

// toolSpecs describes the tools to the model. The lists are built once
// and shared by every turn: callers must only read them.
func toolSpecs(withDiagnosis bool) []llm.Tool {
	if withDiagnosis {
		return toolsWithDiagnosis
	}
	return toolsWithoutDiagnosis
}

var toolsWithDiagnosis, toolsWithoutDiagnosis = slices.Clip(buildToolSpecs(true)), slices.Clip(buildToolSpecs(false))

func buildToolSpecs(withDiagnosis bool) []llm.Tool {
	tools := []llm.Tool{
		{Name: ToolSearch, Description: "Search the knowledge base of frameworks, papers and essays. Returns ranked entities with their citation tokens.",
			Parameters: schema(`{"type":"object","properties":{"query":{"type":"string","description":"What to look for, in plain words"},"type":{"type":"string","enum":["framework","paper","blog"]},"limit":{"type":"integer","minimum":1,"maximum":10}},"required":["query"]}`)},
		{Name: ToolEntity, Description: "Read one entity of the knowledge base in full (summary, key ideas, when to use, pitfalls) by its citation token.",
			Parameters: schema(`{"type":"object","properties":{"token":{"type":"string","description":"A citation token such as framework:theory-of-constraints"}},"required":["token"]}`)},
	}
	if withDiagnosis {
		tools = append(tools, llm.Tool{Name: ToolDiagnose,
			Description: "Diagnose which constraint archetype holds a business back from a description of its situation, and get the frameworks that apply with first steps and metrics. Pass the vertical (" + strings.Join(assistant.VerticalIDs, ", ") + ") when it is clear.",
			Parameters:  schema(`{"type":"object","properties":{"description":{"type":"string"},"vertical":{"type":"string"}},"required":["description"]}`)})
	}
	return tools
}

// toolbox runs tool calls for one turn and remembers what they returned,
// so the answer's rag_hits and the verifier's evidence come from what the
// turn actually retrieved.
type toolbox struct {
	s *Service
	// retrieved keeps every entity the tools returned, in first-seen
	// order, with the best retrieval relevance seen. A turn retrieves a
	// few dozen at most, so it is searched in order (found) rather than
	// indexed by a map.
	retrieved []retrievedEntity
	// hits is the evidence the verifier holds uncited claims against:
	// the retrieved entities, with their applications.
	hits []assistant.Entity
	// extended holds the entities withApplications extended this turn
	// (applied is complete by then: the tools have run).
	extended []extendedEntity
	// vertical is the request's vertical ("" when the caller gave none).
	vertical string
	// scope is the turn's question assessed against the scope rule.
	scope Scope
	// question is the user's message of the turn.
	question string
	// industry holds the stems of the question's words that name a kind of
	// business ("bakery", "plumber": the reading's key terms marked Kind),
	// which place the question in its industry rather than say what it
	// asks: the turn's searches weigh them lightly
	// (assistant.SearchQuery.Industry).
	industry []string
	// applied holds, per framework, the catalog's application of it to
	// the constraint the turn diagnosed: the application text, first steps
	// and metrics.
	applied map[assistant.Token][]string
	// diagnosisBand is the confidence band of the turn's last diagnosis
	// ("" when the turn diagnosed nothing).
	diagnosisBand string
	// personaDiagnosisLeads is whether the persona lets a diagnosis lead
	// its answer (persona.Persona.DiagnosisLeads): only then does the
	// diagnosis's band bound the confidence.
	personaDiagnosisLeads bool
	// specific is how specific each stem is to the knowledge base, as the
	// turn's reading used it (for the situation fit).
	specific func(stem string) float64
}

// toolboxes keeps the toolboxes of finished turns, whose slices the next
// turns fill again: a turn's entities are a few hundred bytes each, and
// growing the slices afresh was several KB of every turn.
var toolboxes = sync.Pool{New: func() any { return &toolbox{} }}

// release forgets the turn (its entities are the knowledge snapshot's,
// which must not be kept alive by an idle toolbox) and keeps tb for
// another. Nothing of the turn may refer to tb or its slices after it.
func (tb *toolbox) release() {
	clear(tb.retrieved)
	clear(tb.hits)
	clear(tb.extended)
	*tb = toolbox{retrieved: tb.retrieved[:0], hits: tb.hits[:0], extended: tb.extended[:0]}
	toolboxes.Put(tb)
}

type retrievedEntity struct {
	entity assistant.Entity
	score  float64 // relevance 0..1 within its search, 1 for a direct read
}

func (tb *toolbox) remember(e assistant.Entity, score float64) {
	if r := tb.found(e.Token()); r != nil {
		r.score = max(r.score, score)
		return
	}
	tb.retrieved = append(tb.retrieved, retrievedEntity{entity: e, score: score})
}

// found returns the entity of token t the tools returned this turn, or nil.
func (tb *toolbox) found(t assistant.Token) *retrievedEntity {
	for i := range tb.retrieved {
		if r := &tb.retrieved[i]; r.entity.Slug == t.Slug && r.entity.Type == t.Type {
			return r
		}
	}
	return nil
}

// run executes one call and returns its result and the trace summaries.
// The result is its JSON, a string, or a pointer to the result (a search
// or a diagnosis) for the turn to give the model as it reads it
// (toolMessage). A bad call (unknown tool, malformed arguments) is
// answered with an error result the model can read, not a failed turn.
func (tb *toolbox) run(ctx context.Context, call llm.ToolCall) (result any, input, summary string, err error) {
	switch call.Name {
	case ToolSearch:
		var a SearchArgs
		if err := json.Unmarshal(call.Arguments, &a); err != nil || strings.TrimSpace(a.Query) == "" {
			return toolError("search_knowledge needs {\"query\": \"...\"}"), string(call.Arguments), "invalid arguments", nil
		}
		return tb.search(ctx, a)
	case ToolEntity:
		var a EntityArgs
		if err := json.Unmarshal(call.Arguments, &a); err != nil {
			return toolError("get_entity needs {\"token\": \"type:slug\"}"), string(call.Arguments), "invalid arguments", nil
		}
		return tb.entity(ctx, a)
	case ToolDiagnose:
		if tb.s.Diagnoser == nil {
			return toolError("diagnose_constraint is not available"), string(call.Arguments), "not available", nil
		}
		var a DiagnoseArgs
		if err := json.Unmarshal(call.Arguments, &a); err != nil || strings.TrimSpace(a.Description) == "" {
			return toolError("diagnose_constraint needs {\"description\": \"...\"}"), string(call.Arguments), "invalid arguments", nil
		}
		return tb.diagnose(ctx, a)
	}
	return toolError(fmt.Sprintf("there is no tool named %q", call.Name)), string(call.Arguments), "unknown tool", nil
}

func toolError(msg string) string {
	b, _ := json.Marshal(map[string]string{"error": msg})
	return string(b)
}

// encode is json.Marshal(v) as a string ("" on error). An Encoder writing
// into a strings.Builder gives the same bytes with a newline added, and
// copies them once where Marshal and the conversion copy them twice.
func encode(v any) string {
	var b strings.Builder
	if err := json.NewEncoder(&b).Encode(v); err != nil {
		return ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// toolMessage is the tool message answering call with result (run's):
// a result that is not yet JSON is given as it is to a provider that
// reads values (llm.ReadsResults, the builtin model), which spares
// encoding it and decoding it again, and as its JSON to any other.
func toolMessage(call llm.ToolCall, result any, values bool) llm.Message {
	m := llm.Message{Role: llm.RoleTool, ToolCallID: call.ID, Name: call.Name}
	switch r := result.(type) {
	case string:
		m.Content = r
	default:
		if values {
			m.Result = r
		} else {
			m.Content = encode(r)
		}
	}
	return m
}

func (tb *toolbox) search(ctx context.Context, a SearchArgs) (any, string, string, error) {
	limit := a.Limit
	if limit <= 0 || limit > 10 {
		limit = 6
	}
	q := assistant.SearchQuery{Text: a.Query, Limit: limit, Industry: tb.industry}
	if t := assistant.EntityType(a.Type); t.Valid() {
		q.Type = t
	}
	hits, err := tb.s.Retriever.Search(ctx, q)
	if err != nil {
		return "", "", "", err
	}
	res := SearchResult{Query: a.Query, Hits: make([]SearchHit, 0, len(hits)), Scope: tb.scope}
	top := 0.0
	if len(hits) > 0 {
		top = hits[0].Score
	}
	names := make([]string, 0, min(3, len(hits)))
	for _, h := range hits {
		rel := 0.0
		if top > 0 {
			rel = h.Score / top
		}
		tb.remember(h.Entity, rel)
		token := h.Entity.Token().String()
		res.Hits = append(res.Hits, SearchHit{Token: token, Title: h.Entity.Title,
			Summary: firstSentences(h.Entity.Summary, 2), Archetypes: h.Entity.Archetypes, WhenToUse: h.Entity.WhenToUse, Score: round3(rel),
			Imported: h.Entity.Origin == assistant.OriginImported})
		if len(names) < 3 {
			names = append(names, token)
		}
	}
	res.Coverage, res.Missing = coverage(a.Query, hits, tb.s.terms.terms)
	// The workspace's own knowledge is in scope by definition (D29): a
	// question its imported top hit covers is answered from it.
	if !tb.scope.InScope && len(hits) > 0 && hits[0].Entity.Origin == assistant.OriginImported {
		if c, _ := coverage(tb.question, hits[:1], tb.s.terms.terms); c >= 0.5 {
			tb.scope.InScope, tb.scope.Workspace = true, true
		}
	}
	res.Scope = tb.scope
	summary := fmt.Sprintf("%d results", len(hits))
	if len(names) > 0 {
		summary += ": " + strings.Join(names, ", ")
	}
	input := fmt.Sprintf("query=%q", a.Query)
	if q.Type != "" {
		input += " type=" + string(q.Type)
	}
	if len(hits) > 0 {
		summary += fmt.Sprintf(" (coverage %.2f)", res.Coverage)
	}
	if !tb.scope.InScope {
		summary += "; the question is out of scope"
	}
	return &res, input, summary, nil
}

// coverage measures how much of a query the hits speak to: the share of
// its content words (stemmed, stop words dropped) found in the text of at
// least one hit, and the words found in none. terms gives the analysed
// text of an entity (Service.terms).
func coverage(query string, hits []assistant.SearchResult, terms func(assistant.Entity) map[string]bool) (float64, []string) {
	// A query has a few words: they are kept on the stack and deduplicated
	// by search rather than with a set.
	var wordsBuf, stemsBuf [16]string
	words, stems := wordsBuf[:0], stemsBuf[:0]
	for _, w := range textproc.Words(query) {
		if st := textproc.Stem(w); !textproc.IsStopWord(w) && !slices.Contains(stems, st) {
			words, stems = append(words, w), append(stems, st)
		}
	}
	if len(words) == 0 {
		return 0, nil
	}
	var missing []string
	for i, w := range words {
		found := false
		for _, h := range hits {
			if terms(h.Entity)[stems[i]] {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, w)
		}
	}
	return round3(float64(len(words)-len(missing)) / float64(len(words))), missing
}

// withApplications returns e with the catalog's application of it to the
// diagnosed constraint added to its key ideas, when the turn diagnosed
// one: the evidence a claim about the framework as applied is held
// against.
func (tb *toolbox) withApplications(e assistant.Entity) assistant.Entity {
	extra := tb.applied[e.Token()]
	if len(extra) == 0 {
		return e
	}
	// The hits and the cited entities are mostly the same entities, read
	// from one snapshot: their key ideas are one list, extended once.
	for _, done := range tb.extended {
		if done.entity.Slug == e.Slug && done.entity.Type == e.Type && sameList(done.own, e.KeyIdeas) {
			e.KeyIdeas = done.entity.KeyIdeas
			return e
		}
	}
	own := e.KeyIdeas
	e.KeyIdeas = slices.Concat(e.KeyIdeas, extra)
	tb.extended = append(tb.extended, extendedEntity{own, e})
	return e
}

// extendedEntity is an entity with its applications added to its key
// ideas (own).
type extendedEntity struct {
	own    []string
	entity assistant.Entity
}

// sameList reports whether a and b are the same list: the same elements
// in the same storage (so that they are equal without comparing them).
func sameList(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

func (tb *toolbox) entity(ctx context.Context, a EntityArgs) (any, string, string, error) {
	input := "token=" + a.Token
	t, err := assistant.ParseToken(strings.TrimSpace(a.Token))
	if err != nil {
		return encode(EntityResult{Token: a.Token}), input, "not a citation token", nil
	}
	find, err := tb.s.lookup(ctx, []assistant.Token{t})
	if err != nil {
		return "", "", "", err
	}
	e, ok := find(t)
	if !ok {
		return encode(EntityResult{Token: t.String()}), input, "not found", nil
	}
	tb.remember(e, 0) // reading an entity says nothing about its relevance
	summary := e.Title + " (" + strconv.Itoa(len(e.KeyIdeas)) + " key ideas)"
	if e.Token() != t { // asked for by an alias: the answer names the token asked for
		return encode(entityResult(t, e)), input, summary, nil
	}
	return tb.s.entityResults.of(e), input, summary, nil
}

// entityResult is get_entity's answer when token t finds e.
func entityResult(t assistant.Token, e assistant.Entity) EntityResult {
	res := EntityResult{Token: t.String(), Found: true, Title: e.Title, Authors: e.Authors, Year: e.Year, Summary: e.Summary,
		KeyIdeas: e.KeyIdeas, WhenToUse: e.WhenToUse, Pitfalls: e.Pitfalls, Archetypes: e.Archetypes,
		Presumes: knowledge.DefaultPremises().Of(e.Token())}
	for _, r := range e.Related {
		res.Related = append(res.Related, r.String())
	}
	return res
}

func (tb *toolbox) diagnose(ctx context.Context, a DiagnoseArgs) (any, string, string, error) {
	// The caller's vertical wins; then the model's, if it is a real one;
	// then a guess from the description, made only on clear evidence.
	vertical := tb.vertical
	if vertical == "" && assistant.IsVertical(strings.TrimSpace(a.Vertical)) {
		vertical = strings.TrimSpace(a.Vertical)
	}
	if vertical == "" {
		vertical = tb.s.Diagnoser.GuessVertical(a.Description)
	}
	input := fmt.Sprintf("description=%q", textproc.Cut(a.Description, 120))
	if vertical != "" {
		input += " vertical=" + vertical
	}
	g, err := tb.s.Diagnoser.Diagnose(ctx, textproc.Cut(a.Description, 4000), vertical)
	if err != nil {
		if assistant.ErrorCode(err) == assistant.EInvalid {
			return toolError(assistant.ErrorMessage(err)), input, "invalid arguments", nil
		}
		return "", "", "", err
	}
	res := DiagnoseResult{Vertical: vertical, Confidence: round3(g.Confidence), Band: g.Band(), Matches: []DiagnoseMatch{}, Applications: []DiagnoseApplying{}}
	tb.diagnosisBand = res.Band
	for _, m := range g.Top(3) {
		res.Matches = append(res.Matches, DiagnoseMatch{ArchetypeID: m.ArchetypeID, Name: m.Name,
			Description: tb.s.Diagnoser.ArchetypeDescription(m.ArchetypeID), Probability: round3(m.Probability), Evidence: m.Evidence})
	}
	if len(g.Matches) > 0 {
		plan, err := tb.s.Diagnoser.Plan(ctx, vertical, g.Matches[0].ArchetypeID)
		if err != nil {
			return "", "", "", err
		}
		// The applications are given their titles and card wording: a
		// copy, since the plan is shared.
		res.Metrics, res.Applications = plan.Metrics, slices.Clone(plan.Applications)
		find, err := tb.s.lookup(ctx, plan.Citations)
		if err != nil {
			return "", "", "", err
		}
		for i, app := range res.Applications {
			if t, err := assistant.ParseToken(app.Token); err == nil && slices.Contains(plan.Citations, t) {
				if e, ok := find(t); ok {
					res.Applications[i].Title = e.Title
				}
			}
		}
		if vertical != "" {
			if err := tb.addCardWording(ctx, res.Applications, g.Matches[0].ArchetypeID); err != nil {
				return "", "", "", err
			}
		}
		for _, t := range plan.Citations {
			if e, ok := find(t); ok {
				tb.remember(e, 0.9)
			}
		}
		// The catalog's application of each framework to the diagnosed
		// constraint is knowledge this turn retrieved: the verifier may
		// hold advice that follows it against it (see applied).
		for i, app := range res.Applications {
			t, err := assistant.ParseToken(app.Token)
			if err != nil {
				continue
			}
			if tb.applied == nil {
				tb.applied = map[assistant.Token][]string{}
			}
			passages := append(tb.applied[t], app.Application)
			passages = append(passages, app.FirstSteps...)
			passages = append(passages, app.Metrics...)
			if i == 0 {
				passages = append(passages, res.Metrics...)
			}
			tb.applied[t] = passages
		}
	}
	return &res, input, g.Summary(), nil
}

// lookup returns a function that finds entities of the knowledge by
// token, all from one read of it: the store's own (retrieval.Reader, and
// knowledge.WithAliases over one) when it has one, which builds no map of
// them; otherwise Entities(tokens), so that it finds only tokens listed.
func (s *Service) lookup(ctx context.Context, tokens []assistant.Token) (func(assistant.Token) (assistant.Entity, bool), error) {
	if l, ok := s.Knowledge.(interface {
		Lookup(context.Context) (func(assistant.Token) (assistant.Entity, bool), error)
	}); ok {
		find, err := l.Lookup(ctx)
		if err != nil || find != nil {
			return find, err
		}
	}
	found, err := s.Knowledge.Entities(ctx, tokens)
	if err != nil {
		return nil, err
	}
	return func(t assistant.Token) (assistant.Entity, bool) {
		e, ok := found[t]
		return e, ok
	}, nil
}

// Diagnoser is what the chat needs of the constraint diagnosis
// (internal/diagnose, through an adapter).
type Diagnoser interface {
	Diagnose(ctx context.Context, text, vertical string) (diagnose.Diagnosis, error)
	ArchetypeDescription(id string) string
	// Plan returns the framework applications of an archetype in a
	// vertical's terms (neutral words when vertical is ""), its metrics,
	// and every token they cite. The plan may be shared: its lists must
	// not be modified.
	Plan(ctx context.Context, vertical, archetypeID string) (Plan, error)
	// GuessVertical names the vertical a text is clearly about, or "".
	GuessVertical(text string) string
}

// Plan is the diagnosis content for one (vertical, archetype) pair.
type Plan struct {
	Metrics      []string
	Applications []DiagnoseApplying
	Citations    []assistant.Token
}

// firstSentences is the first n sentences of s, joined by a space (s
// itself when it has no more).
func firstSentences(s string, n int) string {
	parts := textproc.SharedSentences(s)
	switch {
	case len(parts) <= n:
		return s
	case n == 1:
		return parts[0]
	case n == 2:
		// A search hit's summary: an entity's, so the memo is bounded by
		// the knowledge base.
		return leadingPairs.Get(s, func(string) string { return parts[0] + " " + parts[1] })
	}
	return strings.Join(parts[:n], " ")
}

// leadingPairs remembers the first two sentences of the summaries search
// hits show.
var leadingPairs = memo.Bounded[string, string]{Max: maxRememberedEntities}

func round3(f float64) float64 { return float64(int64(f*1000+0.5)) / 1000 }

// addCardWording gives each application the neutral wording its
// framework's card shows, where the vertical's wording differs.
func (tb *toolbox) addCardWording(ctx context.Context, apps []DiagnoseApplying, archetypeID string) error {
	neutral, err := tb.s.Diagnoser.Plan(ctx, "", archetypeID)
	if err != nil {
		return err
	}
	for i, app := range apps {
		for _, n := range neutral.Applications {
			if n.Token == app.Token && (n.Application != app.Application || !slices.Equal(n.FirstSteps, app.FirstSteps)) {
				apps[i].CardApplication, apps[i].CardFirstSteps = n.Application, n.FirstSteps
			}
		}
	}
	return nil
}
