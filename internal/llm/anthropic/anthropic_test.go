package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/llm"
	"github.com/constraintlab/assistant/internal/llm/anthropic"
)

// upstream is a fake Messages API server: it records every request and
// answers with handle(w, r, n), n counting requests from 1.
type upstream struct {
	*httptest.Server
	mu     sync.Mutex
	reqs   []recorded
	handle func(w http.ResponseWriter, r *http.Request, n int)
}

type recorded struct {
	Path   string
	Header http.Header
	Body   map[string]any
}

func newUpstream(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, n int)) *upstream {
	t.Helper()
	u := &upstream{handle: handle}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		u.mu.Lock()
		u.reqs = append(u.reqs, recorded{Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		n := len(u.reqs)
		u.mu.Unlock()
		u.handle(w, r, n)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) requests() []recorded {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]recorded(nil), u.reqs...)
}

func (u *upstream) count() int { return len(u.requests()) }

// hang is a handler that answers only when the client goes away or the
// test ends.
func hang(t *testing.T) func(http.ResponseWriter, *http.Request, int) {
	done := make(chan struct{})
	t.Cleanup(func() { close(done) }) // runs before the server's Close
	return func(w http.ResponseWriter, r *http.Request, _ int) {
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func message(content string, stop string) string {
	return `{"id":"msg_01","type":"message","role":"assistant","model":"claude-test","content":` + content +
		`,"stop_reason":"` + stop + `","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":5}}`
}

func newProvider(t *testing.T, baseURL string, mod func(*anthropic.Config)) *anthropic.Provider {
	t.Helper()
	cfg := anthropic.Config{BaseURL: baseURL, APIKey: "sk-ant-test", Model: "claude-test", Timeout: 5 * time.Second, MaxRetries: 1}
	if mod != nil {
		mod(&cfg)
	}
	p, err := anthropic.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

var searchTool = llm.Tool{
	Name:        "search",
	Description: "Search the knowledge base.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"],"additionalProperties":false}`),
}

var hi = llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}

func TestComplete(t *testing.T) {
	tests := []struct {
		name   string
		answer string
		want   llm.Response
	}{
		{
			name:   "text",
			answer: message(`[{"type":"text","text":"Plan X costs 10 ","citations":null},{"type":"text","text":"[kb:plan-x]."}]`, "end_turn"),
			want:   llm.Response{Content: "Plan X costs 10 [kb:plan-x]."},
		},
		{
			name: "tool call",
			answer: message(`[{"type":"text","text":"Let me look."},`+
				`{"type":"tool_use","id":"toolu_01","name":"search","input":{"query":"plan X"}},`+
				`{"type":"tool_use","id":"toolu_02","name":"search","input":{}}]`, "tool_use"),
			want: llm.Response{Content: "Let me look.", ToolCalls: []llm.ToolCall{
				{ID: "toolu_01", Name: "search", Arguments: json.RawMessage(`{"query":"plan X"}`)},
				{ID: "toolu_02", Name: "search", Arguments: json.RawMessage(`{}`)},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) { writeJSON(w, 200, tt.answer) })
			p := newProvider(t, up.URL, nil)
			got, err := p.Complete(t.Context(), llm.Request{
				Messages: []llm.Message{{Role: llm.RoleUser, Content: "What does plan X cost?"}},
				Tools:    []llm.Tool{searchTool},
			})
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if got.Usage.FinishReason == "" {
				t.Errorf("no finish reason in the usage: %+v", got.Usage)
			}
			got.Usage = llm.Usage{} // its finish reason is checked above
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			reqs := up.requests()
			if len(reqs) != 1 || reqs[0].Path != "/v1/messages" {
				t.Fatalf("requests = %+v, want one POST /v1/messages", reqs)
			}
			if got := reqs[0].Body["max_tokens"]; got != float64(anthropic.DefaultMaxTokens) {
				t.Errorf("max_tokens = %v, want the default %d", got, anthropic.DefaultMaxTokens)
			}
		})
	}
}

// conversation has every kind of message: the exact wire form is asserted
// by TestWireFormat.
var conversation = llm.Request{
	Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "You are helpful."},
		{Role: llm.RoleUser, Content: "What do plans X and Y cost?"},
		{Role: llm.RoleAssistant, Content: "Let me look.", ToolCalls: []llm.ToolCall{
			{ID: "toolu_01", Name: "search", Arguments: json.RawMessage(`{"query":"plan X"}`)},
			{ID: "toolu_02", Name: "search", Arguments: json.RawMessage(`{"query":"plan Y"}`)},
		}},
		{Role: llm.RoleTool, ToolCallID: "toolu_01", Name: "search", Content: "Plan X costs 10."},
		{Role: llm.RoleTool, ToolCallID: "toolu_02", Name: "search", Content: "Plan Y costs 20."},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
			{ID: "toolu_03", Name: "search", Arguments: json.RawMessage(`{"query":"plan Z"}`)},
		}},
		{Role: llm.RoleTool, ToolCallID: "toolu_03", Name: "search", Content: ""},
		{Role: llm.RoleUser, Content: "And Z?"},
		{Role: llm.RoleAssistant, Content: "Z is unknown."},
		{Role: llm.RoleUser, Content: "Thanks."},
	},
	Tools:     []llm.Tool{searchTool},
	MaxTokens: 256,
}

const wantWire = `{
	"model": "claude-test",
	"max_tokens": 256,
	"system": [{"type": "text", "text": "You are helpful."}],
	"messages": [
		{"role": "user", "content": [{"type": "text", "text": "What do plans X and Y cost?"}]},
		{"role": "assistant", "content": [
			{"type": "text", "text": "Let me look."},
			{"type": "tool_use", "id": "toolu_01", "name": "search", "input": {"query": "plan X"}},
			{"type": "tool_use", "id": "toolu_02", "name": "search", "input": {"query": "plan Y"}}
		]},
		{"role": "user", "content": [
			{"type": "tool_result", "tool_use_id": "toolu_01", "content": [{"type": "text", "text": "Plan X costs 10."}]},
			{"type": "tool_result", "tool_use_id": "toolu_02", "content": [{"type": "text", "text": "Plan Y costs 20."}]}
		]},
		{"role": "assistant", "content": [
			{"type": "tool_use", "id": "toolu_03", "name": "search", "input": {"query": "plan Z"}}
		]},
		{"role": "user", "content": [
			{"type": "tool_result", "tool_use_id": "toolu_03"},
			{"type": "text", "text": "And Z?"}
		]},
		{"role": "assistant", "content": [{"type": "text", "text": "Z is unknown."}]},
		{"role": "user", "content": [{"type": "text", "text": "Thanks."}]}
	],
	"tools": [{
		"name": "search",
		"description": "Search the knowledge base.",
		"input_schema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"], "additionalProperties": false}
	}]
}`

func TestWireFormat(t *testing.T) {
	tests := []struct {
		name   string
		stream bool
	}{
		{"complete", false},
		{"stream", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
				if tt.stream {
					writeSSE(w, textStream("ok")...)
					return
				}
				writeJSON(w, 200, message(`[{"type":"text","text":"ok"}]`, "end_turn"))
			})
			p := newProvider(t, up.URL, nil)
			var err error
			if tt.stream {
				_, err = p.Stream(t.Context(), conversation, func(string) {})
			} else {
				_, err = p.Complete(t.Context(), conversation)
			}
			if err != nil {
				t.Fatal(err)
			}
			var want map[string]any
			if err := json.Unmarshal([]byte(wantWire), &want); err != nil {
				t.Fatal(err)
			}
			if tt.stream {
				want["stream"] = true
			}
			got := up.requests()[0]
			if !reflect.DeepEqual(got.Body, want) {
				gotJSON, _ := json.MarshalIndent(got.Body, "", "  ")
				wantJSON, _ := json.MarshalIndent(want, "", "  ")
				t.Errorf("request body:\n%s\nwant:\n%s", gotJSON, wantJSON)
			}
			for k, want := range map[string]string{
				"X-Api-Key":         "sk-ant-test",
				"Anthropic-Version": "2023-06-01",
				"Authorization":     "",
				"Content-Type":      "application/json",
			} {
				if h := got.Header.Get(k); h != want {
					t.Errorf("header %s = %q, want %q", k, h, want)
				}
			}
		})
	}
}

// event is one server-sent event of a Messages stream.
type event struct{ name, data string }

func writeSSE(w http.ResponseWriter, events ...event) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	f, _ := w.(http.Flusher)
	for _, e := range events {
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.name, e.data)
		if f != nil {
			f.Flush()
		}
	}
}

const messageStart = `{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-test",` +
	`"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1}}}`

func textStream(parts ...string) []event {
	evs := []event{
		{"message_start", messageStart},
		{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`},
		{"ping", `{"type": "ping"}`},
	}
	for _, p := range parts {
		b, _ := json.Marshal(p)
		evs = append(evs, event{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":` + string(b) + `}}`})
	}
	return append(evs,
		event{"content_block_stop", `{"type":"content_block_stop","index":0}`},
		event{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}}`},
		event{"message_stop", `{"type":"message_stop"}`},
	)
}

func TestStream(t *testing.T) {
	tests := []struct {
		name      string
		events    []event
		wantTexts []string
		want      llm.Response
	}{
		{
			name:      "text",
			events:    textStream("Plan X ", "costs 10."),
			wantTexts: []string{"Plan X ", "costs 10."},
			want:      llm.Response{Content: "Plan X costs 10."},
		},
		{
			name: "tool call",
			events: []event{
				{"message_start", messageStart},
				{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`},
				{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me look."}}`},
				{"content_block_stop", `{"type":"content_block_stop","index":0}`},
				{"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01","name":"search","input":{}}}`},
				{"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}`},
				{"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"query\": \"pla"}}`},
				{"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"n X\"}"}}`},
				{"content_block_stop", `{"type":"content_block_stop","index":1}`},
				{"content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_02","name":"search","input":{}}}`},
				{"content_block_stop", `{"type":"content_block_stop","index":2}`},
				{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":40}}`},
				{"message_stop", `{"type":"message_stop"}`},
			},
			wantTexts: []string{"Let me look."},
			want: llm.Response{Content: "Let me look.", ToolCalls: []llm.ToolCall{
				{ID: "toolu_01", Name: "search", Arguments: json.RawMessage(`{"query": "plan X"}`)},
				{ID: "toolu_02", Name: "search", Arguments: json.RawMessage(`{}`)},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) { writeSSE(w, tt.events...) })
			p := newProvider(t, up.URL, nil)
			var texts []string
			got, err := p.Stream(t.Context(), llm.Request{
				Messages: []llm.Message{{Role: llm.RoleUser, Content: "What does plan X cost?"}},
				Tools:    []llm.Tool{searchTool},
			}, func(s string) { texts = append(texts, s) })
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if got.Usage.FinishReason == "" {
				t.Errorf("no finish reason in the usage: %+v", got.Usage)
			}
			got.Usage = llm.Usage{} // its finish reason is checked above
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if !reflect.DeepEqual(texts, tt.wantTexts) {
				t.Errorf("onText got %q, want %q", texts, tt.wantTexts)
			}
			if s := up.requests()[0].Body["stream"]; s != true {
				t.Errorf("stream = %v, want true", s)
			}
		})
	}
}

