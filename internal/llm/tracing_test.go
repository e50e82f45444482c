package llm_test

import (
	"context"
	"fmt"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/constraintlab/assistant/internal/llm"
)

// TestTracedCostsNothingUntraced: outside a traced request the wrapper
// adds no allocation to a call.
func TestTracedCostsNothingUntraced(t *testing.T) {
	p := llm.Traced(fakeProvider{resp: llm.Response{Content: "ok"}}, "m")
	ctx := context.Background()
	req := llm.Request{MaxTokens: 10}
	if allocs := testing.AllocsPerRun(100, func() { p.Complete(ctx, req) }); allocs != 0 {
		t.Errorf("%v allocations per untraced call, want 0", allocs)
	}
}

// TestTracedFailure: a failed call's span has status Error and the
// error's class; a Streamer stays one.
func TestTracedFailure(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	ctx, parent := tp.Tracer("test").Start(context.Background(), "request")
	p := llm.Traced(fakeProvider{err: fmt.Errorf("%w: down", llm.ErrUnavailable)}, "m")
	if _, err := p.Complete(ctx, llm.Request{}); err == nil {
		t.Fatal("no error")
	}
	parent.End()
	s := exp.GetSpans()[0]
	if s.Name != "chat m" || s.Status.Code != codes.Error {
		t.Errorf("span %q status %v", s.Name, s.Status)
	}
	var errType string
	for _, kv := range s.Attributes {
		if kv.Key == "error.type" {
			errType = kv.Value.AsString()
		}
	}
	if errType != "unavailable" {
		t.Errorf("error.type = %q", errType)
	}
	if _, ok := llm.Traced(fakeStreamer{}, "m").(llm.Streamer); !ok {
		t.Error("a traced Streamer is no Streamer")
	}
}

type fakeStreamer struct{ fakeProvider }

func (p fakeStreamer) Stream(context.Context, llm.Request, func(string)) (llm.Response, error) {
	return p.resp, p.err
}
