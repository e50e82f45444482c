// Package builtin is the offline model provider, the default. It speaks
// the same protocol as a hosted model: it reads the persona's system
// prompt, the conversation and the tool results, plans its tool calls from
// the question and the persona, and composes the answer from what the
// tools returned, in the persona's sections, with citation tokens. It is
// deterministic: the same conversation always gets the same answer.
//
// Planning, by round:
//  1. operator: diagnose_constraint on the situation, and search_knowledge;
//     other personas: search_knowledge with the persona's angle;
//  2. get_entity on the two or three most useful entities found;
//  3. the answer.
package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/constraintlab/assistant/internal/chat"
	"github.com/constraintlab/assistant/internal/llm"
	"github.com/constraintlab/assistant/internal/textproc"
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
	question  string   // the last user message
	earlier   []string // earlier user messages, oldest first
	searches  []chat.SearchResult
	entities  []chat.EntityResult
	diagnosis *chat.DiagnoseResult
	calls     int // tool calls already made this turn
	canCall   map[string]bool
}

func read(req llm.Request) turn {
	t := turn{mode: "operator", canCall: map[string]bool{}}
	for _, tool := range req.Tools {
		t.canCall[tool.Name] = true
	}
	lastUser := -1
	for i, m := range req.Messages {
		switch m.Role {
		case llm.RoleSystem:
			if first, _, _ := strings.Cut(m.Content, "\n"); strings.HasPrefix(first, "mode: ") {
				t.mode = strings.TrimSpace(strings.TrimPrefix(first, "mode: "))
			}
		case llm.RoleUser:
			lastUser = i
		}
	}
	for i, m := range req.Messages {
		switch {
		case m.Role == llm.RoleUser && i < lastUser:
			t.earlier = append(t.earlier, m.Content)
		case m.Role == llm.RoleUser && i == lastUser:
			t.question = m.Content
		case m.Role == llm.RoleAssistant && i > lastUser:
			t.calls += len(m.ToolCalls)
		case m.Role == llm.RoleTool && i > lastUser:
			switch m.Name {
			case chat.ToolSearch:
				var r chat.SearchResult
				if json.Unmarshal([]byte(m.Content), &r) == nil {
					t.searches = append(t.searches, r)
				}
			case chat.ToolEntity:
				var r chat.EntityResult
				if json.Unmarshal([]byte(m.Content), &r) == nil && r.Found {
					t.entities = append(t.entities, r)
				}
			case chat.ToolDiagnose:
				var r chat.DiagnoseResult
				if json.Unmarshal([]byte(m.Content), &r) == nil && len(r.Matches) > 0 {
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
// measure?").
func (t turn) situation() string {
	q := strings.TrimSpace(t.question)
	if len(textproc.Terms(q)) < 8 && len(t.earlier) > 0 {
		return strings.TrimSpace(t.earlier[len(t.earlier)-1] + " " + q)
	}
	return q
}

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

// searchServes reports whether any framework the search found serves the
// archetype.
func (t turn) searchServes(archetype string) bool {
	for _, s := range t.searches {
		for _, h := range s.Hits {
			if strings.HasPrefix(h.Token, "framework:") && slices.Contains(h.Archetypes, archetype) {
				return true
			}
		}
	}
	return false
}

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
	if !t.canCall[chat.ToolSearch] {
		return nil // out of tool budget: answer with what there is
	}
	if len(t.searches) == 0 && t.diagnosis == nil {
		search := call(chat.ToolSearch, chat.SearchArgs{Query: t.situation() + personaAngle[t.mode], Limit: 6})
		calls := []llm.ToolCall{search}
		if t.mode == "customer" {
			// A talk track also needs the methods of the conversation itself.
			calls = append(calls, call(chat.ToolSearch, chat.SearchArgs{Query: conversationMethods, Limit: 4}))
		}
		if !t.canCall[chat.ToolDiagnose] {
			return calls
		}
		diagnosis := call(chat.ToolDiagnose, chat.DiagnoseArgs{Description: t.situation()})
		if diagnoseFirst[t.mode] {
			return append([]llm.ToolCall{diagnosis}, calls...)
		}
		return append(calls, diagnosis)
	}
	// An unsure diagnosis whose likeliest constraint the search did not
	// cover: look that constraint up before reading.
	if len(t.entities) == 0 && t.diagnosis != nil && !t.confident() && len(t.searches) < 3 && !t.searchServes(t.diagnosis.Matches[0].ArchetypeID) {
		top := t.diagnosis.Matches[0]
		return []llm.ToolCall{call(chat.ToolSearch, chat.SearchArgs{Query: top.Name + ": " + top.Description, Limit: 6})}
	}
	if len(t.entities) == 0 {
		var calls []llm.ToolCall
		for _, tok := range t.toRead() {
			calls = append(calls, call(chat.ToolEntity, chat.EntityArgs{Token: tok}))
		}
		return calls
	}
	return nil
}

// toRead picks the entities to read in full: up to three frameworks and
// one paper or essay to support them. A confident diagnosis leads with its
// two best frameworks (after the search's best for the customer persona,
// whose question is about a conversation, not the seller's own constraint);
// otherwise search hits that serve the likeliest archetypes come first.
func (t turn) toRead() []string {
	var frameworks, support []string
	addTo := func(list *[]string, tok string, limit int) {
		if len(*list) < limit && !slices.Contains(*list, tok) {
			*list = append(*list, tok)
		}
	}
	hits := t.rankedHits()
	fromDiagnosis := func() {
		if !t.confident() {
			return
		}
		for _, a := range t.diagnosis.Applications[:min(2, len(t.diagnosis.Applications))] {
			addTo(&frameworks, a.Token, 3)
			for _, s := range a.Supporting {
				addTo(&support, s, 1)
			}
		}
	}
	if t.mode == "customer" {
		// The methods of the conversation lead a talk track.
		for _, s := range t.searches {
			if s.Query != conversationMethods {
				continue
			}
			for _, h := range s.Hits {
				if strings.HasPrefix(h.Token, "framework:") {
					addTo(&frameworks, h.Token, 2)
				}
			}
		}
	}
	fromDiagnosis()
	for _, h := range hits {
		if strings.HasPrefix(h.Token, "framework:") {
			addTo(&frameworks, h.Token, 3)
		} else {
			addTo(&support, h.Token, 1)
		}
	}
	return append(frameworks, support...)
}

// rankedHits orders the search hits: those serving one of the diagnosis's
// two likeliest archetypes first (a stable sort keeps the search order
// otherwise).
func (t turn) rankedHits() []chat.SearchHit {
	var hits []chat.SearchHit
	for _, s := range t.searches {
		hits = append(hits, s.Hits...)
	}
	if t.diagnosis == nil {
		return hits
	}
	likely := map[string]bool{}
	for _, m := range t.diagnosis.Matches[:min(2, len(t.diagnosis.Matches))] {
		likely[m.ArchetypeID] = true
	}
	serves := func(h chat.SearchHit) bool {
		for _, a := range h.Archetypes {
			if likely[a] {
				return true
			}
		}
		return false
	}
	sort.SliceStable(hits, func(i, j int) bool { return serves(hits[i]) && !serves(hits[j]) })
	return hits
}

// confident reports whether the diagnosis is sure enough (medium or high
// band; high for the customer persona) to let its frameworks and steps lead
// the answer; a less sure guess only informs it.
func (t turn) confident() bool {
	if t.diagnosis == nil || len(t.diagnosis.Applications) == 0 {
		return false
	}
	if t.mode == "customer" {
		// A seller's question describes a conversation, not a business;
		// only a sure diagnosis of the buyer's problem may shape it.
		return t.diagnosis.Band == "high"
	}
	return t.diagnosis.Band != "low"
}
