package openai_test

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
	"github.com/constraintlab/assistant/internal/llm/openai"
)

// upstream is a fake Chat Completions server: it records every request and
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

func completion(message string, finish string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"test-model",` +
		`"choices":[{"index":0,"message":` + message + `,"finish_reason":"` + finish + `","logprobs":null}],` +
		`"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`
}

func newProvider(t *testing.T, baseURL string, mod func(*openai.Config)) *openai.Provider {
	t.Helper()
	cfg := openai.Config{BaseURL: baseURL + "/v1", APIKey: "sk-test", Model: "test-model", Timeout: 5 * time.Second, MaxRetries: 1}
	if mod != nil {
		mod(&cfg)
	}
	p, err := openai.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

var searchTool = llm.Tool{
	Name:        "search",
	Description: "Search the knowledge base.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`),
}

func TestComplete(t *testing.T) {
	tests := []struct {
		name   string
		answer string
		want   llm.Response
	}{
		{
			name:   "text",
			answer: completion(`{"role":"assistant","content":"Plan X costs 10 [kb:plan-x].","refusal":null}`, "stop"),
			want:   llm.Response{Content: "Plan X costs 10 [kb:plan-x]."},
		},
		{
			name: "tool call",
			answer: completion(`{"role":"assistant","content":null,"tool_calls":[`+
				`{"id":"call_1","type":"function","function":{"name":"search","arguments":"{\"query\":\"plan X\"}"}},`+
				`{"id":"call_2","type":"function","function":{"name":"search","arguments":"{}"}}]}`, "tool_calls"),
			want: llm.Response{ToolCalls: []llm.ToolCall{
				{ID: "call_1", Name: "search", Arguments: json.RawMessage(`{"query":"plan X"}`)},
				{ID: "call_2", Name: "search", Arguments: json.RawMessage(`{}`)},
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
			if len(reqs) != 1 || reqs[0].Path != "/v1/chat/completions" {
				t.Fatalf("requests = %+v, want one POST /v1/chat/completions", reqs)
			}
			if got := reqs[0].Header.Get("Authorization"); got != "Bearer sk-test" {
				t.Errorf("Authorization = %q", got)
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
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
			{ID: "call_1", Name: "search", Arguments: json.RawMessage(`{"query":"plan X"}`)},
			{ID: "call_2", Name: "search", Arguments: json.RawMessage(`{"query":"plan Y"}`)},
		}},
		{Role: llm.RoleTool, ToolCallID: "call_1", Name: "search", Content: "Plan X costs 10."},
		{Role: llm.RoleTool, ToolCallID: "call_2", Name: "search", Content: "Plan Y costs 20."},
		{Role: llm.RoleAssistant, Content: "X is 10, Y is 20."},
		{Role: llm.RoleUser, Content: "Thanks."},
	},
	Tools:     []llm.Tool{searchTool},
	MaxTokens: 256,
}

const wantWire = `{
	"model": "test-model",
	"max_tokens": 256,
	"messages": [
		{"role": "system", "content": "You are helpful."},
		{"role": "user", "content": "What do plans X and Y cost?"},
		{"role": "assistant", "tool_calls": [
			{"id": "call_1", "type": "function", "function": {"name": "search", "arguments": "{\"query\":\"plan X\"}"}},
			{"id": "call_2", "type": "function", "function": {"name": "search", "arguments": "{\"query\":\"plan Y\"}"}}
		]},
		{"role": "tool", "tool_call_id": "call_1", "content": "Plan X costs 10."},
		{"role": "tool", "tool_call_id": "call_2", "content": "Plan Y costs 20."},
		{"role": "assistant", "content": "X is 10, Y is 20."},
		{"role": "user", "content": "Thanks."}
	],
	"tools": [{"type": "function", "function": {
		"name": "search",
		"description": "Search the knowledge base.",
		"parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
	}}]
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
					writeSSE(w, `{"id":"c","object":"chat.completion.chunk","created":1,"model":"test-model","choices":[{"index":0,"delta":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
					return
				}
				writeJSON(w, 200, completion(`{"role":"assistant","content":"ok"}`, "stop"))
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
				want["stream_options"] = map[string]any{"include_usage": true}
			}
			got := up.requests()[0]
			if !reflect.DeepEqual(got.Body, want) {
				gotJSON, _ := json.MarshalIndent(got.Body, "", "  ")
				wantJSON, _ := json.MarshalIndent(want, "", "  ")
				t.Errorf("request body:\n%s\nwant:\n%s", gotJSON, wantJSON)
			}
			if h := got.Header.Get("Authorization"); h != "Bearer sk-test" {
				t.Errorf("Authorization = %q, want Bearer sk-test", h)
			}
			if h := got.Header.Get("Content-Type"); h != "application/json" {
				t.Errorf("Content-Type = %q", h)
			}
		})
	}
}

