package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/constraintlab/assistant/internal/llm"
)

// The contract test: real answers of every operation of the served
// OpenAPI document (successes, each event of a stream, and errors) are
// validated against the schema the document gives for their status and
// media type, with a JSON Schema 2020-12 validator (OpenAPI 3.1's schema
// dialect). A status the document does not list, a header it does not
// describe, or a body its schema refuses fails, so the document cannot
// drift from what is sent.

const contractDocURL = "https://assistant.test/openapi.json"

// documentedHeaders are the response headers that must be described in
// the document wherever they are sent.
var documentedHeaders = []string{"RateLimit", "RateLimit-Policy", "Retry-After", "X-Request-Id", "ETag", "Cache-Control", "WWW-Authenticate"}

type contract struct {
	doc      map[string]any
	compiler *jsonschema.Compiler
	schemas  map[string]*jsonschema.Schema
	seen     map[string]map[int]bool // operation -> statuses checked
}

func newContract(t *testing.T, f *fixture) *contract {
	t.Helper()
	r := f.do(t, "GET", "/api/assistant/openapi.json", "")
	if r.Code != 200 {
		t.Fatalf("openapi.json: %d", r.Code)
	}
	raw, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.Body.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(contractDocURL, raw); err != nil {
		t.Fatal(err)
	}
	return &contract{doc: raw.(map[string]any), compiler: c, schemas: map[string]*jsonschema.Schema{}, seen: map[string]map[int]bool{}}
}

func pointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// schemaAt compiles the schema at a JSON pointer of the document.
func (c *contract) schemaAt(t *testing.T, pointer string) *jsonschema.Schema {
	t.Helper()
	if s := c.schemas[pointer]; s != nil {
		return s
	}
	s, err := c.compiler.Compile(contractDocURL + "#" + pointer)
	if err != nil {
		t.Fatalf("compiling %s: %v", pointer, err)
	}
	c.schemas[pointer] = s
	return s
}

// resolve follows a local $ref of the document.
func (c *contract) resolve(v any) (any, string) {
	m, ok := v.(map[string]any)
	if !ok {
		return v, ""
	}
	ref, ok := m["$ref"].(string)
	if !ok {
		return v, ""
	}
	var cur any = c.doc
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		cur = cur.(map[string]any)[part]
	}
	return cur, strings.TrimPrefix(ref, "#")
}

func (c *contract) operation(t *testing.T, op string) (map[string]any, string) {
	t.Helper()
	method, path, _ := strings.Cut(op, " ")
	paths, _ := c.doc["paths"].(map[string]any)
	item, _ := paths[path].(map[string]any)
	o, _ := item[strings.ToLower(method)].(map[string]any)
	if o == nil {
		t.Fatalf("%s is not in the OpenAPI document", op)
	}
	return o, "/paths/" + pointerEscape(path) + "/" + strings.ToLower(method)
}

func (c *contract) validate(t *testing.T, what, pointer string, body []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Errorf("%s: body is not JSON: %v: %.300s", what, err, body)
		return
	}
	if err := c.schemaAt(t, pointer).Validate(v); err != nil {
		t.Errorf("%s: the body does not match the documented schema %s:\n%v\nbody: %.600s", what, pointer, err, body)
	}
}

