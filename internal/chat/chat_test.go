package chat_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/chat"
	"github.com/constraintlab/assistant/internal/knowledge"
	"github.com/constraintlab/assistant/internal/llm"
	"github.com/constraintlab/assistant/internal/llm/builtin"
	"github.com/constraintlab/assistant/internal/retrieval"
	"github.com/constraintlab/assistant/internal/sqlite"
	"github.com/constraintlab/assistant/internal/verify"
)

// recorder remembers the citation events the turns returned.
type recorder struct {
	mu        sync.Mutex
	citations [][]assistant.CitationEvent
}

func (r *recorder) add(c []assistant.CitationEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.citations = append(r.citations, c)
}

func newService(t testing.TB, provider llm.Provider, diag chat.Diagnoser) (*chat.Service, *recorder, *sqlite.DB) {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "chat.db"), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := knowledge.LoadEmbedded(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	personas, err := chat.LoadPersonas()
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	n := 0
	s := &chat.Service{Provider: provider, Knowledge: db, Retriever: retrieval.NewIndex(db, retrieval.WithCheckInterval(0)), Diagnoser: diag, Checker: verify.New(),
		Personas: personas, Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
		NewID: func() string { n++; return fmt.Sprintf("resp_%d", n) }}
	return s, rec, db
}

var tokenRe = regexp.MustCompile(`\[([a-z]+):([a-z0-9_-]+)\]`)

func tokensOf(text string) []string {
	var out []string
	for _, m := range tokenRe.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1]+":"+m[2])
	}
	return out
}

// checkResponse asserts the invariants every answer keeps: every token
// resolves, every rag hit resolves, hops count from 0, the confidence adds
// up.
func checkResponse(t *testing.T, db *sqlite.DB, r chat.Response) {
	t.Helper()
	var toks []assistant.Token
	for _, s := range tokensOf(r.Response) {
		tok, err := assistant.ParseToken(s)
		if err != nil {
			t.Fatalf("malformed token %s", s)
		}
		toks = append(toks, tok)
	}
	for _, h := range r.RagHits {
		tok, err := assistant.ParseToken(h.Source)
		if err != nil {
			t.Fatalf("rag hit source %q is not a token", h.Source)
		}
		toks = append(toks, tok)
	}
	found, _ := db.Entities(context.Background(), toks)
	for _, tok := range toks {
		if _, ok := found[tok]; !ok {
			t.Errorf("%s does not resolve", tok)
		}
	}
	for i, h := range r.ReasoningTrace {
		if h.Hop != i || h.Tool == "" || h.InputSummary == "" || h.ResultSummary == "" {
			t.Errorf("trace item %d = %+v", i, h)
		}
	}
	c := r.Confidence
	if len(c.Verdicts) != c.TotalClaims || c.VerifiedClaims > c.TotalClaims || c.Level != verify.Level(c.Score, c.TotalClaims) {
		t.Errorf("confidence does not add up: %+v", c)
	}
}

