package openai_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/constraintlab/assistant/internal/llm"
)

// TestTraceContextReachesTheUpstream: in a traced request, the model call
// is a client span with the GenAI attributes, and the upstream receives
// that span as its W3C parent (traceparent) with the caller's baggage;
// outside one, no trace header is sent.
func TestTraceContextReachesTheUpstream(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		writeJSON(w, 200, completion(`{"role":"assistant","content":"Plan X costs 10.","refusal":null}`, "stop"))
	})
	p := llm.Traced(newProvider(t, up.URL, nil), "test-model")
	req := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "What does plan X cost?"}}, MaxTokens: 64}

	if _, err := p.Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if h := up.requests()[0].Header; h.Get("Traceparent") != "" || h.Get("Baggage") != "" {
		t.Errorf("an untraced call sent traceparent %q, baggage %q", h.Get("Traceparent"), h.Get("Baggage"))
	}

	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	ctx, request := tp.Tracer("test").Start(t.Context(), "POST /api/v1/chat", trace.WithSpanKind(trace.SpanKindServer))
	member, _ := baggage.NewMember("tenant", "acme")
	bag, _ := baggage.New(member)
	if _, err := p.Complete(baggage.ContextWithBaggage(ctx, bag), req); err != nil {
		t.Fatal(err)
	}
	request.End()

	spans := exp.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("spans: %v", spans.Snapshots())
	}
	call := spans[0]
	if call.Name != "chat test-model" || call.SpanKind != trace.SpanKindClient || call.Parent.SpanID() != request.SpanContext().SpanID() {
		t.Errorf("model span %q (%v) under %v", call.Name, call.SpanKind, call.Parent.SpanID())
	}
	sent := up.requests()[1].Header.Get("Traceparent")
	want := "00-" + call.SpanContext.TraceID().String() + "-" + call.SpanContext.SpanID().String() + "-01"
	if sent != want {
		t.Errorf("traceparent = %q, want %q (the model call's span)", sent, want)
	}
	if got := up.requests()[1].Header.Get("Baggage"); got != "tenant=acme" {
		t.Errorf("baggage = %q", got)
	}
	attrs := map[attribute.Key]attribute.Value{}
	for _, kv := range call.Attributes {
		attrs[kv.Key] = kv.Value
	}
	for k, want := range map[attribute.Key]any{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.system": "openai",
		"gen_ai.request.model": "test-model", "gen_ai.response.model": "test-model", "gen_ai.request.max_tokens": int64(64),
		"gen_ai.usage.input_tokens": int64(10), "gen_ai.usage.output_tokens": int64(5),
	} {
		if got := attrs[k].AsInterface(); got != want {
			t.Errorf("%s = %v, want %v", k, got, want)
		}
	}
	if got := attrs["gen_ai.response.finish_reasons"].AsStringSlice(); !slices.Equal(got, []string{"stop"}) {
		t.Errorf("finish reasons = %v", got)
	}
}

// TestFailedModelCallSpan: an upstream that answers 401 ends the span with
// status Error and error.type misconfigured.
func TestFailedModelCallSpan(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		writeJSON(w, 401, `{"error":{"message":"bad key","type":"invalid_request_error"}}`)
	})
	p := llm.Traced(newProvider(t, up.URL, nil), "test-model")
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	ctx, request := tp.Tracer("test").Start(context.Background(), "request")
	if _, err := p.Complete(ctx, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}); err == nil {
		t.Fatal("no error")
	}
	request.End()
	call := exp.GetSpans()[0]
	if call.Status.Code != codes.Error {
		t.Errorf("status %v", call.Status)
	}
	errType := ""
	for _, kv := range call.Attributes {
		if kv.Key == "error.type" {
			errType = kv.Value.AsString()
		}
	}
	if errType != "misconfigured" {
		t.Errorf("error.type = %q, want misconfigured", errType)
	}
}
