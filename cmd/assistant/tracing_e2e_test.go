package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	collector "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TestServeExportsTraces runs serve with an OTLP endpoint: a chat turn
// sent under a caller's traceparent reaches a fake collector, by the time
// serve has stopped, as spans of the caller's trace: the request, the
// model calls, the tool calls, the verification and the write.
func TestServeExportsTraces(t *testing.T) {
	var mu sync.Mutex
	spans := map[string]string{} // name -> trace id
	collectorSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		req := &collector.ExportTraceServiceRequest{}
		if err := proto.Unmarshal(raw, req); err != nil {
			t.Errorf("%s %s: not an OTLP export: %v", r.Method, r.URL.Path, err)
		}
		mu.Lock()
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					spans[s.GetName()] = hex.EncodeToString(s.GetTraceId())
				}
			}
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collectorSrv.Close()
	// The SDK reads the exporter's settings from the process environment;
	// serve decides from its own whether tracing is on.
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collectorSrv.URL)
	dir := t.TempDir()
	base, stop := startServer(t, map[string]string{"ASSISTANT_DATA_DIR": dir, "OTEL_EXPORTER_OTLP_ENDPOINT": collectorSrv.URL})

	var out, errOut bytes.Buffer
	getenv := func(k string) string { return map[string]string{"ASSISTANT_DATA_DIR": dir}[k] }
	if err := run(context.Background(), []string{"keys", "create", "--workspace", "acme", "--name", "ci", "--json"}, getenv, strings.NewReader(""), &out, &errOut); err != nil {
		t.Fatalf("keys create: %v\n%s", err, errOut.String())
	}
	var created struct{ Key string }
	if err := json.Unmarshal(out.Bytes(), &created); err != nil {
		t.Fatal(err)
	}

	const callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	req, _ := http.NewRequest("POST", base+"/api/v1/chat", strings.NewReader(`{"message":"Our packing station cannot keep up and orders ship late","mode":"operator"}`))
	req.Header.Set("Authorization", "Bearer "+created.Key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Traceparent", "00-"+callerTrace+"-00f067aa0ba902b7-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("chat: %d", resp.StatusCode)
	}
	if err := stop(); err != nil {
		t.Fatalf("serve: %v", err)
	}

	mu.Lock()
	defer mu.Unlock()
	var names []string
	for name, trace := range spans {
		names = append(names, name)
		if trace != callerTrace {
			t.Errorf("span %q in trace %s, not the caller's", name, trace)
		}
	}
	slices.Sort(names)
	for _, want := range []string{"POST /api/v1/chat", "chat builtin", "execute_tool search_knowledge", "verify claims", "record turn", "transaction"} {
		if !slices.Contains(names, want) {
			t.Errorf("no span %q among %v", want, names)
		}
	}
}