// writeSSE writes chunks as the server-sent events of a streamed chat
// completion, ending with data: [DONE].
func writeSSE(w http.ResponseWriter, chunks ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	f, _ := w.(http.Flusher)
	for _, c := range chunks {
		fmt.Fprintf(w, "data: %s\n\n", c)
		if f != nil {
			f.Flush()
		}
	}
	io.WriteString(w, "data: [DONE]\n\n")
}

func chunk(delta string, finish string) string {
	fr := "null"
	if finish != "" {
		fr = `"` + finish + `"`
	}
	return `{"id":"chatcmpl-2","object":"chat.completion.chunk","created":1700000000,"model":"test-model",` +
		`"system_fingerprint":"fp","choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + fr + `}]}`
}

func TestStream(t *testing.T) {
	tests := []struct {
		name      string
		chunks    []string
		wantTexts []string
		want      llm.Response
	}{
		{
			name: "text",
			chunks: []string{
				chunk(`{"role":"assistant","content":""}`, ""),
				chunk(`{"content":"Plan X "}`, ""),
				chunk(`{"content":"costs 10."}`, ""),
				chunk(`{}`, "stop"),
				`{"id":"chatcmpl-2","object":"chat.completion.chunk","created":1700000000,"model":"test-model","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":4,"total_tokens":13}}`,
			},
			wantTexts: []string{"Plan X ", "costs 10."},
			want:      llm.Response{Content: "Plan X costs 10."},
		},
		{
			name: "tool call",
			chunks: []string{
				chunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"search","arguments":""}}]}`, ""),
				chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"que"}}]}`, ""),
				chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"ry\": \"plan X\"}"}}]}`, ""),
				chunk(`{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"search","arguments":"{\"query\":"}}]}`, ""),
				chunk(`{"tool_calls":[{"index":1,"function":{"arguments":"\"plan Y\"}"}}]}`, ""),
				chunk(`{}`, "tool_calls"),
			},
			wantTexts: nil,
			want: llm.Response{ToolCalls: []llm.ToolCall{
				{ID: "call_1", Name: "search", Arguments: json.RawMessage(`{"query": "plan X"}`)},
				{ID: "call_2", Name: "search", Arguments: json.RawMessage(`{"query":"plan Y"}`)},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) { writeSSE(w, tt.chunks...) })
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
			writeSSE(w, chunk(`{"role":"assistant","content":"Hel"}`, ""), `{"error":{"message":"The server is overloaded","type":"server_error"}}`)
		}, llm.ErrUnavailable, "overloaded"},
		{"cut off", func(w http.ResponseWriter, r *http.Request, _ int) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: %s\n\n", chunk(`{"role":"assistant","content":"Hel"}`, ""))
		}, llm.ErrUnavailable, "finish_reason"},
		{"bad chunk", func(w http.ResponseWriter, r *http.Request, _ int) {
			writeSSE(w, `{"id":`)
		}, llm.ErrUnavailable, "openai"},
		{"401", func(w http.ResponseWriter, r *http.Request, _ int) {
			writeJSON(w, 401, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`)
		}, llm.ErrMisconfigured, "ASSISTANT_LLM_API_KEY"},
		{"500", func(w http.ResponseWriter, r *http.Request, _ int) {
			writeJSON(w, 500, `{"error":{"message":"boom","type":"server_error"}}`)
		}, llm.ErrUnavailable, "500"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, tt.handle)
			p := newProvider(t, up.URL, func(c *openai.Config) { c.MaxRetries = -1 })
			_, err := p.Stream(t.Context(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, func(string) {})
			checkErr(t, err, tt.wantIs, tt.wantMsg)
		})
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			writeJSON(w, 429, `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`)
			return
		}
		writeJSON(w, 200, completion(`{"role":"assistant","content":"ok"}`, "stop"))
	})
	p := newProvider(t, up.URL, nil)
	start := time.Now()
	got, err := p.Complete(t.Context(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
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
		{name: "500 after retries", status: 500, body: `{"error":{"message":"boom","type":"server_error"}}`,
			wantIs: llm.ErrUnavailable, wantMsg: "500", wantReqs: 2},
		{name: "502 html", status: 502, body: `<html>bad gateway</html>`, contentTyp: "text/html",
			wantIs: llm.ErrUnavailable, wantMsg: "502", wantReqs: 2},
		{name: "429 after retries", status: 429, header: map[string]string{"Retry-After-Ms": "10"},
			body: `{"error":{"message":"slow down","type":"requests"}}`, wantIs: llm.ErrUnavailable, wantMsg: "429", wantReqs: 2},
		{name: "429 retry-after too long", status: 429, header: map[string]string{"Retry-After": "3600"},
			body: `{"error":{"message":"quota","type":"requests"}}`, wantIs: llm.ErrUnavailable, wantMsg: "429", wantReqs: 1},
		{name: "401", status: 401, body: `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`,
			wantIs: llm.ErrMisconfigured, wantMsg: "ASSISTANT_LLM_API_KEY", wantReqs: 1},
		{name: "403", status: 403, body: `{"error":{"message":"forbidden"}}`,
			wantIs: llm.ErrMisconfigured, wantMsg: "ASSISTANT_LLM_API_KEY", wantReqs: 1},
		{name: "404 model", status: 404, body: `{"error":{"message":"The model 'test-model' does not exist","type":"invalid_request_error","code":"model_not_found"}}`,
			wantIs: llm.ErrMisconfigured, wantMsg: "ASSISTANT_LLM_MODEL", wantReqs: 1},
		{name: "400 unknown model", status: 400, body: `{"error":{"message":"model 'test-model' not found, try pulling it first"}}`,
			wantIs: llm.ErrMisconfigured, wantMsg: "ASSISTANT_LLM_MODEL", wantReqs: 1},
		{name: "400 bad request", status: 400, body: `{"error":{"message":"messages: invalid role","type":"invalid_request_error"}}`,
			wantIs: nil, wantMsg: "400", wantReqs: 1},
		{name: "malformed json", status: 200, body: `{"id":`,
			wantIs: llm.ErrUnavailable, wantMsg: "openai", wantReqs: 1},
		{name: "no choices", status: 200, body: `{"id":"x","object":"chat.completion","choices":[]}`,
			wantIs: llm.ErrUnavailable, wantMsg: "no choices", wantReqs: 1},
		{name: "tool arguments not json", status: 200,
			body:   completion(`{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"search","arguments":"{oops"}}]}`, "tool_calls"),
			wantIs: llm.ErrUnavailable, wantMsg: "not a JSON object", wantReqs: 1},
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
			_, err := p.Complete(t.Context(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
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
	if strings.Contains(err.Error(), "sk-test") {
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
		p := newProvider(t, url, func(c *openai.Config) { c.MaxRetries = -1 })
		_, err := p.Complete(t.Context(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
		checkErr(t, err, llm.ErrUnavailable, "openai")
	})
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("timeout stream=%v", stream), func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, hang(t))
			p := newProvider(t, up.URL, func(c *openai.Config) { c.Timeout = 150 * time.Millisecond; c.MaxRetries = -1 })
			start := time.Now()
			req := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
			var err error
			if stream {
				_, err = p.Stream(t.Context(), req, func(string) {})
			} else {
				_, err = p.Complete(t.Context(), req)
			}
			checkErr(t, err, llm.ErrUnavailable, "timeout")
			if errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("error %q wraps context.DeadlineExceeded: callers would take it for their own", err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %s", d)
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
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "data: %s\n\n", chunk(`{"role":"assistant","content":"Hel"}`, ""))
				w.(http.Flusher).Flush()
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
			req := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
			var err error
			if tt.stream {
				_, err = p.Stream(ctx, req, func(string) {})
			} else {
				_, err = p.Complete(ctx, req)
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
	req := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}

	t.Run("opens after 5 failures", func(t *testing.T) {
		t.Parallel()
		up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			writeJSON(w, 503, `{"error":{"message":"overloaded"}}`)
		})
		p := newProvider(t, up.URL, func(c *openai.Config) { c.MaxRetries = -1 })
		for i := range llm.BreakerFailures {
			_, err := p.Complete(t.Context(), req)
			checkErr(t, err, llm.ErrUnavailable, "503")
			if i < llm.BreakerFailures-1 { // a cancelled call in between does not reset the count
				ctx, cancel := context.WithCancel(t.Context())
				cancel()
				if _, err := p.Complete(ctx, req); !errors.Is(err, context.Canceled) {
					t.Fatalf("cancelled call: %v", err)
				}
			}
		}
		hits := up.count()
		start := time.Now()
		for _, stream := range []bool{false, true} {
			var err error
			if stream {
				_, err = p.Stream(t.Context(), req, func(string) {})
			} else {
				_, err = p.Complete(t.Context(), req)
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
			writeJSON(w, 401, `{"error":{"message":"bad key"}}`)
		})
		p := newProvider(t, up.URL, nil)
		for range 2 * llm.BreakerFailures {
			_, err := p.Complete(t.Context(), req)
			checkErr(t, err, llm.ErrMisconfigured, "ASSISTANT_LLM_API_KEY")
		}
		if n := up.count(); n != 2*llm.BreakerFailures {
			t.Errorf("requests = %d, want every call to reach the server", n)
		}
	})
}

// TestEnvironmentIgnored: the SDK's OPENAI_* defaults must never apply.
func TestEnvironmentIgnored(t *testing.T) {
	elsewhere := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		writeJSON(w, 200, completion(`{"role":"assistant","content":"wrong server"}`, "stop"))
	})
	t.Setenv("OPENAI_BASE_URL", elsewhere.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_ORG_ID", "org-env")
	t.Setenv("OPENAI_PROJECT_ID", "proj-env")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Leak: yes")

	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		writeJSON(w, 200, completion(`{"role":"assistant","content":"ok"}`, "stop"))
	})
	p := newProvider(t, up.URL, func(c *openai.Config) { c.APIKey = "" }) // a local server without a key
	got, err := p.Complete(t.Context(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Content != "ok" || elsewhere.count() != 0 || up.count() != 1 {
		t.Fatalf("content %q, env server hits %d, configured server hits %d", got.Content, elsewhere.count(), up.count())
	}
	h := up.requests()[0].Header
	for _, k := range []string{"Authorization", "OpenAI-Organization", "OpenAI-Project", "X-Leak"} {
		if v := h.Get(k); v != "" {
			t.Errorf("header %s = %q leaked from the environment", k, v)
		}
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		cfg     openai.Config
		wantErr string // "" for success
	}{
		{"minimal local", openai.Config{BaseURL: "http://localhost:11434/v1", Model: "llama3"}, ""},
		{"default base URL", openai.Config{Model: "gpt-4o-mini", APIKey: "sk"}, ""},
		{"no model", openai.Config{BaseURL: "http://localhost:8000/v1"}, "ASSISTANT_LLM_MODEL"},
		{"relative base URL", openai.Config{BaseURL: "localhost:8000", Model: "m"}, "ASSISTANT_LLM_BASE_URL"},
		{"unparseable base URL", openai.Config{BaseURL: "http://[::1", Model: "m"}, "ASSISTANT_LLM_BASE_URL"},
		{"ftp base URL", openai.Config{BaseURL: "ftp://example.com", Model: "m"}, "ASSISTANT_LLM_BASE_URL"},
		{"negative timeout", openai.Config{Model: "m", Timeout: -time.Second}, "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := openai.New(tt.cfg)
			if tt.wantErr == "" {
				if err != nil || p == nil || p.Name() != "openai" {
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
		{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}, Tools: []llm.Tool{{Name: "t", Parameters: json.RawMessage(`[1]`)}}},
	} {
		_, err := p.Complete(t.Context(), req)
		if err == nil || errors.Is(err, llm.ErrUnavailable) || errors.Is(err, llm.ErrMisconfigured) {
			t.Errorf("request %+v: error %v, want a plain error", req, err)
		}
	}
}
