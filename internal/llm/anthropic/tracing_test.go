package anthropic_test

import (
	"net/http"
	"slices"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/constraintlab/assistant/internal/llm"
)

// TestTraceContextReachesTheUpstream: in a traced request the Messages
// API receives the model call's span as its W3C parent, and the span
// carries the provider, the model, the tokens and the stop reason.
func TestTraceContextReachesTheUpstream(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		writeJSON(w, 200, message(`[{"type":"text","text":"Plan X costs 10."}]`, "end_turn"))
	})
	p := llm.Traced(newProvider(t, up.URL, nil), "claude-test")
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	ctx, request := tp.Tracer("test").Start(t.Context(), "request")
	if _, err := p.Complete(ctx, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "Plan X?"}}, MaxTokens: 64}); err != nil {
		t.Fatal(err)
	}
	request.End()
	call := exp.GetSpans()[0]
	want := "00-" + call.SpanContext.TraceID().String() + "-" + call.SpanContext.SpanID().String() + "-01"
	if got := up.requests()[0].Header.Get("Traceparent"); got != want {
		t.Errorf("traceparent = %q, want %q", got, want)
	}
	attrs := map[string]string{}
	for _, kv := range call.Attributes {
		attrs[string(kv.Key)] = kv.Value.String()
	}
	for k, v := range map[string]string{"gen_ai.provider.name": "anthropic", "gen_ai.request.model": "claude-test",
		"gen_ai.usage.input_tokens": "10", "gen_ai.usage.output_tokens": "5"} {
		if attrs[k] != v {
			t.Errorf("%s = %q, want %q", k, attrs[k], v)
		}
	}
	var reasons []string
	for _, kv := range call.Attributes {
		if kv.Key == "gen_ai.response.finish_reasons" {
			reasons = kv.Value.AsStringSlice()
		}
	}
	if !slices.Equal(reasons, []string{"end_turn"}) {
		t.Errorf("finish reasons = %v", reasons)
	}
}
