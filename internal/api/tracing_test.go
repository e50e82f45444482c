package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/constraintlab/assistant/internal/llm"
	"github.com/constraintlab/assistant/internal/llm/builtin"
)

// reportingUsage is the builtin model answering as a hosted one would:
// with the usage an upstream reports.
type reportingUsage struct{ llm.Provider }

// QuotesOnly answers for the builtin it wraps (llm.Quoter), as the
// service's own wrappers do, so the traced turn's confidence is the
// untraced one's.
func (p reportingUsage) QuotesOnly() bool { return llm.QuotesOnly(p.Provider) }

func (p reportingUsage) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	resp, err := p.Provider.Complete(ctx, req)
	resp.Usage = llm.Usage{Model: "builtin-2026", InputTokens: 100 * len(req.Messages), OutputTokens: 20, FinishReason: "stop"}
	if len(resp.ToolCalls) > 0 {
		resp.Usage.FinishReason = "tool_calls"
	}
	return resp, err
}

func attrsOf(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

// TestChatTurnTrace runs a chat turn through the whole handler, traced,
// under a caller's traceparent: one trace, whose root is the request's
// server span, a child of the caller's span, named by the route; beneath
// it the model calls with the GenAI attributes, a span per tool call, the
// verification and the write of the turn with its transaction. The answer
// is the one an untraced turn gives, the log line names the trace, and
// no attribute holds the key, its id or the message.
func TestChatTurnTrace(t *testing.T) {
	const message = "Our packing station cannot keep up and orders ship late"
	body := `{"message":"` + message + `","mode":"operator","vertical":"ecommerce"}`

	plain := newFixture(t, 0, 0)
	untraced := plain.chat(t, plain.newKey(t, "acme"), body)
	if untraced.Code != 200 {
		t.Fatalf("untraced turn: %d %s", untraced.Code, untraced.Body)
	}

	f := newFixture(t, 0, 0)
	rec := tracetest.NewSpanRecorder()
	f.srv.Tracing = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	f.srv.Chat.Provider = llm.Traced(reportingUsage{builtin.New()}, "builtin")
	logs := f.withLog(t) // rebuilds the handler, now traced
	key := f.newKey(t, "acme")
	const callerTrace, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	r := f.chat(t, key, body, "Traceparent", "00-"+callerTrace+"-"+callerSpan+"-01", "Baggage", "tenant=acme")
	if r.Code != 200 {
		t.Fatalf("traced turn: %d %s", r.Code, r.Body)
	}
	if r.Body.String() != untraced.Body.String() {
		t.Errorf("tracing changed the answer:\n%s\nuntraced:\n%s", r.Body, untraced.Body)
	}

	spans := rec.Ended()
	t.Logf("spans, as they ended: %v", names(spans))
	var root sdktrace.ReadOnlySpan
	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		if got := s.SpanContext().TraceID().String(); got != callerTrace {
			t.Errorf("span %q is in trace %s, not the caller's", s.Name(), got)
		}
		if s.Parent().IsRemote() {
			if root != nil {
				t.Errorf("two roots: %q and %q", root.Name(), s.Name())
			}
			root = s
		}
		byName[s.Name()] = append(byName[s.Name()], s)
		for _, kv := range s.Attributes() {
			v := kv.Value.String()
			if strings.Contains(v, key) || strings.Contains(v, key[:20]) || strings.Contains(v, "packing station") {
				t.Errorf("span %q records %s = %q", s.Name(), kv.Key, v)
			}
		}
	}
	if root == nil {
		t.Fatalf("no span joined the caller's trace: %v", spans)
	}
	if root.Name() != "POST /api/v1/chat" || root.SpanKind() != trace.SpanKindServer || root.Parent().SpanID().String() != callerSpan {
		t.Errorf("root %q (%v) under %v", root.Name(), root.SpanKind(), root.Parent().SpanID())
	}
	ra := attrsOf(root)
	if ra["http.route"].AsString() != "/api/v1/chat" || ra["http.request.method"].AsString() != "POST" ||
		ra["http.response.status_code"].AsInt64() != 200 || ra["assistant.request_id"].AsString() == "" {
		t.Errorf("request span attributes: %v", root.Attributes())
	}
	if root.Status().Code == codes.Error {
		t.Errorf("request span failed: %v", root.Status())
	}
	underRoot := func(s sdktrace.ReadOnlySpan) bool { return s.Parent().SpanID() == root.SpanContext().SpanID() }

	models := byName["chat builtin"]
	if len(models) < 2 {
		t.Fatalf("model call spans: %d, want the tool loop's and the answer's (spans: %v)", len(models), names(spans))
	}
	for i, m := range models {
		a := attrsOf(m)
		if !underRoot(m) || m.SpanKind() != trace.SpanKindClient {
			t.Errorf("model span %d: kind %v, parent %v", i, m.SpanKind(), m.Parent().SpanID())
		}
		for k, want := range map[attribute.Key]any{
			"gen_ai.operation.name": "chat", "gen_ai.provider.name": "builtin", "gen_ai.system": "builtin",
			"gen_ai.request.model": "builtin", "gen_ai.response.model": "builtin-2026", "gen_ai.usage.output_tokens": int64(20),
		} {
			if got := a[k].AsInterface(); got != want {
				t.Errorf("model span %d: %s = %v, want %v", i, k, got, want)
			}
		}
		if a["gen_ai.usage.input_tokens"].AsInt64() < 200 || len(a["gen_ai.response.finish_reasons"].AsStringSlice()) != 1 {
			t.Errorf("model span %d: %v", i, m.Attributes())
		}
	}
	if got := attrsOf(models[len(models)-1])["gen_ai.response.finish_reasons"].AsStringSlice(); got[0] != "stop" {
		t.Errorf("the answer's finish reason: %v", got)
	}

	var tools []string
	for _, s := range spans {
		if strings.HasPrefix(s.Name(), "execute_tool ") {
			a := attrsOf(s)
			if !underRoot(s) || a["gen_ai.tool.name"].AsString() != strings.TrimPrefix(s.Name(), "execute_tool ") ||
				a["gen_ai.operation.name"].AsString() != "execute_tool" {
				t.Errorf("tool span %q: %v", s.Name(), s.Attributes())
			}
			tools = append(tools, a["gen_ai.tool.name"].AsString())
		}
	}
	if len(tools) == 0 || tools[0] == "" {
		t.Errorf("tool spans: %v", tools)
	}

	verify := byName["verify claims"]
	if len(verify) != 1 || !underRoot(verify[0]) || attrsOf(verify[0])["assistant.verify.claims"].AsInt64() == 0 {
		t.Errorf("verification spans: %v", verify)
	}

	write := byName["record turn"]
	if len(write) != 1 || !underRoot(write[0]) || attrsOf(write[0])["db.system.name"].AsString() != "sqlite" ||
		attrsOf(write[0])["assistant.citation_events"].AsInt64() == 0 {
		t.Fatalf("write spans: %v", write)
	}
	tx := byName["transaction"]
	if len(tx) != 1 || tx[0].Parent().SpanID() != write[0].SpanContext().SpanID() || attrsOf(tx[0])["assistant.turns"].AsInt64() != 1 {
		t.Errorf("transaction spans: %v", tx)
	}

	// Every span is the request's or beneath it, and ended before it.
	for _, s := range spans {
		if s != root && s.EndTime().After(root.EndTime()) {
			t.Errorf("span %q ended after the request", s.Name())
		}
	}

	var logged bool
	for _, l := range logs.lines(t) {
		if l["msg"] == "request" && l["route"] == "POST /api/v1/chat" {
			logged = l["trace_id"] == callerTrace
		}
	}
	if !logged {
		t.Error("the request's log line does not name its trace")
	}
}

