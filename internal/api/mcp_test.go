package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/constraintlab/assistant/internal/api"
	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/chat"
	"github.com/constraintlab/assistant/internal/ratelimit"
)

// bearer adds an Authorization header to every request.
type bearer struct {
	key string
	rt  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.rt.RoundTrip(r)
}

// mcpSession connects the Go SDK's client to the fixture's /mcp with key.
func (f *fixture) mcpSession(t *testing.T, key string) (*mcp.ClientSession, error) {
	t.Helper()
	ts := httptest.NewServer(f.h)
	t.Cleanup(ts.Close)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{key, http.DefaultTransport}}, DisableStandaloneSSE: true}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// structured decodes a tool result's structured content, after checking
// it against the tool's output schema as a strict client would, and that
// the text content carries the same JSON.
func structured(t *testing.T, tool *mcp.Tool, res *mcp.CallToolResult, v any) {
	t.Helper()
	if res.IsError {
		t.Fatalf("%s: tool error %v", tool.Name, res.Content[0].(*mcp.TextContent).Text)
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var schema jsonschema.Schema
	sb, _ := json.Marshal(tool.OutputSchema)
	if err := json.Unmarshal(sb, &schema); err != nil {
		t.Fatalf("%s: output schema: %v", tool.Name, err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: resolving the output schema: %v", tool.Name, err)
	}
	var inst any
	json.Unmarshal(b, &inst)
	if err := resolved.Validate(inst); err != nil {
		t.Errorf("%s: structured content does not match the output schema: %v\n%s", tool.Name, err, b)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; text != string(b) && !jsonEqual(text, string(b)) {
		t.Errorf("%s: text content %s is not the structured content %s", tool.Name, text, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

func jsonEqual(a, b string) bool {
	var x, y any
	return json.Unmarshal([]byte(a), &x) == nil && json.Unmarshal([]byte(b), &y) == nil && mustJSON(x) == mustJSON(y)
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

func links(res *mcp.CallToolResult) []string {
	var out []string
	for _, c := range res.Content {
		if l, ok := c.(*mcp.ResourceLink); ok {
			out = append(out, l.URI)
		}
	}
	return out
}

func TestMCPToolsAndResources(t *testing.T) {
	f := newFixture(t, 0, 0)
	log := &turnLog{AccessStore: f.srv.Access}
	f.srv.Access = log
	key := f.newKey(t, "ws_mcp")
	cs, err := f.mcpSession(t, key)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*mcp.Tool{}
	for _, tl := range list.Tools {
		tools[tl.Name] = tl
		if tl.OutputSchema == nil || tl.Description == "" {
			t.Errorf("%s: no output schema or description", tl.Name)
		}
		if b, _ := json.Marshal(tl.InputSchema); strings.Contains(string(b), "$ref") {
			t.Errorf("%s: input schema has references: %s", tl.Name, b)
		}
	}
	var names []string
	for n := range tools {
		names = append(names, n)
	}
	slices.Sort(names)
	if want := []string{"ask_assistant", "preview_constraint", "resolve_citations", "search_knowledge", "verify_text"}; !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
	call := func(name string, args any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}

	// search_knowledge: the cards of GET /search, in the same order.
	res := call("search_knowledge", map[string]any{"query": "the packing station cannot keep up", "limit": 3})
	var search struct {
		Results []struct {
			Token string  `json:"token"`
			Title string  `json:"title"`
			Score float64 `json:"score"`
		} `json:"results"`
	}
	structured(t, tools["search_knowledge"], res, &search)
	var native struct {
		Results []struct {
			Token string `json:"token"`
		} `json:"results"`
	}
	f.do(t, "GET", "/api/assistant/v1/search?q=the+packing+station+cannot+keep+up&limit=3", "").json(t, &native)
	if len(search.Results) == 0 || len(search.Results) != len(native.Results) || search.Results[0].Token != native.Results[0].Token {
		t.Errorf("search_knowledge %+v, GET /search %+v", search.Results, native.Results)
	}
	if l := links(res); len(l) != len(search.Results) || !strings.HasPrefix(l[0], "assistant://") {
		t.Errorf("search links %v", l)
	}

	// resolve_citations: resolved and unresolved, as /resolve.
	res = call("resolve_citations", map[string]any{"tokens": []map[string]string{
		{"type": "framework", "slug": "theory-of-constraints"}, {"type": "paper", "slug": "no-such-paper"}}})
	var resolved struct {
		Resolved   []api.EntityCard `json:"resolved"`
		Unresolved []struct{ Reason string }
	}
	structured(t, tools["resolve_citations"], res, &resolved)
	if len(resolved.Resolved) != 1 || resolved.Resolved[0].Token != "framework:theory-of-constraints" ||
		len(resolved.Unresolved) != 1 || resolved.Unresolved[0].Reason != "not_found" {
		t.Errorf("resolve_citations %+v", resolved)
	}
	if l := links(res); !slices.Equal(l, []string{"assistant://framework/theory-of-constraints"}) {
		t.Errorf("resolve links %v", l)
	}

	// preview_constraint.
	res = call("preview_constraint", map[string]any{"vertical": "saas", "free_text": "trials sign up but never connect their data"})
	var preview struct {
		FrameworkApplications []struct{ Token string } `json:"framework_applications"`
		Citations             []string                 `json:"citations"`
	}
	structured(t, tools["preview_constraint"], res, &preview)
	if len(preview.FrameworkApplications) == 0 || len(links(res)) != len(preview.Citations) {
		t.Errorf("preview %+v, links %v", preview, links(res))
	}
	// A tool error is the problem document of the HTTP API, with isError.
	res = call("preview_constraint", map[string]any{"vertical": "saas"})
	if !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"status":400`) {
		t.Errorf("preview without archetype_id or free_text: %+v", res.Content[0])
	}
	res = call("resolve_citations", map[string]any{"tokens": []any{}})
	if text := res.Content[0].(*mcp.TextContent).Text; !res.IsError || !strings.Contains(text, "tokens") {
		t.Errorf("resolve with no token: %s", text)
	}

	// verify_text: the confidence object.
	res = call("verify_text", map[string]any{"text": "Waiting time explodes as utilization approaches one [paper:kingman-1961-heavy-traffic]."})
	var conf struct {
		Level       string `json:"level"`
		TotalClaims int    `json:"totalClaims"`
		Verdicts    []struct{ Status string }
	}
	structured(t, tools["verify_text"], res, &conf)
	if conf.TotalClaims != 1 || len(conf.Verdicts) != 1 {
		t.Errorf("verify_text %+v", conf)
	}
	// A claim nothing decides has evidence null, which the output schema
	// allows.
	res = call("verify_text", map[string]any{"text": "Revenue doubles whenever the moon is full."})
	var unsupported struct {
		Verdicts []struct{ Evidence *struct{ Slug string } }
	}
	structured(t, tools["verify_text"], res, &unsupported)
	if len(unsupported.Verdicts) != 1 || unsupported.Verdicts[0].Evidence != nil {
		t.Errorf("verify_text of an unsupported claim: %+v", unsupported)
	}

	// ask_assistant: the same answer as POST /api/v1/chat.
	q := map[string]any{"message": "Our packing station cannot keep up and orders ship late", "mode": "operator", "vertical": "ecommerce"}
	res = call("ask_assistant", q)
	var turn struct {
		Response   string
		Confidence struct{ Level string }
		RagHits    []struct{ Source string } `json:"rag_hits"`
	}
	structured(t, tools["ask_assistant"], res, &turn)
	var chatResp struct{ Response string }
	f.chat(t, key, mustJSON(q)).json(t, &chatResp)
	if turn.Response == "" || turn.Response != chatResp.Response {
		t.Errorf("ask_assistant %q\nPOST /api/v1/chat %q", turn.Response, chatResp.Response)
	}
	if !strings.Contains(turn.Response, "[framework:") || len(links(res)) != len(turn.RagHits) {
		t.Errorf("ask_assistant cites nothing or links %v for hits %+v", links(res), turn.RagHits)
	}
	res = call("ask_assistant", map[string]any{"message": "   "})
	if !res.IsError {
		t.Errorf("ask_assistant with a blank message succeeded")
	}
	res = call("ask_assistant", map[string]any{"message": "hello", "mode": "pirate"})
	if !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "mode") {
		t.Errorf("ask_assistant with mode pirate: %+v", res.Content[0])
	}

	// Resources: every entity is listed; a card reads as /resolve gives it.
	rl, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := len(rl.Resources)
	for cur := rl.NextCursor; cur != ""; {
		more, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cur})
		if err != nil {
			t.Fatal(err)
		}
		n += len(more.Resources)
		cur = more.NextCursor
	}
	var stats struct{ Total int }
	f.do(t, "GET", "/api/assistant/v1/knowledge-stats", "").json(t, &stats)
	if n != stats.Total {
		t.Errorf("%d resources listed, %d entities", n, stats.Total)
	}
	tpl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tpl.ResourceTemplates) != 1 || tpl.ResourceTemplates[0].URITemplate != "assistant://{type}/{slug}" {
		t.Errorf("templates %+v, %v", tpl, err)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "assistant://framework/theory-of-constraints"})
	if err != nil {
		t.Fatal(err)
	}
	var card api.EntityCard
	if err := json.Unmarshal([]byte(rr.Contents[0].Text), &card); err != nil || card.Token != "framework:theory-of-constraints" || card.Title == "" {
		t.Errorf("card %+v, %v", card, err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "assistant://paper/no-such-paper"}); err == nil {
		t.Errorf("reading an unknown card succeeded")
	}

	// Usage rows name the tool; the ask_assistant turn was recorded with
	// its citations (one leaderboard count per turn, like chat's).
	log.mu.Lock()
	defer log.mu.Unlock()
	var endpoints []string
	for _, r := range log.rows {
		endpoints = append(endpoints, r.Endpoint)
	}
	if !slices.Contains(endpoints, "POST /mcp tools/call ask_assistant") || !slices.Contains(endpoints, "POST /mcp") {
		t.Errorf("usage endpoints %v", endpoints)
	}
	// Two turns: ask_assistant's and chat's, each with its citations.
	if len(log.turns) != 2 || len(log.turns[0]) == 0 || log.turns[0][0].Source != "mcp" {
		t.Errorf("recorded turns %+v", log.turns)
	}
}

func TestMCPRefusesWrongKey(t *testing.T) {
	f := newFixture(t, 0, 0)
	for _, key := range []string{"sk_service_notakey", ""} {
		if _, err := f.mcpSession(t, key); err == nil {
			t.Errorf("connected with key %q", key)
		}
	}
	r := f.do(t, "POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Accept", "application/json, text/event-stream",
		"Authorization", "Bearer sk_service_notakey")
	if r.Code != 401 || r.Header().Get("WWW-Authenticate") == "" {
		t.Errorf("wrong key: %d %s", r.Code, r.Body)
	}
}

// TestMCPSharesTheKeyLimit: tool calls, resource reads and listings count
// in the key's window of POST /api/v1/chat; past it, a call is a JSON-RPC error
// carrying retry_after_seconds, and chat is refused too.
func TestMCPSharesTheKeyLimit(t *testing.T) {
	f := newFixture(t, 0, 0)
	f.srv.ChatLimiter, f.srv.ChatRateLimit = ratelimit.NewSlidingWindow(3, time.Minute, f.clock.Now), 3
	f.srv.Metrics = prometheus.NewRegistry()
	f.h, f.routes = f.srv.HandlerAndRoutes()
	key := f.newKey(t, "ws_limit")
	cs, err := f.mcpSession(t, key)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if r := f.chat(t, key, `{"message":"Our packing station cannot keep up"}`); r.Code != 200 {
		t.Fatalf("chat %d", r.Code)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_knowledge", Arguments: map[string]any{"query": "bottleneck"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "assistant://framework/theory-of-constraints"}); err != nil {
		t.Fatal(err)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_knowledge", Arguments: map[string]any{"query": "bottleneck"}})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != -32029 || !strings.Contains(string(werr.Data), `"retry_after_seconds"`) {
		t.Fatalf("4th call: %v", err)
	}
	if r := f.chat(t, key, `{"message":"Our packing station cannot keep up"}`); r.Code != 429 {
		t.Errorf("chat after the MCP calls: %d", r.Code)
	}
}

// TestMCPSearchSchemaMatchesSearch: search_knowledge's arguments have the
// bounds of GET /api/assistant/v1/search's query parameters (q is query).
func TestMCPSearchSchemaMatchesSearch(t *testing.T) {
	f := newFixture(t, 0, 0)
	cs, err := f.mcpSession(t, f.newKey(t, "ws_schema"))
	if err != nil {
		t.Fatal(err)
	}
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var props map[string]map[string]any
	for _, tl := range list.Tools {
		if tl.Name == "search_knowledge" {
			var in struct {
				Properties map[string]map[string]any `json:"properties"`
			}
			json.Unmarshal([]byte(mustJSON(tl.InputSchema)), &in)
			props = in.Properties
		}
	}
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Name   string         `json:"name"`
				In     string         `json:"in"`
				Schema map[string]any `json:"schema"`
			} `json:"parameters"`
		} `json:"paths"`
	}
	f.do(t, "GET", "/api/assistant/openapi.json", "").json(t, &doc)
	params := doc.Paths["/api/assistant/v1/search"]["get"].Parameters
	params = slices.DeleteFunc(params, func(p struct {
		Name   string         `json:"name"`
		In     string         `json:"in"`
		Schema map[string]any `json:"schema"`
	}) bool {
		return p.In != "query"
	})
	if len(params) != 3 {
		t.Fatalf("search parameters %+v", params)
	}
	for _, p := range params {
		name := p.Name
		if name == "q" {
			name = "query"
		}
		for _, kw := range []string{"minLength", "maxLength", "enum", "minimum", "maximum", "default"} {
			if mustJSON(p.Schema[kw]) != mustJSON(props[name][kw]) {
				t.Errorf("%s.%s: search %v, search_knowledge %v", p.Name, kw, p.Schema[kw], props[name][kw])
			}
		}
	}
}

// TestMCPToolSchemasListIDs: every tool argument named vertical or mode
// lists the allowed ids as an enum.
func TestMCPToolSchemasListIDs(t *testing.T) {
	f := newFixture(t, 0, 0)
	cs, err := f.mcpSession(t, f.newKey(t, "ws_enums"))
	if err != nil {
		t.Fatal(err)
	}
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"vertical": assistant.VerticalIDs, "mode": chat.Modes}
	seen := map[string]bool{}
	for _, tl := range list.Tools {
		var in struct {
			Properties map[string]struct {
				Enum []string `json:"enum"`
			} `json:"properties"`
		}
		json.Unmarshal([]byte(mustJSON(tl.InputSchema)), &in)
		for name, ids := range want {
			p, ok := in.Properties[name]
			if !ok {
				continue
			}
			seen[tl.Name+"."+name] = true
			if !slices.Equal(p.Enum, ids) {
				t.Errorf("%s.%s: enum %v, want %v", tl.Name, name, p.Enum, ids)
			}
		}
	}
	for _, arg := range []string{"ask_assistant.vertical", "ask_assistant.mode", "preview_constraint.vertical"} {
		if !seen[arg] {
			t.Errorf("%s: no such argument", arg)
		}
	}
}

// TestMCPUnauthorized: a missing or wrong key is a 401 with a Bearer
// challenge and a body that names the key, before any MCP message is read.
func TestMCPUnauthorized(t *testing.T) {
	f := newFixture(t, 0, 0)
	for _, h := range [][]string{nil, {"Authorization", "Bearer sk_service_wrong"}, {"Authorization", "Basic dXNlcjpwYXNz"}} {
		r := f.do(t, "POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, h...)
		p := assertProblem(t, r, 401)
		if ch := r.Header().Get("WWW-Authenticate"); !strings.HasPrefix(ch, "Bearer ") {
			t.Errorf("%v: WWW-Authenticate %q", h, ch)
		}
		if d, _ := p["detail"].(string); !strings.Contains(d, "API key") {
			t.Errorf("%v: detail %q does not name the API key", h, d)
		}
	}
}
