package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/constraintlab/assistant/internal/ratelimit"
)

// mcpPost sends one raw POST to /mcp with key, without MCP-Protocol-Version
// unless the caller adds it.
func (f *fixture) mcpPost(t *testing.T, key, body string, header ...string) response {
	t.Helper()
	h := append([]string{"Accept", "application/json, text/event-stream", "Authorization", "Bearer " + key}, header...)
	return f.do(t, "POST", "/mcp", body, h...)
}

// rpcError decodes the JSON-RPC error of an /mcp answer.
func rpcError(t *testing.T, r response) (id json.RawMessage, code int, message string) {
	t.Helper()
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.Body.Bytes(), &m); err != nil || m.Error == nil {
		t.Fatalf("not a JSON-RPC error (%d %s): %s", r.Code, r.Header().Get("Content-Type"), r.Body)
	}
	return m.ID, m.Error.Code, m.Error.Message
}

// batchOf is a JSON-RPC batch of n copies of msg (with ids 0..n-1).
func batchOf(n int, msg string) string {
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,%s}`, i, msg)
	}
	b.WriteString("]")
	return b.String()
}

// A 53 KB batch of resources/list, sent without MCP-Protocol-Version (the
// SDK would then accept batches), is refused with a JSON-RPC error before
// any call runs: the memory it costs stays far under 20 MiB (it was a
// 68 MB answer and about 420 MiB of memory).
func TestMCPRefusesBatchesCheaply(t *testing.T) {
	f := newFixture(t, 0, 0)
	key := f.newKey(t, "ws_batch")
	body := batchOf(1300, `"method":"resources/list"`)
	if len(body) < 53_000 {
		t.Fatalf("batch of %d bytes", len(body))
	}
	f.mcpPost(t, key, `{"jsonrpc":"2.0","id":1,"method":"ping"}`) // warm up
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var wg sync.WaitGroup
	answers := make([]response, 4)
	for i := range answers {
		wg.Go(func() { answers[i] = f.mcpPost(t, key, body) })
	}
	wg.Wait()
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("4 batches of %d bytes: %d KiB allocated in all (an upper bound of the peak rise)", len(body), allocated>>10)
	if allocated >= 20<<20 {
		t.Errorf("4 batches allocated %d MiB, want < 20 MiB", allocated>>20)
	}
	for _, r := range answers {
		if r.Code != 400 || r.Body.Len() > 1024 {
			t.Errorf("batch: status %d, %d bytes", r.Code, r.Body.Len())
		}
		if id, code, msg := rpcError(t, r); string(id) != "null" || code != -32600 || !strings.Contains(msg, "batch") {
			t.Errorf("batch: id %s, code %d, %q", id, code, msg)
		}
	}
	// The same with the protocol header of a version that allowed batches.
	r := f.mcpPost(t, key, batchOf(2, `"method":"tools/list"`), "MCP-Protocol-Version", "2025-03-26")
	if _, code, _ := rpcError(t, r); code != -32600 {
		t.Errorf("batch with protocol 2025-03-26: code %d", code)
	}
}

// Calls never share a usage row: a batch of 20 tool calls is refused (it
// raced on one row under -race before), and 20 calls at once leave 20
// rows, each naming its own tool.
func TestMCPOneUsageRowPerCall(t *testing.T) {
	f := newFixture(t, 0, 0)
	log := &turnLog{AccessStore: f.srv.Access}
	f.srv.Access = log
	key := f.newKey(t, "ws_rows")
	tools := []string{"search_knowledge", "resolve_citations"}
	args := map[string]string{
		"search_knowledge":  `{"query":"bottleneck"}`,
		"resolve_citations": `{"tokens":[{"type":"framework","slug":"theory-of-constraints"}]}`,
	}
	call := func(i int) string {
		name := tools[i%2]
		return fmt.Sprintf(`"method":"tools/call","params":{"name":%q,"arguments":%s}`, name, args[name])
	}
	var batch []string
	for i := range 20 {
		batch = append(batch, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,%s}`, i, call(i)))
	}
	if _, code, _ := rpcError(t, f.mcpPost(t, key, "["+strings.Join(batch, ",")+"]")); code != -32600 {
		t.Fatalf("batch of tool calls: code %d", code)
	}
	log.mu.Lock()
	log.rows = nil
	log.mu.Unlock()

	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			r := f.mcpPost(t, key, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,%s}`, i, call(i)))
			if r.Code != 200 || strings.Contains(r.Body.String(), `"isError":true`) {
				t.Errorf("call %d: %d %s", i, r.Code, r.Body)
			}
		})
	}
	wg.Wait()
	log.mu.Lock()
	defer log.mu.Unlock()
	count := map[string]int{}
	for _, row := range log.rows {
		count[row.Endpoint]++
	}
	for _, name := range tools {
		if n := count["POST /mcp tools/call "+name]; n != 10 {
			t.Errorf("%d rows for %s, want 10; rows by endpoint %v", n, name, count)
		}
	}
	if len(log.rows) != 20 {
		t.Errorf("%d usage rows, want 20", len(log.rows))
	}
}

// Protocol errors are JSON-RPC errors in the body; the client's mistakes
// are logged at WARN with the request id, never at ERROR.
func TestMCPProtocolErrorsAreJSONRPC(t *testing.T) {
	f := newFixture(t, 0, 0)
	var logs bytes.Buffer
	var mu sync.Mutex
	f.srv.Logger = slog.New(slog.NewJSONHandler(lockedWriter{&mu, &logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	f.srv.Metrics = prometheus.NewRegistry()
	f.h, f.routes = f.srv.HandlerAndRoutes()
	key := f.newKey(t, "ws_proto")
	for _, c := range []struct {
		name, body string
		status     int
		code       int
		id         string
	}{
		{"malformed JSON", `{"jsonrpc":"2.0","id":1,"method":`, 400, -32700, "null"},
		{"not JSON at all", `hello`, 400, -32700, "null"},
		{"unknown method", `{"jsonrpc":"2.0","id":7,"method":"tools/destroy"}`, 200, -32601, "7"},
		{"long unknown method", `{"jsonrpc":"2.0","id":"x","method":"` + strings.Repeat("m", 5000) + `"}`, 200, -32601, `"x"`},
		{"no jsonrpc member", `{"id":1,"method":"tools/list"}`, 400, -32600, "1"},
		{"not an object", `"tools/list"`, 400, -32600, "null"},
		{"missing params", `{"jsonrpc":"2.0","id":2,"method":"tools/call"}`, 400, -32600, "2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := f.mcpPost(t, key, c.body, "X-Request-Id", "req-"+strings.ReplaceAll(c.name, " ", "-"))
			if r.Code != c.status || r.Header().Get("Content-Type") != "application/json" {
				t.Errorf("status %d %s, want %d application/json", r.Code, r.Header().Get("Content-Type"), c.status)
			}
			id, code, msg := rpcError(t, r)
			if code != c.code || string(id) != c.id {
				t.Errorf("code %d id %s (%q), want %d id %s", code, id, msg, c.code, c.id)
			}
			if len([]rune(msg)) > 400 {
				t.Errorf("message of %d characters", len([]rune(msg)))
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(logs.String(), `"level":"ERROR"`) {
		t.Errorf("client mistakes logged at ERROR:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), `"level":"WARN","msg":"MCP request refused","request_id":"req-unknown-method"`) {
		t.Errorf("no WARN line with the request id:\n%s", logs.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// Every method that does work counts against the key's window, listing
// included; resources/list comes in pages with a cursor.
func TestMCPListingCountsAndIsPaginated(t *testing.T) {
	f := newFixture(t, 0, 0)
	f.srv.ChatLimiter, f.srv.ChatRateLimit = ratelimit.NewSlidingWindow(3, time.Minute, f.clock.Now), 3
	f.srv.Metrics = prometheus.NewRegistry()
	f.h, f.routes = f.srv.HandlerAndRoutes()
	key := f.newKey(t, "ws_list")
	r := f.mcpPost(t, key, `{"jsonrpc":"2.0","id":1,"method":"resources/list"}`)
	var page struct {
		Result struct {
			Resources  []mcp.Resource `json:"resources"`
			NextCursor string         `json:"nextCursor"`
		} `json:"result"`
	}
	r.json(t, &page)
	if len(page.Result.Resources) != 50 || page.Result.NextCursor == "" {
		t.Fatalf("first page: %d resources, cursor %q", len(page.Result.Resources), page.Result.NextCursor)
	}
	r = f.mcpPost(t, key, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"resources/list","params":{"cursor":%q}}`, page.Result.NextCursor))
	var next struct {
		Result struct {
			Resources []mcp.Resource `json:"resources"`
		} `json:"result"`
	}
	r.json(t, &next)
	if len(next.Result.Resources) == 0 || next.Result.Resources[0].URI == page.Result.Resources[0].URI {
		t.Errorf("second page: %+v", next.Result.Resources)
	}
	f.mcpPost(t, key, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	if _, code, _ := rpcError(t, f.mcpPost(t, key, `{"jsonrpc":"2.0","id":4,"method":"resources/templates/list"}`)); code != -32029 {
		t.Errorf("fourth listing: code %d, want -32029", code)
	}
	// The handshake is free.
	r = f.mcpPost(t, key, `{"jsonrpc":"2.0","id":5,"method":"ping"}`)
	if r.Code != 200 || strings.Contains(r.Body.String(), `"error"`) {
		t.Errorf("ping past the limit: %d %s", r.Code, r.Body)
	}
}

// No /mcp answer exceeds its bound: one that would is replaced by a
// JSON-RPC error; the largest answers of the default bound fit in it.
func TestMCPAnswersAreBounded(t *testing.T) {
	f := newFixture(t, 0, 0)
	key := f.newKey(t, "ws_bound")
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_knowledge","arguments":{"query":"the bottleneck of operations","limit":50}}}`
	r := f.mcpPost(t, key, big)
	if r.Code != 200 || r.Body.Len() > 1<<20 || r.Body.Len() < 4000 {
		t.Fatalf("search of 50: %d, %d bytes", r.Code, r.Body.Len())
	}
	size := r.Body.Len()
	f.srv.SetMCPResponseLimit(4000)
	f.srv.Metrics = prometheus.NewRegistry()
	f.h, f.routes = f.srv.HandlerAndRoutes()
	r = f.mcpPost(t, key, big)
	if r.Body.Len() > 4000 {
		t.Errorf("answer of %d bytes over a bound of 4000", r.Body.Len())
	}
	if id, code, _ := rpcError(t, r); code != -32013 || string(id) != "1" {
		t.Errorf("over the bound (%d bytes): code %d id %s", size, code, id)
	}
	_ = context.Background()
}
