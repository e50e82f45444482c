// Package builtin is the offline model provider, the default. It speaks
// the same protocol as a hosted model: it reads the persona's mode and the
// caller's vertical from the request (llm.Request.Mode and .Vertical), the
// conversation and the tool results (their shapes are the contract in
// internal/tooling), plans its tool calls from the question and the
// persona, and composes the answer from what the tools returned, in the
// persona's sections, with citation tokens. It is deterministic: the same conversation always gets the same answer.
//
// Planning, by round:
//  1. search_knowledge on the situation (with the persona's angle) and
//     diagnose_constraint, in the persona's order;
//  2. when the search says the question is out of scope (D29), nothing
//     more: the answer declines. Otherwise, for the customer persona, a
//     second search for the methods of a sales conversation; then
//     get_entity on the entities that best match the question (an
//     imported entity that is the top hit leads; a confident diagnosis
//     adds its frameworks);
//  3. the answer: what the question asked, in its own terms, from the
//     sentences of the entities read that best match it, shaped by the
//     persona's way of thinking about the situation (situation.go), and
//     aware of the conversation so far (what was tried, what was already
//     said).
package builtin

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/constraintlab/assistant/internal/llm"
	"github.com/constraintlab/assistant/internal/textproc"
	"github.com/constraintlab/assistant/internal/tooling"
)

// Provider is the builtin model.
type Provider struct{}

// New returns the builtin provider.
func New() *Provider { return &Provider{} }

// Name implements llm.Provider.
func (*Provider) Name() string { return "builtin" }

// turn is what the builtin model reads of a conversation.
type turn struct {
	mode      string
	vertical  string   // the caller's vertical, "" when not given
	question  string   // the last user message
	earlier   []string // earlier user messages, oldest first
	previous  []string // earlier assistant answers, oldest first
	searches  []searchResult
	entities  []entityResult
	diagnosis *diagnoseResult
	calls     int // tool calls already made this turn
	canCall   map[string]bool
}

func read(req llm.Request) turn {
	t := turn{mode: "operator", vertical: strings.TrimSpace(req.Vertical), canCall: map[string]bool{}}
	if m := strings.TrimSpace(req.Mode); m != "" {
		t.mode = m
	}
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
		case m.Role == llm.RoleUser && i < lastUser:
			t.earlier = append(t.earlier, m.Content)
		case m.Role == llm.RoleAssistant && i < lastUser:
			t.previous = append(t.previous, m.Content)
		case m.Role == llm.RoleUser && i == lastUser:
			t.question = m.Content
		case m.Role == llm.RoleAssistant && i > lastUser:
			t.calls += len(m.ToolCalls)
		case m.Role == llm.RoleTool && i > lastUser:
			switch m.Name {
			case tooling.ToolSearch:
				if r, ok := decode(searchResults, m.Content); ok {
					t.searches = append(t.searches, r)
				}
			case tooling.ToolEntity:
				if r, ok := decode(entityResults, m.Content); ok && r.Found {
					t.entities = append(t.entities, r)
				}
			case tooling.ToolDiagnose:
				if r, ok := decode(diagnoseResults, m.Content); ok && len(r.Matches) > 0 {
					t.diagnosis = &r
				}
			}
		}
	}
	return t
}

// Complete implements llm.Provider.
func (p *Provider) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return llm.Response{}, err
	}
	t := read(req)
	if calls := t.plan(); len(calls) > 0 {
		return llm.Response{ToolCalls: calls}, nil
	}
	return llm.Response{Content: t.compose()}, nil
}

// situation is the text the tools should work on: the question, with the
// earlier user turns when the question leans on them ("and what should I
// measure?", "we tried that, now what?"). A question in another language
// is searched by the business words understood in it.
func (t turn) situation() string {
	q := searchable(t.question)
	if q.short && len(t.earlier) > 0 {
		return strings.TrimSpace(t.earlier[len(t.earlier)-1] + " " + q.text)
	}
	return q.text
}

// searchableQuestion is the question as the tools should read it.
type searchableQuestion struct {
	text  string // in English words, without what was tried
	short bool   // fewer than 8 content words: it may lean on earlier turns
}

// searchable reads the question for situation, remembered because every
// round of a turn and the answer read it again (a language guess, a
// regexp and stemming).
func searchable(question string) searchableQuestion {
	return searchables.Get(question, func(question string) searchableQuestion {
		q := strings.TrimSpace(question)
		if !textproc.IsEnglish(q) {
			if words := textproc.TranslateBusinessWords(q); len(words) > 0 {
				q = strings.Join(words, " ")
			}
		}
		// What was tried is not the problem: leave it out of the search.
		if m := triedPattern.FindStringSubmatchIndex(q); m != nil {
			q = strings.TrimSpace(q[:m[0]] + " " + q[m[1]:])
		}
		return searchableQuestion{text: q, short: len(textproc.Terms(q)) < 8}
	})
}

var searchables = texts[searchableQuestion](1024, 4096)

// personaAngle is added to the search so that the knowledge found suits
// the persona: a seller's talk track leans on how buyers decide, a success
// plan on how customers adopt and stay.
var personaAngle = map[string]string{
	"customer": " sales conversation with buyers",
	"success":  " customers",
}

