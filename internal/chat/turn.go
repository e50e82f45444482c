// Package chat runs one turn of the assistant: the persona's system
// prompt, a bounded tool loop over the knowledge base (search_knowledge,
// get_entity, diagnose_constraint) with every call traced, citation tokens
// checked against the knowledge base (invented ones removed, D6), the
// confidence verdict (internal/verify), and the turn's citation events,
// which Run returns for the caller to record with its usage row (D5). It
// knows nothing of HTTP, keys or usage rows.
package chat

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/llm"
	"github.com/constraintlab/assistant/internal/tooling"
	"github.com/constraintlab/assistant/internal/verify"
)

// Service answers chat turns. Every field is required except Diagnoser
// (without it the operator persona does without diagnose_constraint).
// Checker judges the answer's claims: the builtin *verify.Checker, or a
// *verify.ModelJudge when a remote model is configured.
type Service struct {
	Provider  llm.Provider
	Knowledge assistant.KnowledgeStore
	Retriever assistant.Retriever
	Diagnoser Diagnoser
	Checker   verify.Verifier
	Personas  map[string]Persona
	Now       func() time.Time
	// MaxHops bounds the tool calls of one turn (default 6).
	MaxHops int
	// NewID returns a fresh response id (for citation events).
	NewID func() string

	// terms remembers the analysed text of the entities searches return.
	terms termMemo
	// specific knows how specific each word is to the knowledge base.
	specific specificity
	// prompts remembers the system prompt of each (mode, vertical): a
	// persona's prompt depends on nothing else, and Personas does not
	// change once the service answers.
	prompts sync.Map // promptKey -> string
	// entityResults remembers get_entity's answer for each entity.
	entityResults entityResultMemo
}

type promptKey struct{ mode, vertical string }

// systemPrompt is persona.SystemPrompt(vertical), composed once per mode
// and vertical (a vertical is one of the catalog's or "", so the keys are
// few).
func (s *Service) systemPrompt(mode string, persona Persona, vertical string) string {
	key := promptKey{mode, vertical}
	if p, ok := s.prompts.Load(key); ok {
		return p.(string)
	}
	p := persona.SystemPrompt(vertical)
	s.prompts.Store(key, p)
	return p
}

// Request is one turn as the API received it, validated.
type Request struct {
	Message string
	History []HistoryItem
	Mode    string
	// Vertical is the caller's industry, a catalog vertical id, or "" to
	// let the diagnosis infer it on clear evidence (D28).
	Vertical string
	// Source and Workspace label the turn's citation events.
	Source    string
	Workspace string
}

// HistoryItem is an earlier turn of the conversation.
type HistoryItem struct {
	Role    string `json:"role" enum:"user,assistant" doc:"user or assistant."`
	Content string `json:"content" maxLength:"8000" doc:"Text of the turn, at most 8000 characters."`
}

// TraceItem is one reasoning hop: a tool call that happened (D8).
type TraceItem struct {
	Hop           int    `json:"hop" doc:"Position of the call, from 0."`
	Tool          string `json:"tool" doc:"Name of the tool called."`
	InputSummary  string `json:"input_summary"`
	ResultSummary string `json:"result_summary"`
}

// RagHit is one knowledge item the answer used (D20).
type RagHit struct {
	Title   string  `json:"title"`
	Source  string  `json:"source" doc:"The entity's citation token, type:slug; resolves through /resolve."`
	URL     *string `json:"url" nullable:"true"`
	Score   float64 `json:"score" doc:"Retrieval relevance, 0 to 1."`
	Snippet string  `json:"snippet"`
}

// Response is the answer of a turn: exactly the chat response object of
// interface.md.
type Response struct {
	Response       string            `json:"response" doc:"The answer, Markdown, with citation tokens such as [framework:theory-of-constraints]."`
	ReasoningTrace []TraceItem       `json:"reasoning_trace"`
	RagHits        []RagHit          `json:"rag_hits"`
	Confidence     verify.Confidence `json:"confidence"`
}

// Events receives a turn's progress for streaming (D9). Either method may
// be nil-safe no-ops; Run calls them in order: Hop for each tool call as
// it completes, then Delta with the checked answer text.
type Events interface {
	Hop(TraceItem)
	Delta(text string)
}

// ErrUpstream wraps a provider failure the API answers with 502 (D3).
var ErrUpstream = errors.New("the model provider is unavailable")