// check validates one real response of op ("POST /api/v1/chat") against
// the document.
func (c *contract) check(t *testing.T, op string, r response) {
	t.Helper()
	o, opPointer := c.operation(t, op)
	if c.seen[op] == nil {
		c.seen[op] = map[int]bool{}
	}
	c.seen[op][r.Code] = true
	what := fmt.Sprintf("%s %d", op, r.Code)
	responses, _ := o["responses"].(map[string]any)
	key := strconv.Itoa(r.Code)
	doc, ok := responses[key]
	if !ok {
		t.Errorf("%s: status %d is not documented (documented: %v)", op, r.Code, slices.Sorted(maps.Keys(responses)))
		return
	}
	respPointer := opPointer + "/responses/" + key
	docResp, ref := c.resolve(doc)
	if ref != "" {
		respPointer = ref
	}
	resp := docResp.(map[string]any)

	// Headers: every documented required one is sent; every one of
	// documentedHeaders that is sent is documented.
	headers, _ := resp["headers"].(map[string]any)
	documented := map[string]bool{}
	for name, h := range headers {
		documented[http.CanonicalHeaderKey(name)] = true
		hm, _ := c.resolve(h)
		if req, _ := hm.(map[string]any)["required"].(bool); req && r.Header().Get(name) == "" {
			t.Errorf("%s: required header %s is not sent", what, name)
		}
	}
	for _, name := range documentedHeaders {
		if r.Header().Get(name) != "" && !documented[http.CanonicalHeaderKey(name)] {
			t.Errorf("%s: header %s is sent but not documented", what, name)
		}
	}

	content, _ := resp["content"].(map[string]any)
	if r.Body.Len() == 0 {
		if len(content) != 0 && r.Code != http.StatusNotModified {
			t.Errorf("%s: empty body, documented %v", what, slices.Sorted(maps.Keys(content)))
		}
		return
	}
	mt, _, err := mime.ParseMediaType(r.Header().Get("Content-Type"))
	if err != nil {
		t.Errorf("%s: Content-Type %q: %v", what, r.Header().Get("Content-Type"), err)
		return
	}
	media, ok := content[mt].(map[string]any)
	if !ok {
		t.Errorf("%s: media type %s is not documented (documented: %v)", what, mt, slices.Sorted(maps.Keys(content)))
		return
	}
	mediaPointer := respPointer + "/content/" + pointerEscape(mt)
	if mt != "text/event-stream" {
		c.validate(t, what, mediaPointer+"/schema", r.Body.Bytes())
		return
	}
	// A stream: each event's data is validated against the schema the
	// media type's x-events names for the event (an event with no name
	// is "message").
	events, _ := media["x-events"].(map[string]any)
	if len(events) == 0 {
		t.Errorf("%s: the stream's events are not described (x-events)", what)
		return
	}
	for _, ev := range parseSSE(t, r.Body.String()) {
		if _, ok := events[ev.name]; !ok {
			t.Errorf("%s: event %q is not documented (documented: %v)", what, ev.name, slices.Sorted(maps.Keys(events)))
			continue
		}
		if ev.name == "message" && ev.data == "[DONE]" {
			continue
		}
		c.validate(t, what+" event "+ev.name, mediaPointer+"/x-events/"+pointerEscape(ev.name), []byte(ev.data))
	}
}

// downProvider is a model provider that cannot answer.
type downProvider struct{}

func (downProvider) Name() string { return "down" }
func (downProvider) Complete(context.Context, llm.Request) (llm.Response, error) {
	return llm.Response{}, fmt.Errorf("connection refused: %w", llm.ErrUnavailable)
}

type sseEvent struct{ name, data string }

func parseSSE(t *testing.T, body string) []sseEvent {
	t.Helper()
	var out []sseEvent
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(nil, 4<<20)
	cur := sseEvent{name: "message"}
	var data []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if len(data) > 0 {
				cur.data = strings.Join(data, "\n")
				out = append(out, cur)
			}
			cur, data = sseEvent{name: "message"}, nil
		case strings.HasPrefix(line, "event:"):
			cur.name = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	if len(data) > 0 {
		cur.data = strings.Join(data, "\n")
		out = append(out, cur)
	}
	return out
}

