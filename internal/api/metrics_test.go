package api_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// After a chat turn, an MCP call, a refused request and a public one,
// /metrics carries the families an operator reads, passes the
// exposition linter (what promtool check metrics checks), and no label
// carries the key's id or workspace.
func TestMetricsFamilies(t *testing.T) {
	f := newFixture(t, 0, 0)
	key := f.newKey(t, "acme")
	if r := f.chat(t, key, `{"message":"Our packing station cannot keep up and orders ship late","mode":"operator"}`, "Accept", "text/event-stream"); r.Code != 200 {
		t.Fatalf("chat: %d %s", r.Code, r.Body)
	}
	if r := f.mcpPost(t, key, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); r.Code != 200 {
		t.Fatalf("mcp: %d", r.Code)
	}
	f.do(t, "GET", "/api/v1/key", "", "Authorization", "Bearer sk_service_notavalidkey0000000000000000000000")
	f.do(t, "GET", "/api/assistant/v1/catalog", "")

	r := f.do(t, "GET", "/metrics", "")
	if r.Code != http.StatusOK {
		t.Fatalf("/metrics: %d", r.Code)
	}
	body := r.Body.String()
	for _, want := range []string{
		`assistant_http_requests_total{method="POST",route="POST /api/v1/chat",status="200"} 1`,
		`assistant_limiter_decisions_total{limiter="key",outcome="allowed"} 2`, // the turn and the MCP call
		`assistant_limiter_decisions_total{limiter="auth_failures",outcome="allowed"}`,
		`assistant_mcp_calls_total{method="tools/list",outcome="ok",tool=""} 1`,
		`assistant_chat_turns_total{level=`,
		`assistant_chat_first_delta_seconds_count{mode="operator"} 1`,
		`assistant_build_info{goversion=`,
		`assistant_knowledge_entities{type="framework"}`,
		`assistant_knowledge_version `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	keyID := key[len("sk_service_") : len("sk_service_")+12]
	if strings.Contains(body, keyID) || strings.Contains(body, "acme") {
		t.Error("a key id or a workspace is in /metrics")
	}
	problems, err := testutil.GatherAndLint(f.srv.Metrics)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// ASSISTANT_METRICS_TOKEN: /metrics needs the bearer token; with the
// metrics served elsewhere, the main handler has no /metrics.
func TestMetricsProtection(t *testing.T) {
	f := newFixture(t, 0, 0)
	f.srv.MetricsToken, f.srv.Metrics = "s3cret-token", prometheus.NewRegistry()
	f.h, f.routes = f.srv.HandlerAndRoutes()
	if r := f.do(t, "GET", "/metrics", ""); r.Code != http.StatusUnauthorized || r.Header().Get("WWW-Authenticate") == "" {
		t.Errorf("/metrics without the token: %d", r.Code)
	}
	if r := f.do(t, "GET", "/metrics", "", "Authorization", "Bearer wrong"); r.Code != http.StatusUnauthorized {
		t.Errorf("/metrics with another token: %d", r.Code)
	}
	if r := f.do(t, "GET", "/metrics", "", "Authorization", "Bearer s3cret-token"); r.Code != http.StatusOK || !strings.Contains(r.Body.String(), "assistant_build_info") {
		t.Errorf("/metrics with the token: %d", r.Code)
	}
	f.srv.MetricsToken, f.srv.MetricsElsewhere, f.srv.Metrics = "", true, prometheus.NewRegistry()
	f.h, f.routes = f.srv.HandlerAndRoutes()
	if r := f.do(t, "GET", "/metrics", ""); r.Code != http.StatusNotFound {
		t.Errorf("/metrics served elsewhere, on the main handler: %d", r.Code)
	}
	if r := httpGet(t, f.srv.MetricsHandler()); r != http.StatusOK {
		t.Errorf("MetricsHandler: %d", r)
	}
}

func httpGet(t *testing.T, h http.Handler) int {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec.Code
}