// Run answers one turn. With the answer it returns the turn's citation
// events: one per cited entity, under a fresh response id. Run records
// nothing; the caller stores the events with the turn's usage row, in one
// transaction, and only for a turn it answers successfully (D5). On failure
// there are no events.
func (s *Service) Run(ctx context.Context, req Request, events Events) (Response, []assistant.CitationEvent, error) {
	persona, ok := s.Personas[req.Mode]
	if !ok {
		return Response{}, nil, assistant.Errorf(assistant.EInvalid, "unknown mode %q; use one of %s", req.Mode, strings.Join(Modes, ", "))
	}
	if req.Vertical != "" {
		if err := assistant.CheckVertical(req.Vertical); err != nil {
			return Response{}, nil, err
		}
	}
	words := Words{}
	if w, ok := s.Diagnoser.(interface{ IndustryTerm(string) bool }); ok {
		words.Industry = w.IndustryTerm
	}
	if w, ok := s.Diagnoser.(interface{ BusinessKind(string) bool }); ok {
		words.Kind = w.BusinessKind
	}
	specific, err := s.specific.of(ctx, s)
	if err != nil {
		return Response{}, nil, err
	}
	words.Specificity = specific
	reading := Read(req.Message, req.History, persona, words)
	unknown, err := s.unknownTokens(ctx, req.Message)
	if err != nil {
		return Response{}, nil, err
	}
	reading.Unknown = unknown
	tb := toolboxes.Get().(*toolbox)
	defer tb.release()
	*tb = toolbox{s: s, retrieved: tb.retrieved[:0], hits: tb.hits[:0], extended: tb.extended[:0], vertical: req.Vertical,
		scope: reading.Scope, question: req.Message, industry: reading.KindStems(tb.industry[:0]),
		personaDiagnosisLeads: persona.DiagnosisLeads(), specific: specific}
	maxHops := s.MaxHops
	if maxHops <= 0 {
		maxHops = 6
	}
	// Room for the system prompt, the history, the question, and a call
	// and its result per hop as the builtin model makes them.
	messages := make([]llm.Message, 0, len(req.History)+2+2*maxHops)
	messages = append(messages, llm.Message{Role: llm.RoleSystem, Content: s.systemPrompt(req.Mode, persona, req.Vertical)})
	for _, h := range req.History {
		messages = append(messages, llm.Message{Role: h.Role, Content: h.Content})
	}
	messages = append(messages, llm.Message{Role: llm.RoleUser, Content: req.Message})

	values := llm.ReadsResults(s.Provider) // the builtin model reads tool results as values
	tools := toolSpecs(s.Diagnoser != nil && slices.Contains(persona.Tools, ToolDiagnose))
	trace := make([]TraceItem, 0, maxHops)
	var answer string
	for round := 0; ; round++ {
		offered := tools
		if len(trace) >= maxHops {
			offered = nil // out of hops: the model must answer now
		}
		resp, err := s.Provider.Complete(ctx, llm.Request{Messages: messages, Tools: offered, MaxTokens: 1500,
			Mode: persona.Mode, Vertical: req.Vertical, Reading: &reading})
		if err != nil {
			return Response{}, nil, providerError(err)
		}
		if len(resp.ToolCalls) == 0 || offered == nil {
			answer = resp.Content
			break
		}
		messages = append(messages, llm.Message{Role: llm.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls})
		for _, call := range resp.ToolCalls {
			if len(trace) >= maxHops {
				messages = append(messages, llm.Message{Role: llm.RoleTool, ToolCallID: call.ID, Name: call.Name,
					Content: toolError("the tool budget of this turn is spent; answer with what you have")})
				continue
			}
			result, input, summary, err := tb.runTool(ctx, call, len(trace))
			if err != nil {
				return Response{}, nil, fmt.Errorf("running %s: %w", call.Name, err)
			}
			item := TraceItem{Hop: len(trace), Tool: call.Name, InputSummary: input, ResultSummary: summary}
			trace = append(trace, item)
			if events != nil {
				events.Hop(item)
			}
			messages = append(messages, toolMessage(call, result, values))
		}
		if round > 2*maxHops {
			return Response{}, nil, fmt.Errorf("the model kept calling tools past the budget")
		}
	}
	if strings.TrimSpace(answer) == "" {
		return Response{}, nil, fmt.Errorf("%w: the model returned an empty answer", ErrUpstream)
	}

	reading.Scope = tb.scope // the workspace's own knowledge may have brought it into scope
	out, cited, err := s.finish(ctx, answer, tb, reading)
	if err != nil {
		return Response{}, nil, err
	}
	out.ReasoningTrace = trace
	if events != nil {
		for _, chunk := range chunks(out.Response) {
			events.Delta(chunk)
		}
	}

	// One citation event per cited entity, under one response id.
	now := s.Now()
	id := s.NewID()
	var citations []assistant.CitationEvent
	if len(cited) > 0 {
		citations = make([]assistant.CitationEvent, 0, len(cited))
	}
	for _, t := range cited {
		citations = append(citations, assistant.CitationEvent{ResponseID: id, Workspace: req.Workspace, Source: req.Source, Token: t, At: now})
	}
	return out, citations, nil
}