func TestStreamErrors(t *testing.T) {
	tests := []struct {
		name    string
		handle  func(w http.ResponseWriter, r *http.Request, n int)
		wantIs  error
		wantMsg string
	}{
		{"error event", func(w http.ResponseWriter, r *http.Request, _ int) {
			writeSSE(w, textStream("Hel")[:4]...)
			writeSSE(w, event{"error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`})
		}, llm.ErrUnavailable, "overloaded_error"},
		{"cut off", func(w http.ResponseWriter, r *http.Request, _ int) {
			writeSSE(w, textStream("Hel")[:4]...)
		}, llm.ErrUnavailable, "message_stop"},
		{"401", func(w http.ResponseWriter, r *http.Request, _ int) {
			writeJSON(w, 401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
		}, llm.ErrMisconfigured, "ASSISTANT_LLM_API_KEY"},
		{"500", func(w http.ResponseWriter, r *http.Request, _ int) {
			writeJSON(w, 500, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`)
		}, llm.ErrUnavailable, "500"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, tt.handle)
			p := newProvider(t, up.URL, nil)
			_, err := p.Stream(t.Context(), hi, func(string) {})
			checkErr(t, err, tt.wantIs, tt.wantMsg)
		})
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			writeJSON(w, 429, `{"type":"error","error":{"type":"rate_limit_error","message":"Number of requests has exceeded your rate limit"}}`)
			return
		}
		writeJSON(w, 200, message(`[{"type":"text","text":"ok"}]`, "end_turn"))
	})
	p := newProvider(t, up.URL, nil)
	start := time.Now()
	got, err := p.Complete(t.Context(), hi)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if got.Content != "ok" {
		t.Errorf("content = %q", got.Content)
	}
	if n := up.count(); n != 2 {
		t.Errorf("requests = %d, want 2", n)
	}
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Errorf("retried after %s, want Retry-After's 1s honoured", d)
	}
	if h := up.requests()[1].Header.Get("X-Stainless-Retry-Count"); h != "1" {
		t.Errorf("X-Stainless-Retry-Count = %q, want 1", h)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		header     map[string]string
		body       string
		contentTyp string
		wantIs     error  // nil: neither ErrUnavailable nor ErrMisconfigured
		wantMsg    string // substring of the error
		wantReqs   int    // with MaxRetries 1
	}{
		{name: "500 after retries", status: 500, body: `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`,
			wantIs: llm.ErrUnavailable, wantMsg: "500", wantReqs: 2},
		{name: "529 overloaded", status: 529, body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			wantIs: llm.ErrUnavailable, wantMsg: "Overloaded", wantReqs: 2},
		{name: "502 html", status: 502, body: `<html>bad gateway</html>`, contentTyp: "text/html",
			wantIs: llm.ErrUnavailable, wantMsg: "502", wantReqs: 2},
		{name: "429 after retries", status: 429, header: map[string]string{"Retry-After-Ms": "10"},
			body: `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, wantIs: llm.ErrUnavailable, wantMsg: "429", wantReqs: 2},
		{name: "429 retry-after too long", status: 429, header: map[string]string{"Retry-After": "3600"},
			body: `{"type":"error","error":{"type":"rate_limit_error","message":"quota"}}`, wantIs: llm.ErrUnavailable, wantMsg: "429", wantReqs: 1},
		{name: "401", status: 401, body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`,
			wantIs: llm.ErrMisconfigured, wantMsg: "ASSISTANT_LLM_API_KEY", wantReqs: 1},
		{name: "403", status: 403, body: `{"type":"error","error":{"type":"permission_error","message":"no access"}}`,
			wantIs: llm.ErrMisconfigured, wantMsg: "ASSISTANT_LLM_API_KEY", wantReqs: 1},
		{name: "404 model", status: 404, body: `{"type":"error","error":{"type":"not_found_error","message":"model: claude-test"}}`,
			wantIs: llm.ErrMisconfigured, wantMsg: "ASSISTANT_LLM_MODEL", wantReqs: 1},
		{name: "400 bad request", status: 400, body: `{"type":"error","error":{"type":"invalid_request_error","message":"messages: roles must alternate"}}`,
			wantIs: nil, wantMsg: "roles must alternate", wantReqs: 1},
		{name: "malformed json", status: 200, body: `{"id":`,
			wantIs: llm.ErrUnavailable, wantMsg: "anthropic", wantReqs: 1},
		{name: "tool input not an object", status: 200,
			body:   message(`[{"type":"tool_use","id":"toolu_01","name":"search","input":[1]}]`, "tool_use"),
			wantIs: llm.ErrUnavailable, wantMsg: "toolu_01", wantReqs: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
				for k, v := range tt.header {
					w.Header().Set(k, v)
				}
				ct := tt.contentTyp
				if ct == "" {
					ct = "application/json"
				}
				w.Header().Set("Content-Type", ct)
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			})
			p := newProvider(t, up.URL, nil)
			_, err := p.Complete(t.Context(), hi)
			checkErr(t, err, tt.wantIs, tt.wantMsg)
			if n := up.count(); n != tt.wantReqs {
				t.Errorf("requests = %d, want %d", n, tt.wantReqs)
			}
		})
	}
}

func checkErr(t *testing.T, err, wantIs error, wantMsg string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	t.Logf("error: %v", err)
	if wantIs != nil && !errors.Is(err, wantIs) {
		t.Errorf("error %q does not wrap %v", err, wantIs)
	}
	for _, sentinel := range []error{llm.ErrUnavailable, llm.ErrMisconfigured} {
		if sentinel != wantIs && errors.Is(err, sentinel) {
			t.Errorf("error %q wraps %v", err, sentinel)
		}
	}
	if !strings.Contains(err.Error(), wantMsg) {
		t.Errorf("error %q does not mention %q", err, wantMsg)
	}
	if strings.Contains(err.Error(), "sk-ant-test") {
		t.Errorf("error %q leaks the API key", err)
	}
}

func TestUnreachable(t *testing.T) {
	t.Parallel()
	t.Run("connection refused", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		p := newProvider(t, url, func(c *anthropic.Config) { c.MaxRetries = -1 })
		_, err := p.Complete(t.Context(), hi)
		checkErr(t, err, llm.ErrUnavailable, "anthropic")
	})
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("timeout stream=%v", stream), func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, hang(t))
			// One retry: the SDK retries an attempt that timed out.
			p := newProvider(t, up.URL, func(c *anthropic.Config) { c.Timeout = 150 * time.Millisecond; c.MaxRetries = 1 })
			start := time.Now()
			var err error
			if stream {
				_, err = p.Stream(t.Context(), hi, func(string) {})
			} else {
				_, err = p.Complete(t.Context(), hi)
			}
			checkErr(t, err, llm.ErrUnavailable, "timeout")
			if errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("error %q wraps context.DeadlineExceeded: callers would take it for their own", err)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("took %s", d)
			}
			if n := up.count(); n != 2 {
				t.Errorf("requests = %d, want 2", n)
			}
		})
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		handle func(t *testing.T) func(http.ResponseWriter, *http.Request, int)
		stream bool
	}{
		{"before headers", hang, false},
		{"before headers stream", hang, true},
		{"mid stream", func(t *testing.T) func(http.ResponseWriter, *http.Request, int) {
			h := hang(t)
			return func(w http.ResponseWriter, r *http.Request, n int) {
				writeSSE(w, textStream("Hel")[:4]...)
				h(w, r, n)
			}
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, tt.handle(t))
			p := newProvider(t, up.URL, nil)
			ctx, cancel := context.WithCancel(t.Context())
			time.AfterFunc(100*time.Millisecond, cancel)
			start := time.Now()
			var err error
			if tt.stream {
				_, err = p.Stream(ctx, hi, func(string) {})
			} else {
				_, err = p.Complete(ctx, hi)
			}
			if !errors.Is(err, context.Canceled) {
				t.Errorf("error %v, want context.Canceled", err)
			}
			if errors.Is(err, llm.ErrUnavailable) {
				t.Errorf("error %q wraps ErrUnavailable", err)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("returned after %s", d)
			}
			if n := up.count(); n != 1 {
				t.Errorf("requests = %d, want 1 (no retry after a cancel)", n)
			}
		})
	}
}

func TestBreaker(t *testing.T) {
	t.Parallel()

	t.Run("opens after 5 failures", func(t *testing.T) {
		t.Parallel()
		up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			writeJSON(w, 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
		})
		p := newProvider(t, up.URL, func(c *anthropic.Config) { c.MaxRetries = -1 })
		for i := range llm.BreakerFailures {
			_, err := p.Complete(t.Context(), hi)
			checkErr(t, err, llm.ErrUnavailable, "529")
			if i < llm.BreakerFailures-1 { // a cancelled call in between does not reset the count
				ctx, cancel := context.WithCancel(t.Context())
				cancel()
				if _, err := p.Complete(ctx, hi); !errors.Is(err, context.Canceled) {
					t.Fatalf("cancelled call: %v", err)
				}
			}
		}
		hits := up.count()
		start := time.Now()
		for _, stream := range []bool{false, true} {
			var err error
			if stream {
				_, err = p.Stream(t.Context(), hi, func(string) {})
			} else {
				_, err = p.Complete(t.Context(), hi)
			}
			checkErr(t, err, llm.ErrUnavailable, "circuit breaker open")
		}
		if up.count() != hits {
			t.Errorf("open breaker let %d requests through", up.count()-hits)
		}
		if d := time.Since(start); d > 100*time.Millisecond {
			t.Errorf("failing fast took %s", d)
		}
	})

	t.Run("misconfiguration does not open it", func(t *testing.T) {
		t.Parallel()
		up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			writeJSON(w, 401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
		})
		p := newProvider(t, up.URL, nil)
		for range 2 * llm.BreakerFailures {
			_, err := p.Complete(t.Context(), hi)
			checkErr(t, err, llm.ErrMisconfigured, "ASSISTANT_LLM_API_KEY")
		}
		if n := up.count(); n != 2*llm.BreakerFailures {
			t.Errorf("requests = %d, want every call to reach the server", n)
		}
	})
}

// TestEnvironmentIgnored: the SDK's ANTHROPIC_* defaults must never apply.
func TestEnvironmentIgnored(t *testing.T) {
	elsewhere := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		writeJSON(w, 200, message(`[{"type":"text","text":"wrong server"}]`, "end_turn"))
	})
	t.Setenv("ANTHROPIC_BASE_URL", elsewhere.URL)
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "token-from-env")
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Leak: yes")
	t.Setenv("ANTHROPIC_CONFIG_DIR", t.TempDir())

	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		writeJSON(w, 200, message(`[{"type":"text","text":"ok"}]`, "end_turn"))
	})
	p := newProvider(t, up.URL, nil)
	got, err := p.Complete(t.Context(), hi)
	if err != nil {
		t.Fatal(err)
	}
	if got.Content != "ok" || elsewhere.count() != 0 || up.count() != 1 {
		t.Fatalf("content %q, env server hits %d, configured server hits %d", got.Content, elsewhere.count(), up.count())
	}
	h := up.requests()[0].Header
	if v := h.Get("X-Api-Key"); v != "sk-ant-test" {
		t.Errorf("X-Api-Key = %q, want the configured key", v)
	}
	for _, k := range []string{"Authorization", "X-Leak"} {
		if v := h.Get(k); v != "" {
			t.Errorf("header %s = %q leaked from the environment", k, v)
		}
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		cfg     anthropic.Config
		wantErr string // "" for success
	}{
		{"minimal", anthropic.Config{Model: "claude-test", APIKey: "k"}, ""},
		{"base URL", anthropic.Config{BaseURL: "http://proxy.internal:8080/anthropic", Model: "claude-test", APIKey: "k"}, ""},
		{"no model", anthropic.Config{APIKey: "k"}, "ASSISTANT_LLM_MODEL"},
		{"no API key", anthropic.Config{Model: "claude-test"}, "ASSISTANT_LLM_API_KEY"},
		{"relative base URL", anthropic.Config{BaseURL: "api.anthropic.com", Model: "m", APIKey: "k"}, "ASSISTANT_LLM_BASE_URL"},
		{"unparseable base URL", anthropic.Config{BaseURL: "http://[::1", Model: "m", APIKey: "k"}, "ASSISTANT_LLM_BASE_URL"},
		{"negative timeout", anthropic.Config{Model: "m", APIKey: "k", Timeout: -time.Second}, "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := anthropic.New(tt.cfg)
			if tt.wantErr == "" {
				if err != nil || p == nil || p.Name() != "anthropic" {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil || !errors.Is(err, llm.ErrMisconfigured) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New error = %v, want ErrMisconfigured naming %s", err, tt.wantErr)
			}
		})
	}
}

func TestBadRequestsAreBugs(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) { t.Error("request sent") })
	p := newProvider(t, up.URL, nil)
	for _, req := range []llm.Request{
		{Messages: []llm.Message{{Role: "robot", Content: "hi"}}},
		{Messages: []llm.Message{{Role: llm.RoleTool, Content: "result"}}},
		{Messages: []llm.Message{{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "x", Name: "t", Arguments: json.RawMessage(`{oops`)}}}}},
		{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}, Tools: []llm.Tool{{Name: "t", Parameters: json.RawMessage(`[1]`)}}},
	} {
		_, err := p.Complete(t.Context(), req)
		if err == nil || errors.Is(err, llm.ErrUnavailable) || errors.Is(err, llm.ErrMisconfigured) {
			t.Errorf("request %+v: error %v, want a plain error", req, err)
		}
	}
}
