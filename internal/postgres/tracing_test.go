package postgres_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/postgres/pgtest"
)

// TestRecordTurnSpan: in a traced request, a recorded turn is a span
// "record turn" of PostgreSQL with its citation events; one that fails
// (its context cancelled) fails its span.
func TestRecordTurnSpan(t *testing.T) {
	db := open(t, pgtest.URL(t))
	if err := db.EnsureWorkspace(t.Context(), "acme"); err != nil {
		t.Fatal(err)
	}
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ctx, request := tp.Tracer("test").Start(t.Context(), "request")
	row := assistant.UsageRecord{At: clock(), Workspace: "acme", Endpoint: "POST /api/v1/chat", Status: 200}
	ev := []assistant.CitationEvent{{ResponseID: "resp_1", Workspace: "acme", Source: "test",
		Token: assistant.Token{Type: "framework", Slug: "theory-of-constraints"}, At: clock()}}
	if err := db.RecordTurn(ctx, row, ev); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := db.RecordTurn(cancelled, row, ev); err == nil {
		t.Fatal("a cancelled write succeeded")
	}
	request.End()

	spans := rec.Ended()
	if len(spans) != 3 {
		t.Fatalf("spans: %d", len(spans))
	}
	write, failed := spans[0], spans[1]
	attrs := map[string]string{}
	for _, kv := range write.Attributes() {
		attrs[string(kv.Key)] = kv.Value.String()
	}
	if write.Name() != "record turn" || write.Parent().SpanID() != request.SpanContext().SpanID() || write.Status().Code == codes.Error ||
		attrs["db.system.name"] != "postgresql" || attrs["assistant.citation_events"] != "1" {
		t.Errorf("write span %q under %v, status %v, attributes %v", write.Name(), write.Parent().SpanID(), write.Status(), attrs)
	}
	if failed.Name() != "record turn" || failed.Status().Code != codes.Error {
		t.Errorf("the failed write's span %q, status %v", failed.Name(), failed.Status())
	}
}
