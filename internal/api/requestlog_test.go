package api_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// lines returns the JSON log lines written since the last call.
func (s *syncBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s.b.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	s.b.Reset()
	return out
}

// withLog rebuilds the fixture's handler logging JSON at INFO into the
// buffer returned.
func (f *fixture) withLog(t *testing.T) *syncBuffer {
	t.Helper()
	buf := &syncBuffer{}
	f.srv.Logger = slog.New(slog.NewJSONHandler(buf, nil))
	f.srv.Metrics = prometheus.NewRegistry()
	f.h, f.routes = f.srv.HandlerAndRoutes()
	return buf
}

// Every request writes one line that names the route, the status, the
// duration in milliseconds and the client's address without its port;
// an authenticated one names the key's id and workspace, never the key.
// An /mcp request writes one line too: the MCP library's own lines are
// not written.
func TestRequestLogLines(t *testing.T) {
	f := newFixture(t, 0, 0)
	key := f.newKey(t, "acme")
	logs := f.withLog(t)

	check := func(name string, wantRoute string, wantKey bool) {
		t.Helper()
		lines := logs.lines(t)
		if len(lines) != 1 {
			t.Fatalf("%s: %d log lines, want 1: %v", name, len(lines), lines)
		}
		l := lines[0]
		if l["msg"] != "request" || l["route"] != wantRoute {
			t.Errorf("%s: line %v, want the request line of %s", name, l, wantRoute)
		}
		if _, ok := l["duration_ms"].(float64); !ok {
			t.Errorf("%s: duration_ms = %v, want a number", name, l["duration_ms"])
		}
		if _, ok := l["duration"]; ok {
			t.Errorf("%s: a duration without its unit is logged", name)
		}
		if l["remote"] != "192.0.2.1" { // httptest's peer, 192.0.2.1:1234
			t.Errorf("%s: remote = %v, want the address without its port", name, l["remote"])
		}
		if wantKey {
			if l["key_id"] != key[len("sk_service_"):len("sk_service_")+12] || l["workspace"] != "acme" {
				t.Errorf("%s: key_id %v, workspace %v, want the key's", name, l["key_id"], l["workspace"])
			}
		} else if _, ok := l["key_id"]; ok {
			t.Errorf("%s: key_id %v on a request without a key", name, l["key_id"])
		}
	}

	f.do(t, "GET", "/api/assistant/v1/catalog", "")
	check("public", "GET /api/assistant/v1/catalog", false)
	f.do(t, "GET", "/api/v1/key", "", "Authorization", "Bearer "+key)
	check("authenticated", "GET /api/v1/key", true)
	f.do(t, "GET", "/api/v1/key", "", "Authorization", "Bearer sk_service_notavalidkey0000000000000000000000")
	check("refused", "GET /api/v1/key", false)
	if r := f.mcpPost(t, key, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); r.Code != 200 {
		t.Fatalf("tools/list: %d %s", r.Code, r.Body)
	}
	check("mcp", "POST /mcp", true)
	f.do(t, "GET", "/api/v1/openai/models", "", "Authorization", "Bearer "+key)
	check("openai", "GET /api/v1/openai/models", true)

	f.do(t, "GET", "/api/v1/key", "", "Authorization", "Bearer "+key)
	logs.mu.Lock()
	all := logs.b.String()
	logs.mu.Unlock()
	if strings.Contains(all, key) || strings.Contains(all, key[len(key)-8:]) {
		t.Error("the key's secret is in the log")
	}
}