func TestBuiltinTurnInEveryMode(t *testing.T) {
	s, rec, db := newService(t, builtin.New(), nil)
	for _, mode := range chat.Modes {
		t.Run(mode, func(t *testing.T) {
			r, cited, err := s.Run(context.Background(), chat.Request{Message: "Customers cancel after the first month and we do not know why", Mode: mode, Source: "test"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			rec.add(cited)
			checkResponse(t, db, r)
			if len(r.ReasoningTrace) < 2 || len(r.RagHits) < 2 || len(tokensOf(r.Response)) < 2 {
				t.Errorf("thin answer: %d hops, %d hits, %d citations", len(r.ReasoningTrace), len(r.RagHits), len(tokensOf(r.Response)))
			}
			personas, _ := chat.LoadPersonas()
			// The persona's sections, in its order; one with nothing
			// grounded to hold is left out, so at least two of them.
			shown := 0
			for _, section := range personas[mode].Sections {
				if strings.Contains(r.Response, "## "+section.Heading) {
					shown++
				}
			}
			if shown < 2 {
				t.Errorf("%s answer shows %d of its persona's sections:\n%s", mode, shown, r.Response)
			}
		})
	}
	if len(rec.citations) != 4 || len(rec.citations[0]) == 0 || rec.citations[0][0].Source != "test" {
		t.Errorf("citation events: %+v", rec.citations)
	}
	// Each cited entity once per response.
	for _, events := range rec.citations {
		seen := map[assistant.Token]bool{}
		for _, e := range events {
			if seen[e.Token] {
				t.Errorf("%s recorded twice in one response", e.Token)
			}
			seen[e.Token] = true
		}
	}
}

func TestBuiltinIsDeterministic(t *testing.T) {
	s, _, _ := newService(t, builtin.New(), nil)
	req := chat.Request{Message: "How should I price our new premium plan?", Mode: "customer"}
	a, _, err := s.Run(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := s.Run(context.Background(), req, nil)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Error("the same request gave two different answers")
	}
}

func TestHistoryIsUsed(t *testing.T) {
	s, _, _ := newService(t, builtin.New(), nil)
	r, _, err := s.Run(context.Background(), chat.Request{Mode: "operator", Message: "What should I measure first?",
		History: []chat.HistoryItem{{Role: "user", Content: "Our packing station cannot keep up and everything downstream waits"}, {Role: "assistant", Content: "Tell me more."}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.ReasoningTrace[0].InputSummary, "packing station") {
		t.Errorf("the follow-up ignored the history: %s", r.ReasoningTrace[0].InputSummary)
	}
}

// scripted is a provider that replays fixed responses and records what it
// was sent.
type scripted struct {
	responses []llm.Response
	err       error
	requests  []llm.Request
}

func (p *scripted) Name() string { return "scripted" }
func (p *scripted) Complete(_ context.Context, req llm.Request) (llm.Response, error) {
	p.requests = append(p.requests, req)
	if p.err != nil {
		return llm.Response{}, p.err
	}
	r := p.responses[0]
	if len(p.responses) > 1 {
		p.responses = p.responses[1:]
	}
	return r, nil
}

func TestInventedTokensAreRemoved(t *testing.T) {
	p := &scripted{responses: []llm.Response{
		{ToolCalls: []llm.ToolCall{{ID: "1", Name: chat.ToolSearch, Arguments: json.RawMessage(`{"query":"bottleneck"}`)}}},
		{Content: "Find the bottleneck first [framework:theory-of-constraints]. Also apply the Zeta method [framework:zeta-method] to it."},
	}}
	s, rec, _ := newService(t, p, nil)
	r, cited, err := s.Run(context.Background(), chat.Request{Message: "our line is slow", Mode: "operator"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec.add(cited)
	if strings.Contains(r.Response, "zeta-method") || !strings.Contains(r.Response, "[framework:theory-of-constraints]") {
		t.Errorf("response = %q", r.Response)
	}
	var zeta *verify.Verdict
	for i, v := range r.Confidence.Verdicts {
		if strings.Contains(v.Claim, "Zeta") {
			zeta = &r.Confidence.Verdicts[i]
		}
	}
	if zeta == nil || zeta.Status != verify.Unsupported {
		t.Errorf("the claim with the invented token: %+v", zeta)
	}
	if len(rec.citations[0]) != 1 || rec.citations[0][0].Token.Slug != "theory-of-constraints" {
		t.Errorf("citation events: %+v", rec.citations[0])
	}
	if len(r.ReasoningTrace) != 1 || r.ReasoningTrace[0].Tool != chat.ToolSearch {
		t.Errorf("trace: %+v", r.ReasoningTrace)
	}
	// The tool result reached the model as a tool message.
	last := p.requests[1].Messages[len(p.requests[1].Messages)-1]
	if last.Role != llm.RoleTool || last.ToolCallID != "1" || !strings.Contains(last.Content, "theory-of-constraints") {
		t.Errorf("tool result message: %+v", last)
	}
}

func TestHopBudget(t *testing.T) {
	loop := llm.Response{ToolCalls: []llm.ToolCall{{ID: "x", Name: chat.ToolSearch, Arguments: json.RawMessage(`{"query":"pricing"}`)}}}
	p := &scripted{responses: []llm.Response{loop, loop, {Content: "Price on value [framework:value-based-pricing]."}}}
	s, _, _ := newService(t, p, nil)
	s.MaxHops = 2
	r, _, err := s.Run(context.Background(), chat.Request{Message: "pricing?", Mode: "customer"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.ReasoningTrace) != 2 {
		t.Errorf("%d hops with a budget of 2", len(r.ReasoningTrace))
	}
	if last := p.requests[len(p.requests)-1]; last.Tools != nil {
		t.Errorf("tools still offered after the budget was spent")
	}
}

func TestUpstreamFailureRecordsNothing(t *testing.T) {
	p := &scripted{err: fmt.Errorf("connect: %w", llm.ErrUnavailable)}
	s, _, _ := newService(t, p, nil)
	_, cited, err := s.Run(context.Background(), chat.Request{Message: "hello there friend", Mode: "operator"}, nil)
	if !errors.Is(err, chat.ErrUpstream) {
		t.Errorf("err = %v, want ErrUpstream", err)
	}
	if len(cited) != 0 {
		t.Error("a failed turn returned citation events")
	}
}

type events struct {
	hops   []chat.TraceItem
	deltas []string
}

func (e *events) Hop(h chat.TraceItem) { e.hops = append(e.hops, h) }
func (e *events) Delta(s string)       { e.deltas = append(e.deltas, s) }

func TestEventsMatchTheResponse(t *testing.T) {
	s, _, _ := newService(t, builtin.New(), nil)
	ev := &events{}
	r, _, err := s.Run(context.Background(), chat.Request{Message: "Our onboarding loses half the new users in week one", Mode: "success"}, ev)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(ev.deltas, "") != r.Response {
		t.Error("the deltas do not add up to the response")
	}
	if len(ev.hops) != len(r.ReasoningTrace) {
		t.Errorf("%d hop events for %d hops", len(ev.hops), len(r.ReasoningTrace))
	}
	for _, d := range ev.deltas {
		if strings.Count(d, "[") != strings.Count(d, "]") {
			t.Errorf("a delta splits a citation token: %q", d)
		}
	}
}