// operations lists every operation of the document.
func (c *contract) operations() []string {
	var out []string
	for path, item := range c.doc["paths"].(map[string]any) {
		for method := range item.(map[string]any) {
			switch method {
			case "get", "post", "put", "patch", "delete":
				out = append(out, strings.ToUpper(method)+" "+path)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestContract sends real requests to every operation and validates
// every answer against the served document; at the end, every operation
// must have been checked with a success and an error.
func TestContract(t *testing.T) {
	f := newFixture(t, 0, 0)
	c := newContract(t, f)
	key := f.newKey(t, "ws_contract")
	auth := []string{"Authorization", "Bearer " + key}
	do := func(op, target, body string, header ...string) response {
		t.Helper()
		method, _, _ := strings.Cut(op, " ")
		r := f.do(t, method, target, body, header...)
		c.check(t, op, r)
		return r
	}
	authed := func(header ...string) []string { return append(slices.Clone(auth), header...) }

	// The public endpoints.
	do("GET /api/assistant/openapi.json", "/api/assistant/openapi.json", "")
	stats := do("GET /api/assistant/v1/knowledge-stats", "/api/assistant/v1/knowledge-stats", "")
	do("GET /api/assistant/v1/knowledge-stats", "/api/assistant/v1/knowledge-stats", "", "If-None-Match", stats.Header().Get("ETag"))
	do("POST /api/assistant/v1/resolve", "/api/assistant/v1/resolve",
		`{"tokens":[{"type":"framework","slug":"theory-of-constraints"},{"type":"paper","slug":"no-such-paper"},{"type":"nope","slug":"x"}]}`)
	do("POST /api/assistant/v1/resolve", "/api/assistant/v1/resolve", `{"tokens":[]}`)
	for _, body := range []string{`{"tokens":null}`, `{"tokens":[{"slug":"x"}]}`, `{"tokens":[{"type":"paper","slug":null}]}`} {
		if r := do("POST /api/assistant/v1/resolve", "/api/assistant/v1/resolve", body); r.Code != 400 {
			t.Errorf("resolve %s: %d, want 400", body, r.Code)
		}
	}
	// fetch's default Content-Type (and none): the body is read as JSON all the same.
	for _, ct := range []string{"text/plain;charset=UTF-8", "application/x-www-form-urlencoded"} {
		r := do("POST /api/assistant/v1/preview", "/api/assistant/v1/preview", `{"vertical":"saas","free_text":"churn is rising"}`, "Content-Type", ct)
		if r.Code != 200 {
			t.Errorf("preview with Content-Type %s: %d %s", ct, r.Code, r.Body)
		}
	}
	if r := do("POST /api/assistant/v1/preview", "/api/assistant/v1/preview", `vertical=saas`, "Content-Type", "text/plain"); r.Code != 400 {
		t.Errorf("preview with a body that is not JSON: %d, want 400", r.Code)
	}
	do("POST /api/assistant/v1/resolve", "/api/assistant/v1/resolve", `{"tokens":[`+strings.Repeat(`{"type":"framework","slug":"x"},`, 9000)+`{}]}`)
	do("GET /api/assistant/v1/search", "/api/assistant/v1/search?q=bottleneck&limit=3", "")
	do("GET /api/assistant/v1/search", "/api/assistant/v1/search?q=qqqqzzzz", "")
	do("GET /api/assistant/v1/search", "/api/assistant/v1/search?limit=0", "")
	do("GET /api/assistant/v1/leaderboard", "/api/assistant/v1/leaderboard?days=7&limit=5", "")
	do("GET /api/assistant/v1/leaderboard", "/api/assistant/v1/leaderboard?days=0", "")
	do("GET /api/assistant/v1/catalog", "/api/assistant/v1/catalog", "")
	do("POST /api/assistant/v1/preview", "/api/assistant/v1/preview", `{"vertical":"ecommerce","free_text":"orders ship late, packing cannot keep up"}`)
	do("POST /api/assistant/v1/preview", "/api/assistant/v1/preview", `{"vertical":"ecommerce","archetype_id":"nope"}`)
	do("POST /api/assistant/v1/preview", "/api/assistant/v1/preview", `{"vertical":"ecommerce"}`)

	// The key's operations.
	do("GET /api/v1/key", "/api/v1/key", "", auth...)
	do("GET /api/v1/key", "/api/v1/key", "")
	do("GET /api/v1/key", "/api/v1/key", "", "Authorization", "Bearer sk_service_wrong")
	for _, msg := range []string{
		"Our packing station cannot keep up and orders ship late",
		"What is the capital of France?",
	} {
		body := `{"message":` + strconv.Quote(msg) + `,"vertical":"ecommerce"}`
		do("POST /api/v1/chat", "/api/v1/chat", body, auth...)
		do("POST /api/v1/chat", "/api/v1/chat", body, authed("Accept", "text/event-stream")...)
	}
	// An asynchronous turn: 202 with its id, then its state; an unknown id.
	queued := do("POST /api/v1/chat", "/api/v1/chat", `{"message":"Our packing station cannot keep up"}`, authed("Prefer", "respond-async")...)
	var turn struct{ ID string }
	if err := json.Unmarshal(queued.Body.Bytes(), &turn); queued.Code != 202 || err != nil || turn.ID == "" {
		t.Errorf("asynchronous turn: %d %s", queued.Code, queued.Body)
	}
	do("GET /api/v1/chat/turns/{id}", "/api/v1/chat/turns/"+turn.ID, "", auth...)
	do("GET /api/v1/chat/turns/{id}", "/api/v1/chat/turns/turn_nosuchturn", "", auth...)
	do("POST /api/v1/chat", "/api/v1/chat", `{"message":""}`, auth...)
	do("POST /api/v1/chat", "/api/v1/chat", `{"message":"hi","mode":"pirate"}`, auth...)
	do("POST /api/v1/chat", "/api/v1/chat", `{"message":"hi"}`)
	do("POST /api/v1/verify", "/api/v1/verify",
		`{"text":"Waiting time explodes as utilization approaches one [paper:kingman-1961-heavy-traffic]. Kingman published it in 1973 [paper:kingman-1961-heavy-traffic]. Cats are mammals."}`, auth...)
	do("POST /api/v1/verify", "/api/v1/verify", `{"text":""}`, auth...)

	// The OpenAI-compatible facade.
	do("GET /api/v1/openai/models", "/api/v1/openai/models", "", auth...)
	do("GET /api/v1/openai/models", "/api/v1/openai/models", "")
	do("GET /api/v1/openai/models/{model}", "/api/v1/openai/models/assistant-support", "", auth...)
	do("GET /api/v1/openai/models/{model}", "/api/v1/openai/models/gpt-4o", "", auth...)
	completion := `{"model":"assistant-operator","messages":[{"role":"user","content":"Orders ship late because packing cannot keep up"}]}`
	do("POST /api/v1/openai/chat/completions", "/api/v1/openai/chat/completions", completion, auth...)
	do("POST /api/v1/openai/chat/completions", "/api/v1/openai/chat/completions",
		strings.Replace(completion, `"model"`, `"stream":true,"model"`, 1), auth...)
	do("POST /api/v1/openai/chat/completions", "/api/v1/openai/chat/completions", `{"model":"assistant-operator","messages":[]}`, auth...)
	do("POST /api/v1/openai/chat/completions", "/api/v1/openai/chat/completions", completion)
	do("POST /api/v1/openai/chat/completions", "/api/v1/openai/chat/completions",
		strings.Replace(completion, `"model"`, `"stream":true,"stream_options":{"include_usage":true},"model"`, 1), auth...)
	do("POST /api/v1/openai/chat/completions", "/api/v1/openai/chat/completions",
		strings.Replace(completion, `"model"`, `"response_format":{"type":"json_object"},"model"`, 1), auth...)
	responses := `{"model":"assistant-operator","instructions":"Be brief","input":[{"role":"user","content":"Orders ship late"},{"role":"assistant","content":[{"type":"output_text","text":"Where is the queue?"}]},{"role":"user","content":[{"type":"input_text","text":"Packing cannot keep up"}]}]}`
	do("POST /api/v1/openai/responses", "/api/v1/openai/responses", responses, auth...)
	do("POST /api/v1/openai/responses", "/api/v1/openai/responses", `{"model":"assistant-support","input":"Our support queue doubled","stream":true}`, auth...)
	do("POST /api/v1/openai/responses", "/api/v1/openai/responses", `{"model":"assistant-support","input":"x","previous_response_id":"resp_1"}`, auth...)
	do("POST /api/v1/openai/responses", "/api/v1/openai/responses", `{"model":"gpt-4o","input":"x"}`, auth...)
	do("POST /api/v1/openai/responses", "/api/v1/openai/responses", `{"model":"assistant-support","input":"x"}`)

	// Past the key's limit: 429 with its headers.
	lim := f.newKey(t, "ws_contract_limit")
	for range 60 {
		f.do(t, "GET", "/api/v1/key", "", "Authorization", "Bearer "+lim)
		f.do(t, "POST", "/api/v1/verify", `{"text":"x"}`, "Authorization", "Bearer "+lim)
	}
	do("POST /api/v1/verify", "/api/v1/verify", `{"text":"Cats are mammals."}`, "Authorization", "Bearer "+lim)
	do("POST /api/v1/chat", "/api/v1/chat", `{"message":"hi"}`, "Authorization", "Bearer "+lim)

	// The model provider down: 502 with Retry-After, before and after a
	// stream started.
	down := newFixture(t, 0, 0)
	down.srv.Chat.Provider = downProvider{}
	downAuth := []string{"Authorization", "Bearer " + down.newKey(t, "ws_down")}
	for op, call := range map[string][2]string{
		"POST /api/v1/chat":                    {"/api/v1/chat", `{"message":"Orders ship late"}`},
		"POST /api/v1/openai/chat/completions": {"/api/v1/openai/chat/completions", completion},
		"POST /api/v1/openai/responses":        {"/api/v1/openai/responses", `{"model":"assistant-operator","input":"Orders ship late"}`},
	} {
		method, _, _ := strings.Cut(op, " ")
		r := down.do(t, method, call[0], call[1], downAuth...)
		if r.Code != http.StatusBadGateway {
			t.Errorf("%s with the provider down: %d", op, r.Code)
		}
		c.check(t, op, r)
	}
	c.check(t, "POST /api/v1/chat", down.do(t, "POST", "/api/v1/chat", `{"message":"Orders ship late"}`, append(downAuth, "Accept", "text/event-stream")...))
	c.check(t, "POST /api/v1/openai/responses", down.do(t, "POST", "/api/v1/openai/responses", `{"model":"assistant-operator","input":"Orders ship late","stream":true}`, downAuth...))

	// The public limits: past the soft limit RateLimit headers, past the
	// hard limit 429.
	limited := newFixture(t, 1, 2)
	for range 3 {
		r := limited.do(t, "GET", "/api/assistant/v1/catalog", "")
		c.check(t, "GET /api/assistant/v1/catalog", r)
	}

	for _, op := range c.operations() {
		var ok, failed bool
		for code := range c.seen[op] {
			ok = ok || code < 300
			failed = failed || code >= 400
		}
		if !ok || (!failed && op != "GET /api/assistant/openapi.json" && op != "GET /api/assistant/v1/knowledge-stats") {
			t.Errorf("%s: the contract test checked statuses %v; want a success and an error", op, slices.Sorted(maps.Keys(c.seen[op])))
		}
	}
}