var citationToken = regexp.MustCompile(`\[([a-z]+):([a-z0-9_-]+)\]`)

// writtenToken finds what a user may write as a citation token: type:slug,
// with or without brackets.
var writtenToken = regexp.MustCompile(`\b(framework|paper|blog):([a-z0-9_-]+)`)

// unknownTokens lists the citation tokens the message names that the
// knowledge base does not hold, each once: the answer says so rather than
// confirm what they say.
func (s *Service) unknownTokens(ctx context.Context, message string) ([]string, error) {
	var tokens []assistant.Token
	for _, m := range writtenToken.FindAllStringSubmatch(message, 20) {
		t := assistant.Token{Type: assistant.EntityType(m[1]), Slug: m[2]}
		if t.Valid() && !slices.Contains(tokens, t) {
			tokens = append(tokens, t)
		}
	}
	if len(tokens) == 0 {
		return nil, nil
	}
	found, err := s.Knowledge.Entities(ctx, tokens)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range tokens {
		if _, ok := found[t]; !ok {
			out = append(out, t.String())
		}
	}
	return out, nil
}

// unconfirmedSource reports whether the message asked to confirm a named
// source that none of the cited entities holds (tooling.UnconfirmedNames).
func unconfirmedSource(r Reading, cited []assistant.Token, found map[assistant.Token]assistant.Entity) bool {
	names := r.SourceNames()
	if len(names) == 0 {
		return false
	}
	texts := make([]string, 0, len(cited))
	for _, t := range cited {
		e := found[t]
		texts = append(texts, tooling.SourceText(e.Title, e.Authors, e.Summary))
	}
	return len(tooling.UnconfirmedNames(names, texts)) > 0
}

// finish checks the answer's citation tokens, removes invented ones (D6),
// verifies its claims and lists the knowledge it used.
func (s *Service) finish(ctx context.Context, answer string, tb *toolbox, reading Reading) (Response, []assistant.Token, error) {
	var tokens []assistant.Token
	times := map[assistant.Token]int{} // how often the answer cites each token
	written := citationToken.FindAllStringSubmatch(answer, -1)
	for _, m := range written {
		t := assistant.Token{Type: assistant.EntityType(m[1]), Slug: m[2]}
		if !t.Valid() {
			continue
		}
		if times[t] == 0 {
			tokens = append(tokens, t)
		}
		times[t]++
	}
	found, err := s.Knowledge.Entities(ctx, tokens)
	if err != nil {
		return Response{}, nil, err
	}
	var cited []assistant.Token
	for _, t := range tokens {
		if _, ok := found[t]; ok {
			cited = append(cited, t)
		}
	}
	// The evidence: what the tools returned this turn (none when the
	// question is out of scope, D29: the knowledge found does not bear on
	// it), with the catalog's application of each diagnosed framework.
	var hits []assistant.Entity
	if tb.scope.InScope {
		for _, r := range tb.retrieved {
			tb.hits = append(tb.hits, tb.withApplications(r.entity))
		}
		hits = tb.hits
	}
	evidence := found // the usual case: the turn applied no framework
	if len(tb.applied) > 0 {
		evidence = make(map[assistant.Token]assistant.Entity, len(found))
		for t, e := range found {
			evidence[t] = tb.withApplications(e)
		}
	}
	// The verifier sees the original text, so a claim carrying an
	// invented token is judged unsupported; the client never sees the
	// token.
	conf := s.verifyAnswer(ctx, answer, evidence, hits)
	// A question answered from the workspace's own articles (a how-to about
	// its product) is not one the catalog of constraints would place; nor
	// is the answer of a persona whose diagnosis only informs (a sales
	// conversation, a fault, one account): how surely the business's
	// constraint was placed says nothing of how well such an answer fits.
	placement := tb.diagnosisBand
	if tb.scope.Workspace || !tb.personaDiagnosisLeads {
		placement = ""
	}
	f := fit{Situation: situationFit(reading, tb.specific, cited, times, found), Search: -1}
	if tb.scope.InScope && conf.TotalClaims > 0 {
		if f.Search, err = s.searchAgreement(ctx, tb.question, tb.industry, cited, times); err != nil {
			return Response{}, nil, err
		}
	}
	conf = withRelevance(conf, reading, placement, f, unconfirmedSource(reading, cited, found), llm.QuotesOnly(s.Provider))
	known := func(m []string) bool {
		_, ok := found[assistant.Token{Type: assistant.EntityType(m[1]), Slug: m[2]}]
		return ok
	}
	clean := answer // the usual case: every token resolves
	if slices.ContainsFunc(written, func(m []string) bool { return !known(m) }) {
		clean = citationToken.ReplaceAllStringFunc(answer, func(tok string) string {
			if known(citationToken.FindStringSubmatch(tok)) {
				return tok
			}
			return ""
		})
	}
	clean = tidy(clean)

	// rag_hits are the knowledge the answer used: the entities it cites.
	// An answer that cites nothing (a declined question) used none.
	out := Response{Response: clean, Confidence: conf, RagHits: []RagHit{}}
	for _, t := range cited {
		e, ok := found[t]
		score := 0.0
		if r := tb.found(t); r != nil {
			score, e, ok = r.score, r.entity, true
		}
		if !ok {
			continue
		}
		hit := RagHit{Title: e.Title, Source: t.String(), Score: round3(score), Snippet: firstSentences(e.Summary, 1)}
		if e.URL != "" {
			u := e.URL
			hit.URL = &u
		}
		out.RagHits = append(out.RagHits, hit)
	}
	return out, cited, nil
}

