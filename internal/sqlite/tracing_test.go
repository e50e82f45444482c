package sqlite_test

import (
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/constraintlab/assistant/internal/assistant"
)

// TestRecordTurnSpans: in a traced request, a recorded turn is a span
// "record turn" with the transaction that wrote it beneath; a turn that
// cannot be stored fails its span.
func TestRecordTurnSpans(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "trace.db"))
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ctx, request := tp.Tracer("test").Start(t.Context(), "request")
	at := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	row := assistant.UsageRecord{At: at, Workspace: "default", KeyID: "key000000001", Endpoint: "POST /api/v1/chat", Status: 200}
	cite := assistant.CitationEvent{ResponseID: "resp_1", Workspace: "default", Source: "chat",
		Token: assistant.Token{Type: assistant.Framework, Slug: "okrs"}, At: at}
	if err := db.RecordTurn(ctx, row, []assistant.CitationEvent{cite}); err != nil {
		t.Fatal(err)
	}
	bad := cite
	bad.Token = assistant.Token{Type: "video", Slug: "x"}
	if err := db.RecordTurn(ctx, row, []assistant.CitationEvent{bad}); err == nil {
		t.Fatal("an invalid token was stored")
	}
	request.End()

	spans := rec.Ended()
	if len(spans) != 4 {
		t.Fatalf("spans: %d", len(spans))
	}
	tx, write, failed := spans[0], spans[1], spans[2]
	if write.Name() != "record turn" || write.Parent().SpanID() != request.SpanContext().SpanID() || write.Status().Code == codes.Error {
		t.Errorf("write span %q under %v, status %v", write.Name(), write.Parent().SpanID(), write.Status())
	}
	if tx.Name() != "transaction" || tx.Parent().SpanID() != write.SpanContext().SpanID() {
		t.Errorf("transaction span %q under %v", tx.Name(), tx.Parent().SpanID())
	}
	attrs := map[string]string{}
	for _, kv := range tx.Attributes() {
		attrs[string(kv.Key)] = kv.Value.String()
	}
	if attrs["db.system.name"] != "sqlite" || attrs["assistant.turns"] != "1" || attrs["assistant.citation_events"] != "1" {
		t.Errorf("transaction attributes: %v", attrs)
	}
	if failed.Name() != "record turn" || failed.Status().Code != codes.Error {
		t.Errorf("the failed write's span %q, status %v", failed.Name(), failed.Status())
	}
}
