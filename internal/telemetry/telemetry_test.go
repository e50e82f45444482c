package telemetry_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/baggage"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	collector "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/constraintlab/assistant/internal/telemetry"
)

func envOf(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestSetupIsOffUnlessAnEndpointIsSet(t *testing.T) {
	for name, vars := range map[string]map[string]string{
		"nothing set":   {},
		"other vars":    {"OTEL_SERVICE_NAME": "x", "OTEL_TRACES_SAMPLER": "always_on"},
		"blank":         {"OTEL_EXPORTER_OTLP_ENDPOINT": "  "},
		"sdk disabled":  {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "TRUE"},
		"exporter none": {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces", "OTEL_TRACES_EXPORTER": "none"},
	} {
		t.Run(name, func(t *testing.T) {
			tp, shutdown, err := telemetry.Setup(t.Context(), envOf(vars), "test")
			if err != nil || tp != nil {
				t.Fatalf("Setup = %v, %v; want no provider and no error", tp, err)
			}
			if err := shutdown(t.Context()); err != nil {
				t.Errorf("shutdown: %v", err)
			}
		})
	}
}

func TestSetupRefusesWhatItCannotExport(t *testing.T) {
	for name, vars := range map[string]map[string]string{
		"grpc":        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
		"traces grpc": {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"},
		"http/json":   {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
		"zipkin":      {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "zipkin"},
	} {
		t.Run(name, func(t *testing.T) {
			tp, _, err := telemetry.Setup(t.Context(), envOf(vars), "test")
			if err == nil || tp != nil {
				t.Fatalf("Setup = %v, %v; want an error", tp, err)
			}
		})
	}
	// The traces' own protocol wins over the general one.
	vars := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318",
		"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}
	tp, shutdown, err := telemetry.Setup(t.Context(), envOf(vars), "test")
	if err != nil || tp == nil {
		t.Fatalf("Setup = %v, %v; want a provider", tp, err)
	}
	shutdown(t.Context())
}

// TestSetupExportsOverOTLPHTTP runs the provider against a fake collector:
// the span ended before shutdown arrives at /v1/traces, as protobuf, from
// the service "assistant".
func TestSetupExportsOverOTLPHTTP(t *testing.T) {
	var mu sync.Mutex
	var got []*collector.ExportTraceServiceRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("collector got %s %s (%s)", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
		}
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				t.Error(err)
				return
			}
			body = zr
		}
		raw, _ := io.ReadAll(body)
		req := &collector.ExportTraceServiceRequest{}
		if err := proto.Unmarshal(raw, req); err != nil {
			t.Errorf("not an OTLP export: %v", err)
		}
		mu.Lock()
		got = append(got, req)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(nil)
	}))
	defer srv.Close()
	// The SDK reads its settings from the process environment.
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_SERVICE_NAME", "")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=test")
	t.Setenv("OTEL_TRACES_SAMPLER", "")

	tp, shutdown, err := telemetry.Setup(t.Context(), func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL}[k]
	}, "1.2.3")
	if err != nil || tp == nil {
		t.Fatalf("Setup = %v, %v", tp, err)
	}
	_, span := tp.Tracer("test").Start(t.Context(), "POST /api/v1/chat")
	span.End()
	if err := shutdown(t.Context()); err != nil {
		t.Fatalf("shutdown: %v", err)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 {
		t.Fatal("nothing exported by shutdown")
	}
	rs := got[0].GetResourceSpans()
	if len(rs) != 1 {
		t.Fatalf("resource spans: %v", rs)
	}
	resource := map[string]string{}
	for _, kv := range rs[0].GetResource().GetAttributes() {
		resource[kv.GetKey()] = kv.GetValue().GetStringValue()
	}
	for k, want := range map[string]string{"service.name": "assistant", "service.version": "1.2.3", "deployment.environment.name": "test"} {
		if resource[k] != want {
			t.Errorf("resource %s = %q, want %q (all: %v)", k, resource[k], want, resource)
		}
	}
	var names []string
	for _, ss := range rs[0].GetScopeSpans() {
		for _, s := range ss.GetSpans() {
			names = append(names, s.GetName())
		}
	}
	if len(names) != 1 || names[0] != "POST /api/v1/chat" {
		t.Errorf("spans exported: %v", names)
	}
}

func TestStartWithoutARecordingSpanAllocatesNothing(t *testing.T) {
	remote := trace.ContextWithRemoteSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled,
	}))
	for name, ctx := range map[string]context.Context{"no span": context.Background(), "remote span": remote} {
		allocs := testing.AllocsPerRun(100, func() {
			c, span := telemetry.Start(ctx, "x", trace.SpanKindInternal)
			if telemetry.Tracing(c) || span.IsRecording() {
				t.Fatal("a span was recorded")
			}
			span.End()
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations, want 0", name, allocs)
		}
	}
}

func TestStartOpensAChildOfTheRecordingSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ctx, parent := tp.Tracer("test").Start(t.Context(), "parent")
	if !telemetry.Tracing(ctx) {
		t.Fatal("Tracing is false under a recording span")
	}
	_, child := telemetry.Start(ctx, "child", trace.SpanKindClient)
	child.End()
	parent.End()
	ended := rec.Ended()
	if len(ended) != 2 || ended[0].Name() != "child" {
		t.Fatalf("ended spans: %v", ended)
	}
	c := ended[0]
	if c.Parent().SpanID() != parent.SpanContext().SpanID() || c.SpanContext().TraceID() != parent.SpanContext().TraceID() {
		t.Errorf("child %v is not a child of %v", c.Parent(), parent.SpanContext())
	}
	if c.SpanKind() != trace.SpanKindClient || c.InstrumentationScope().Name != telemetry.InstrumentationName {
		t.Errorf("child kind %v, scope %q", c.SpanKind(), c.InstrumentationScope().Name)
	}
}

func TestPropagatingSendsTheTraceContextAndBaggage(t *testing.T) {
	headers := make(chan http.Header, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { headers <- r.Header.Clone() }))
	defer srv.Close()
	client := &http.Client{Transport: telemetry.Propagating(nil)}
	send := func(ctx context.Context) http.Header {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, bytes.NewReader([]byte("{}")))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if len(req.Header) != 0 {
			t.Errorf("the caller's request was changed: %v", req.Header)
		}
		return <-headers
	}

	if h := send(t.Context()); h.Get("Traceparent") != "" || h.Get("Baggage") != "" {
		t.Errorf("an untraced call sent %q, %q", h.Get("Traceparent"), h.Get("Baggage"))
	}

	tp := sdktrace.NewTracerProvider()
	ctx, span := tp.Tracer("test").Start(t.Context(), "call")
	defer span.End()
	member, _ := baggage.NewMember("tenant", "acme")
	bag, _ := baggage.New(member)
	h := send(baggage.ContextWithBaggage(ctx, bag))
	sc := span.SpanContext()
	want := "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"
	if got := h.Get("Traceparent"); got != want {
		t.Errorf("traceparent = %q, want %q", got, want)
	}
	if got := h.Get("Baggage"); !strings.Contains(got, "tenant=acme") {
		t.Errorf("baggage = %q", got)
	}
}