// tidy repairs the spacing left where an invented token was removed: no
// space before . , ; : ! ? or ), no run of spaces and tabs, nothing blank at
// the end of a line or around the text.
func tidy(s string) string {
	s = collapseBlanks(dropSpaceBeforePunct(s))
	if !blankAtLineEnd(s) { // the usual case: nothing to trim but the ends
		return strings.TrimSpace(s)
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// blankAtLineEnd reports whether a line of s other than the last ends
// with a space or a tab.
func blankAtLineEnd(s string) bool {
	for i := 1; i < len(s); i++ {
		if s[i] == '\n' && (s[i-1] == ' ' || s[i-1] == '\t') {
			return true
		}
	}
	return false
}

// dropSpaceBeforePunct removes every run of spaces that comes right before
// one of . , ; : ! ? ). It returns s itself when there is none.
func dropSpaceBeforePunct(s string) string {
	var b strings.Builder
	written := 0 // s[:written] is in b, or dropped
	for i := 0; i < len(s); {
		if s[i] != ' ' {
			i++
			continue
		}
		end := i + 1
		for end < len(s) && s[end] == ' ' {
			end++
		}
		if end < len(s) && strings.IndexByte(".,;:!?)", s[end]) >= 0 {
			b.WriteString(s[written:i])
			written = end
		}
		i = end
	}
	if written == 0 {
		return s
	}
	b.WriteString(s[written:])
	return b.String()
}

// collapseBlanks replaces every run of two or more spaces and tabs with one
// space. It returns s itself when there is none.
func collapseBlanks(s string) string {
	var b strings.Builder
	written := 0 // s[:written] is in b, or replaced
	for i := 0; i < len(s); {
		if s[i] != ' ' && s[i] != '\t' {
			i++
			continue
		}
		end := i + 1
		for end < len(s) && (s[end] == ' ' || s[end] == '\t') {
			end++
		}
		if end-i >= 2 {
			b.WriteString(s[written:i])
			b.WriteByte(' ')
			written = end
		}
		i = end
	}
	if written == 0 {
		return s
	}
	b.WriteString(s[written:])
	return b.String()
}

// chunks splits the checked answer into streaming deltas at word
// boundaries, never inside a citation token.
func chunks(s string) []string {
	var out []string
	var b strings.Builder
	inToken := false
	for _, r := range s {
		b.WriteRune(r)
		switch r {
		case '[':
			inToken = true
		case ']':
			inToken = false
		}
		if !inToken && (r == ' ' || r == '\n') && b.Len() >= 24 {
			out = append(out, b.String())
			b.Reset()
		}
	}
	if b.Len() > 0 {
		out = append(out, b.String())
	}
	return out
}

// providerError maps a provider failure: unavailability is a 502 (D3); a
// misconfiguration is the operator's to fix and says so.
func providerError(err error) error {
	switch {
	case errors.Is(err, llm.ErrUnavailable):
		return fmt.Errorf("%w: %w", ErrUpstream, err)
	case errors.Is(err, llm.ErrMisconfigured):
		return &assistant.Error{Code: assistant.EInternal, Message: "The model provider is misconfigured: " + err.Error(), Err: err}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return fmt.Errorf("the model provider failed: %w", err)
}