// TestUnsampledCallerTracesNothing: a caller that sent its trace as not
// sampled (flags 00) gets no span recorded, under the default
// parent-based sampler.
func TestUnsampledCallerTracesNothing(t *testing.T) {
	f := newFixture(t, 0, 0)
	rec := tracetest.NewSpanRecorder()
	f.srv.Tracing = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	f.srv.Chat.Provider = llm.Traced(builtin.New(), "builtin")
	f.withLog(t)
	r := f.chat(t, f.newKey(t, "acme"), `{"message":"Our packing station cannot keep up"}`,
		"Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")
	if r.Code != 200 {
		t.Fatalf("%d %s", r.Code, r.Body)
	}
	if spans := rec.Ended(); len(spans) != 0 {
		t.Errorf("recorded %v", names(spans))
	}
}

// TestServerSpans: a span is named by the route, never by the path (which
// can carry an id), or by the method alone when no route matches; a 5xx
// fails it, a 4xx does not.
func TestServerSpans(t *testing.T) {
	f := newFixture(t, 0, 0)
	rec := tracetest.NewSpanRecorder()
	f.srv.Tracing = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	f.withLog(t)
	key := f.newKey(t, "acme")
	for _, tc := range []struct {
		method, target, name string
		status               int
		failed               bool
	}{
		{"GET", "/api/v1/chat/turns/turn_secretish", "GET /api/v1/chat/turns/{id}", 404, false},
		{"GET", "/nothing/here", "GET", 404, false},
		{"GET", "/healthz", "GET /healthz", 200, false},
	} {
		r := f.do(t, tc.method, tc.target, "", "Authorization", "Bearer "+key)
		if r.Code != tc.status {
			t.Fatalf("%s %s: %d", tc.method, tc.target, r.Code)
		}
		spans := rec.Ended()
		s := spans[len(spans)-1]
		if s.Name() != tc.name || (s.Status().Code == codes.Error) != tc.failed {
			t.Errorf("%s %s: span %q, status %v", tc.method, tc.target, s.Name(), s.Status())
		}
		if got := attrsOf(s)["http.response.status_code"].AsInt64(); got != int64(tc.status) {
			t.Errorf("%s %s: status attribute %d", tc.method, tc.target, got)
		}
		for _, kv := range s.Attributes() {
			if strings.Contains(kv.Value.String(), "secretish") {
				t.Errorf("the path is recorded: %s", kv.Key)
			}
		}
	}

	f.srv.Ready = pingFunc(func() error { return fmt.Errorf("database down") })
	f.withLog(t)
	if r := f.do(t, "GET", "/readyz", ""); r.Code != 503 {
		t.Fatalf("readyz: %d", r.Code)
	}
	spans := rec.Ended()
	if s := spans[len(spans)-1]; s.Name() != "GET /readyz" || s.Status().Code != codes.Error {
		t.Errorf("a 503: span %q, status %v", s.Name(), s.Status())
	}
}

func names(spans []sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name())
	}
	return out
}