// conversationMethods is the customer persona's second search: the
// methods of a sales conversation, whatever the product.
const conversationMethods = "discovery questions to ask a buyer, framing value and handling objections in a sales conversation"

// diagnoseFirst says whether the persona diagnoses the constraint before
// searching (operator, success) or after (customer, support), as its tool
// order in personas.yaml says.
var diagnoseFirst = map[string]bool{"operator": true, "success": true}

func (t turn) plan() []llm.ToolCall {
	call := func(name string, args any) llm.ToolCall {
		b, _ := json.Marshal(args)
		t.calls++
		return llm.ToolCall{ID: fmt.Sprintf("call_%d", t.calls), Name: name, Arguments: b}
	}
	if !t.canCall[tooling.ToolSearch] {
		return nil // out of tool budget: answer with what there is
	}
	if len(t.searches) == 0 {
		// The persona's reading of the situation (the buyer's stage, the
		// account's state, the kind of problem) sharpens the search.
		query := t.situation() + personaAngle[t.mode]
		if st := t.stage(); st.terms != "" {
			query += " " + st.terms
		}
		calls := []llm.ToolCall{call(tooling.ToolSearch, tooling.SearchArgs{Query: query, Limit: 6})}
		if !t.canCall[tooling.ToolDiagnose] || t.diagnosis != nil {
			return calls
		}
		diagnosis := call(tooling.ToolDiagnose, tooling.DiagnoseArgs{Description: t.situation(), Vertical: t.vertical})
		if diagnoseFirst[t.mode] {
			return append([]llm.ToolCall{diagnosis}, calls...)
		}
		return append(calls, diagnosis)
	}
	if !t.inScope() || t.productQuestionWithoutDocs() {
		return nil // decline: nothing more to look up
	}
	if len(t.entities) > 0 {
		return nil
	}
	if t.mode == "customer" && !t.searched(conversationMethods) {
		// A talk track also needs the methods of the conversation itself;
		// they are read with the rest once found.
		return []llm.ToolCall{call(tooling.ToolSearch, tooling.SearchArgs{Query: conversationMethods, Limit: 4})}
	}
	var calls []llm.ToolCall
	for _, tok := range t.toRead() {
		calls = append(calls, call(tooling.ToolEntity, tooling.EntityArgs{Token: tok}))
	}
	return calls
}

func (t turn) searched(query string) bool {
	return slices.ContainsFunc(t.searches, func(s searchResult) bool { return s.Query == query })
}

// scope is the service's scope reading of the question, from the first
// search.
func (t turn) scope() tooling.Scope {
	if len(t.searches) == 0 {
		return tooling.Scope{InScope: true, Language: "en"}
	}
	return t.searches[0].Scope
}

func (t turn) inScope() bool { return t.scope().InScope }

// toRead picks the entities to read in full: up to three frameworks and
// one paper or essay, best match to the question first. The search's own
// order decides, except that the workspace's own knowledge that tops the
// search leads, and a confident diagnosis's frameworks come right after
// the search's best. Entities the conversation already cited go last, so
// a follow-up brings something new.
func (t turn) toRead() []string {
	var hits []searchHit
	for _, s := range t.searches {
		if s.Query == conversationMethods && t.mode != "customer" {
			continue
		}
		hits = append(hits, s.Hits...)
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
			if len(support) < 1 {
				support = append(support, tok)
			}
		}
	}
	if len(hits) > 0 && hits[0].Imported {
		imported = append(imported, hits[0].Token)
	}
	// Rank by the search's relevance, nudged towards what serves the
	// diagnosis's two likeliest constraints: a nudge, not a lead, so a
	// strong hit is never pushed aside by an unsure diagnosis.
	likely := map[string]bool{}
	if t.diagnosis != nil {
		for _, m := range t.diagnosis.Matches[:min(2, len(t.diagnosis.Matches))] {
			likely[m.ArchetypeID] = true
		}
	}
	rank := func(h searchHit) float64 {
		if slices.ContainsFunc(h.Archetypes, func(a string) bool { return likely[a] }) {
			return h.Score + 0.25
		}
		return h.Score
	}
	slices.SortStableFunc(hits, func(a, b searchHit) int { return cmp.Compare(rank(b), rank(a)) })
	// The customer persona leads with the methods of the conversation.
	if t.mode == "customer" {
		for _, s := range t.searches {
			if s.Query == conversationMethods && len(s.Hits) > 0 {
				add(s.Hits[0].Token)
			}
		}
	}
	if len(hits) > 0 {
		add(hits[0].Token)
	}
	if t.confident() {
		for _, a := range t.diagnosis.Applications[:min(2, len(t.diagnosis.Applications))] {
			add(a.Token)
			for _, s := range a.Supporting {
				add(s)
			}
		}
	}
	for _, h := range hits {
		if h.Score >= 0.4 {
			add(h.Token)
		}
	}
	out := append(imported, frameworks...)
	return append(out, support...)
}

// confident reports whether the diagnosis is sure enough (medium or high
// band; high for the customer persona, whose question describes a
// conversation rather than the seller's own business) to let its
// frameworks and steps lead the answer; a less sure guess only informs it.
func (t turn) confident() bool {
	if t.diagnosis == nil || len(t.diagnosis.Applications) == 0 {
		return false
	}
	if t.mode == "customer" {
		return t.diagnosis.Band == "high"
	}
	return t.diagnosis.Band != "low"
}
