package api_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/constraintlab/assistant/internal/ratelimit"
)

const completionsPath = "/api/v1/openai/chat/completions"

type openAIErr struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

// assertOpenAIError checks an error response of the facade: the status,
// OpenAI's shape (and nothing of a problem document), the code and param.
func assertOpenAIError(t *testing.T, r response, status int, typ, code, param string) openAIErr {
	t.Helper()
	if r.Code != status {
		t.Fatalf("status %d, want %d: %s", r.Code, status, r.Body)
	}
	if ct := r.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	var raw map[string]json.RawMessage
	r.json(t, &raw)
	if len(raw) != 1 || raw["error"] == nil {
		t.Errorf("body %s is not {error: {...}}", r.Body)
	}
	var e openAIErr
	r.json(t, &e)
	if e.Error.Message == "" || e.Error.Type != typ {
		t.Errorf("error %+v, want type %s", e.Error, typ)
	}
	if got := deref(e.Error.Code); got != code {
		t.Errorf("code %q, want %q (%s)", got, code, r.Body)
	}
	if got := deref(e.Error.Param); got != param {
		t.Errorf("param %q, want %q (%s)", got, param, r.Body)
	}
	if !strings.Contains(r.Body.String(), `"param":`) || !strings.Contains(r.Body.String(), `"code":`) {
		t.Errorf("param and code must be present, null or not: %s", r.Body)
	}
	return e
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

type completion struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Index   int `json:"index"`
		Message struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Extension map[string]json.RawMessage `json:"x_assistant"`
}

type chunk struct {
	Object  string `json:"object"`
	Choices []struct {
		Delta struct {
			Role    string  `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Extension map[string]json.RawMessage `json:"x_assistant"`
}

// TestOpenAIFacadeEqualsNativeChat: the same turn, JSON and streamed, as
// POST /api/v1/chat answers it, with the rest of the turn in x_assistant.
func TestOpenAIFacadeEqualsNativeChat(t *testing.T) {
	f := newFixture(t, 0, 0)
	key := f.newKey(t, "ws_openai")
	auth := []string{"Authorization", "Bearer " + key}
	native := map[string]json.RawMessage{}
	f.chat(t, key, `{"message":"Orders ship late because packing cannot keep up","mode":"support","vertical":"ecommerce",
		"history":[{"role":"user","content":"We sell furniture online"},{"role":"assistant","content":"Noted."}]}`).json(t, &native)
	var nativeText string
	json.Unmarshal(native["response"], &nativeText)

	body := `{"model":"assistant-support","vertical":"ecommerce","temperature":0.2,"messages":[
		{"role":"system","content":"You are a pirate."},
		{"role":"user","content":"We sell furniture online"},
		{"role":"assistant","content":[{"type":"text","text":"Noted."}]},
		{"role":"user","content":"Orders ship late because packing cannot keep up"}]}`
	r := f.do(t, "POST", completionsPath, body, auth...)
	if r.Code != 200 {
		t.Fatalf("completion %d %s", r.Code, r.Body)
	}
	var c completion
	r.json(t, &c)
	if c.Object != "chat.completion" || c.Model != "assistant-support" || !strings.HasPrefix(c.ID, "chatcmpl-") || len(c.Choices) != 1 ||
		c.Choices[0].Message.Role != "assistant" || c.Choices[0].FinishReason != "stop" {
		t.Errorf("completion %+v", c)
	}
	if c.Choices[0].Message.Content != nativeText || !citesKnowledge.MatchString(nativeText) {
		t.Errorf("content %q\nnative %q", c.Choices[0].Message.Content, nativeText)
	}
	for _, field := range []string{"reasoning_trace", "rag_hits", "confidence"} {
		if !jsonEqual(string(c.Extension[field]), string(native[field])) {
			t.Errorf("x_assistant.%s %s\nnative %s", field, c.Extension[field], native[field])
		}
	}

	// Streamed: the deltas add up to the same text; the closing chunk has
	// finish_reason stop and the extension; then the usage chunk asked for
	// and [DONE].
	stream := strings.Replace(body, `"model"`, `"stream":true,"stream_options":{"include_usage":true},"model"`, 1)
	r = f.do(t, "POST", completionsPath, stream, auth...)
	if r.Code != 200 || !strings.HasPrefix(r.Header().Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream %d %s", r.Code, r.Header().Get("Content-Type"))
	}
	var text strings.Builder
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(r.Body.String()))
	for sc.Scan() {
		if l, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			lines = append(lines, l)
		} else if sc.Text() != "" {
			t.Errorf("unexpected line %q", sc.Text())
		}
	}
	if len(lines) < 3 || lines[len(lines)-1] != "[DONE]" {
		t.Fatalf("stream lines %v", lines)
	}
	// include_usage: the usage chunk, with no choice, comes before [DONE].
	if usage := lines[len(lines)-2]; !strings.Contains(usage, `"choices":[],"usage":{`) {
		t.Errorf("the chunk before [DONE] is %s, want the usage chunk", usage)
	}
	var last chunk
	for i, l := range lines[:len(lines)-2] {
		var ch chunk
		if err := json.Unmarshal([]byte(l), &ch); err != nil || ch.Object != "chat.completion.chunk" || len(ch.Choices) != 1 {
			t.Fatalf("chunk %d %s: %v", i, l, err)
		}
		if i == 0 && ch.Choices[0].Delta.Role != "assistant" {
			t.Errorf("first chunk %s has no role", l)
		}
		if ch.Choices[0].Delta.Content != nil {
			text.WriteString(*ch.Choices[0].Delta.Content)
		}
		last = ch
	}
	if text.String() != nativeText {
		t.Errorf("streamed %q\nnative %q", text.String(), nativeText)
	}
	if fr := last.Choices[0].FinishReason; fr == nil || *fr != "stop" || !jsonEqual(string(last.Extension["confidence"]), string(native["confidence"])) {
		t.Errorf("closing chunk %+v", last)
	}
}

func TestOpenAIModels(t *testing.T) {
	f := newFixture(t, 0, 0)
	key := f.newKey(t, "ws_models")
	auth := []string{"Authorization", "Bearer " + key}
	var list struct {
		Object string
		Data   []struct{ ID, Object, OwnedBy string }
	}
	f.do(t, "GET", "/api/v1/openai/models", "", auth...).json(t, &list)
	var ids []string
	for _, m := range list.Data {
		ids = append(ids, m.ID)
	}
	if want := []string{"assistant-operator", "assistant-customer", "assistant-support", "assistant-success"}; list.Object != "list" || !reflect.DeepEqual(ids, want) {
		t.Errorf("models %+v", list)
	}
	if r := f.do(t, "GET", "/api/v1/openai/models/assistant-success", "", auth...); r.Code != 200 || !strings.Contains(r.Body.String(), `"object":"model"`) {
		t.Errorf("one model: %d %s", r.Code, r.Body)
	}
	assertOpenAIError(t, f.do(t, "GET", "/api/v1/openai/models/gpt-4o", "", auth...), 404, "invalid_request_error", "model_not_found", "model")
}

// TestOpenAIFacadeErrors: every error of the surface in OpenAI's shape,
// whichever layer finds it.
func TestOpenAIFacadeErrors(t *testing.T) {
	f := newFixture(t, 0, 0)
	key := f.newKey(t, "ws_errors")
	auth := []string{"Authorization", "Bearer " + key}
	ok := `{"model":"assistant-operator","messages":[{"role":"user","content":"Our packing station cannot keep up"}]}`

	r := f.do(t, "POST", completionsPath, ok)
	assertOpenAIError(t, r, 401, "invalid_request_error", "invalid_api_key", "")
	if r.Header().Get("WWW-Authenticate") == "" || r.Header().Get("X-Request-Id") == "" {
		t.Errorf("401 headers %v", r.Header())
	}
	assertOpenAIError(t, f.do(t, "GET", "/api/v1/openai/models", "", "Authorization", "Bearer sk_service_wrong"), 401, "invalid_request_error", "invalid_api_key", "")

	cases := []struct {
		name, body       string
		status           int
		typ, code, param string
	}{
		{"unknown model", strings.Replace(ok, "assistant-operator", "gpt-4o", 1), 404, "invalid_request_error", "model_not_found", "model"},
		{"no model", `{"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "", "model"},
		{"no messages", `{"model":"assistant-operator","messages":[]}`, 400, "invalid_request_error", "", "messages"},
		{"bad role", `{"model":"assistant-operator","messages":[{"role":"pirate","content":"hi"}]}`, 400, "invalid_request_error", "", "messages[0].role"},
		{"last is the assistant's", `{"model":"assistant-operator","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yes"}]}`, 400, "invalid_request_error", "", "messages"},
		{"blank message", `{"model":"assistant-operator","messages":[{"role":"system","content":"x"},{"role":"user","content":"  "}]}`, 400, "invalid_request_error", "", "messages[1].content"},
		{"image", `{"model":"assistant-operator","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`, 400, "invalid_request_error", "", "messages[0].content"},
		{"n", `{"model":"assistant-operator","n":2,"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "", "n"},
		{"bad vertical", `{"model":"assistant-operator","vertical":"space","messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "", ""},
		{"not JSON", `{"model":`, 400, "invalid_request_error", "", ""},
		{"too large", `{"model":"assistant-operator","messages":[{"role":"user","content":"` + strings.Repeat("a", 300<<10) + `"}]}`, 413, "invalid_request_error", "request_too_large", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assertOpenAIError(t, f.do(t, "POST", completionsPath, c.body, auth...), c.status, c.typ, c.code, c.param)
		})
	}
	var history []string
	for i := range 51 {
		history = append(history, `{"role":"user","content":"turn `+strings.Repeat("x", i)+`"}`)
	}
	long := `{"model":"assistant-operator","messages":[` + strings.Join(history, ",") + `,{"role":"user","content":"and now?"}]}`
	assertOpenAIError(t, f.do(t, "POST", completionsPath, long, auth...), 400, "invalid_request_error", "", "messages")

	assertOpenAIError(t, f.do(t, "GET", "/api/v1/openai/nothing", "", auth...), 404, "invalid_request_error", "not_found", "")
	assertOpenAIError(t, f.do(t, "GET", completionsPath, "", auth...), 405, "invalid_request_error", "method_not_allowed", "")
	// The rest of the API keeps its problem documents.
	assertProblem(t, f.do(t, "GET", "/api/v1/nothing", "", auth...), 404)
}

// TestOpenAIFacadeSharesTheKeyLimit: completions count in the key's chat
// window; past it, a 429 in OpenAI's shape with Retry-After.
func TestOpenAIFacadeSharesTheKeyLimit(t *testing.T) {
	f := newFixture(t, 0, 0)
	f.srv.ChatLimiter, f.srv.ChatRateLimit = ratelimit.NewSlidingWindow(2, time.Minute, f.clock.Now), 2
	f.srv.Metrics = prometheus.NewRegistry()
	f.h, f.routes = f.srv.HandlerAndRoutes()
	log := &turnLog{AccessStore: f.srv.Access}
	f.srv.Access = log
	key := f.newKey(t, "ws_limit")
	auth := []string{"Authorization", "Bearer " + key}
	ok := `{"model":"assistant-customer","messages":[{"role":"user","content":"We get plenty of demos but few deals close"}]}`
	if r := f.chat(t, key, `{"message":"We get plenty of demos but few deals close"}`); r.Code != 200 {
		t.Fatalf("chat %d", r.Code)
	}
	if r := f.do(t, "POST", completionsPath, ok, auth...); r.Code != 200 || r.Header().Get("RateLimit") == "" {
		t.Fatalf("completion %d %v", r.Code, r.Header())
	}
	// Listing models is free.
	if r := f.do(t, "GET", "/api/v1/openai/models", "", auth...); r.Code != 200 {
		t.Fatalf("models %d", r.Code)
	}
	r := f.do(t, "POST", completionsPath, ok, auth...)
	assertOpenAIError(t, r, 429, "requests", "rate_limit_exceeded", "")
	if r.Header().Get("Retry-After") == "" {
		t.Errorf("429 without Retry-After")
	}
	if r := f.chat(t, key, `{"message":"hi"}`); r.Code != 429 {
		t.Errorf("chat after the facade: %d", r.Code)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	var facade int
	for _, row := range log.rows {
		if row.Endpoint == "POST "+completionsPath && row.Status == 200 {
			facade++
			if row.Mode != "customer" || row.Source != "openai" {
				t.Errorf("usage row %+v", row)
			}
		}
	}
	if facade != 1 || len(log.turns) != 2 {
		t.Errorf("rows %+v, turns %d", log.rows, len(log.turns))
	}
}

// TestOpenAIFacadeTurnFailures: a turn that cannot be recorded is a 500
// in OpenAI's shape; streamed, an error data line and no [DONE].
func TestOpenAIFacadeTurnFailures(t *testing.T) {
	f := newFixture(t, 0, 0)
	log := &turnLog{AccessStore: f.srv.Access, fail: errors.New("disk full")}
	f.srv.Access = log
	key := f.newKey(t, "ws_fail")
	auth := []string{"Authorization", "Bearer " + key}
	body := `{"model":"assistant-operator","messages":[{"role":"user","content":"Our packing station cannot keep up"}]}`
	assertOpenAIError(t, f.do(t, "POST", completionsPath, body, auth...), 500, "server_error", "", "")
	r := f.do(t, "POST", completionsPath, strings.Replace(body, `{"model"`, `{"stream":true,"model"`, 1), auth...)
	lines := strings.Split(strings.TrimSpace(r.Body.String()), "\n\n")
	last := lines[len(lines)-1]
	if r.Code != 200 || !strings.HasPrefix(last, `data: {"error":{`) || strings.Contains(r.Body.String(), "[DONE]") {
		t.Errorf("streamed failure: %d %s", r.Code, r.Body)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.rows) != 2 || log.rows[0].Status != 500 || log.rows[1].Status != 500 {
		t.Errorf("usage rows %+v", log.rows)
	}
}

// citesKnowledge finds a citation token of any entity type.
var citesKnowledge = regexp.MustCompile(`\[(framework|paper|blog):[a-z0-9_-]+\]`)
