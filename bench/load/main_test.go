package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestMain lets the test binary play the roles the command runs itself in
// (bare, fake-openai), as the command does, so the smoke test can run.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "-role" {
		main()
		return
	}
	os.Exit(m.Run())
}

func TestPercentile(t *testing.T) {
	ms := func(xs ...int) []time.Duration {
		var out []time.Duration
		for _, x := range xs {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	// 1..100 ms, shuffled: the nearest rank is the p-th sample.
	var hundred []time.Duration
	for i := 100; i >= 1; i-- {
		hundred = append(hundred, time.Duration(i)*time.Millisecond)
	}
	for _, c := range []struct {
		samples []time.Duration
		p       float64
		want    time.Duration
	}{
		{nil, 50, 0},
		{ms(7), 50, 7 * time.Millisecond},
		{ms(7), 99, 7 * time.Millisecond},
		{ms(4, 1, 3, 2), 50, 2 * time.Millisecond},
		{ms(4, 1, 3, 2), 99, 4 * time.Millisecond},
		{ms(4, 1, 3, 2), 100, 4 * time.Millisecond},
		{slices.Clone(hundred), 50, 50 * time.Millisecond},
		{slices.Clone(hundred), 99, 99 * time.Millisecond},
		{slices.Clone(hundred), 99.5, 100 * time.Millisecond},
		{slices.Clone(hundred), 1, time.Millisecond},
	} {
		if got := percentile(c.samples, c.p); got != c.want {
			t.Errorf("percentile(%d samples, %v) = %v, want %v", len(c.samples), c.p, got, c.want)
		}
	}
}

func TestMedian(t *testing.T) {
	xs := []float64{3, 1, 2}
	if got := median(xs); got != 2 {
		t.Errorf("median(3,1,2) = %v", got)
	}
	if !slices.Equal(xs, []float64{3, 1, 2}) {
		t.Errorf("median changed its argument: %v", xs)
	}
	if got := median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("median(4,1,3,2) = %v", got)
	}
	if got := median(nil); got != 0 {
		t.Errorf("median() = %v", got)
	}
}

// TestMedians: each figure of a row is the median over the repeats, an
// outlier repeat does not move it, and errors are the total.
func TestMedians(t *testing.T) {
	run := func(rps, p50, p99, ratio float64, errs int) []result {
		return []result{{Name: "stats", Endpoint: "GET /s", Connections: 32, Requests: int(rps), RPS: rps, P50Ms: p50, P99Ms: p99, Ratio: ratio, Errors: errs, Non2xx: errs}}
	}
	got := medians([][]result{run(100, 1, 9, 0.5, 0), run(10, 50, 90, 0.05, 3), run(120, 2, 8, 0.6, 0)})
	want := result{Name: "stats", Endpoint: "GET /s", Connections: 32, Requests: 100, RPS: 100, P50Ms: 2, P99Ms: 9, Ratio: 0.5, Errors: 3, Non2xx: 3}
	if len(got) != 1 || got[0] != want {
		t.Errorf("medians = %+v, want %+v", got, want)
	}
	if medians(nil) != nil {
		t.Error("medians of no run is not nil")
	}
}

func TestSetRatios(t *testing.T) {
	rs := []result{{Name: "bare", RPS: 900}, {Name: "stats", RPS: 500}, {Name: "bare-end", RPS: 1100}}
	setRatios(rs)
	if rs[0].Ratio != 0.9 || rs[1].Ratio != 0.5 || rs[2].Ratio != 1.1 {
		t.Errorf("ratios: %+v", rs)
	}
}

// TestReportJSON: the names and nesting of the JSON result, which other
// tools and the docs read.
func TestReportJSON(t *testing.T) {
	rs := []result{{Name: "bare", Endpoint: "GET /", Connections: 32, Requests: 10, RPS: 2, P50Ms: 1, P99Ms: 2, Ratio: 1, ServerCPUMsPerReq: 0.5, ClientCPUMsPerReq: 0.25}}
	rep := report{
		Date: "2026-01-02T03:04:05Z", Commit: "abc",
		Machine:  machine{GOOS: "linux", GOARCH: "amd64", CPUs: 2, Go: "go1", LoadAvgStart: []float64{1, 2, 3}, LoadAvgEnd: []float64{1, 2, 3}},
		Settings: settings{Duration: "5s", Warmup: "1s", Repeat: 1, Conns: 32, ChatConns: 4, UpstreamLatency: "50ms", Citations: 10},
		Rows:     rs, Runs: [][]result{rs},
	}
	path := filepath.Join(t.TempDir(), "sub", "r.json")
	if err := writeJSON(path, rep); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	keys := func(m any) []string {
		var ks []string
		for k := range m.(map[string]any) {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	for _, c := range []struct {
		obj  any
		want []string
	}{
		{doc, []string{"commit", "date", "machine", "rows", "runs", "settings"}},
		{doc["machine"], []string{"cpus", "go", "goarch", "goos", "load_avg_end", "load_avg_start"}},
		{doc["settings"], []string{"chat_conns", "citations", "conns", "duration", "repeat", "upstream_latency", "warmup"}},
		{doc["rows"].([]any)[0], []string{"client_cpu_ms_per_req", "connections", "endpoint", "errors", "name", "non_2xx", "p50_ms", "p99_ms", "ratio", "requests", "rps", "server_cpu_ms_per_req", "transport_errors"}},
		{doc["runs"].([]any)[0].([]any)[0], []string{"client_cpu_ms_per_req", "connections", "endpoint", "errors", "name", "non_2xx", "p50_ms", "p99_ms", "ratio", "requests", "rps", "server_cpu_ms_per_req", "transport_errors"}},
	} {
		if got := keys(c.obj); !slices.Equal(got, c.want) {
			t.Errorf("keys %v, want %v", got, c.want)
		}
	}
}

// TestCPUTime: the CPU time of a process grows as it works (Linux).
func TestCPUTime(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	before, ok := cpuTime(os.Getpid())
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
	}
	after, ok2 := cpuTime(os.Getpid())
	if !ok || !ok2 || after <= before {
		t.Errorf("cpu time %v then %v (%v %v)", before, after, ok, ok2)
	}
	if _, ok := cpuTime(-1); ok {
		t.Error("a process that does not exist has a CPU time")
	}
}

// joinNames lists the rows' names, comma-separated.
func joinNames(rs []row) string {
	var n []string
	for _, r := range rs {
		n = append(n, r.name)
	}
	return strings.Join(n, ",")
}

func TestSelectRows(t *testing.T) {
	if rs, err := selectRows(" stats, chat-openai-1 "); err != nil || joinNames(rs) != "bare,stats,chat-openai-1,bare-end" {
		t.Errorf("selectRows: %s, %v", joinNames(rs), err)
	}
	if rs, _ := selectRows(""); len(rs) != len(rows) {
		t.Errorf("no -only selects %d rows of %d", len(rs), len(rows))
	}
	if _, err := selectRows("stats,nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("an unknown row: %v", err)
	}
}

// TestLoad: every request after the warm-up is counted, non-2xx answers
// are errors, and the rate is computed over the measured time.
func TestLoad(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%4 == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		w.Write([]byte("{}"))
	}))
	defer srv.Close()
	client := newClient(2)
	m := load(context.Background(), []endpoint{{client, target{method: "GET", url: srv.URL}}}, 2, 50*time.Millisecond, 200*time.Millisecond, serverProbes(os.Getpid()))
	r := summarize(m)
	if r.Requests == 0 || r.RPS <= 0 || r.P50Ms <= 0 || r.P99Ms < r.P50Ms {
		t.Fatalf("figures: %+v", r)
	}
	if r.Non2xx == 0 || r.Errors != r.Non2xx || r.TransportErrors != 0 || r.FirstError != "status 503" {
		t.Errorf("errors: %+v", r)
	}
	if int64(r.Requests) >= n.Load() {
		t.Errorf("%d requests measured of %d sent: the warm-up was counted", r.Requests, n.Load())
	}
	if m.elapsed < 200*time.Millisecond || m.elapsed > 2*time.Second {
		t.Errorf("elapsed %v", m.elapsed)
	}
}

// TestFakeOpenAI: the fake upstream plays a turn in the Chat Completions
// wire format: a tool call, an answer citing the tool's hits, and the
// judge's strict JSON.
func TestFakeOpenAI(t *testing.T) {
	srv := httptest.NewServer(&fakeOpenAI{latency: 5 * time.Millisecond})
	defer srv.Close()
	call := func(body string) map[string]any {
		t.Helper()
		start := time.Now()
		resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if time.Since(start) < 5*time.Millisecond {
			t.Error("answered before its latency")
		}
		var out struct {
			Choices []struct {
				Message      map[string]any
				FinishReason string `json:"finish_reason"`
			}
		}
		json.NewDecoder(resp.Body).Decode(&out)
		if resp.StatusCode != 200 || len(out.Choices) != 1 {
			t.Fatalf("status %d, %+v", resp.StatusCode, out)
		}
		msg := out.Choices[0].Message
		msg["finish_reason"] = out.Choices[0].FinishReason
		return msg
	}

	first := call(`{"model":"m","messages":[{"role":"system","content":"persona"},{"role":"user","content":"orders ship late"}],"tools":[]}`)
	calls, _ := first["tool_calls"].([]any)
	if first["finish_reason"] != "tool_calls" || len(calls) != 1 {
		t.Fatalf("first call: %+v", first)
	}
	fn := calls[0].(map[string]any)["function"].(map[string]any)
	if fn["name"] != "search_knowledge" || fn["arguments"] != `{"query":"orders ship late"}` {
		t.Errorf("tool call: %+v", fn)
	}

	hits := `{"query":"q","hits":[{"token":"framework:theory-of-constraints","summary":"Find the constraint. Then exploit it."},{"token":"paper:little-1961-queuing-formula","summary":"L equals lambda W."}]}`
	toolMsg, _ := json.Marshal(map[string]any{"role": "tool", "tool_call_id": "call_bench_1", "content": hits})
	second := call(`{"model":"m","messages":[{"role":"user","content":"q"},{"role":"assistant","content":null,"tool_calls":[]},` + string(toolMsg) + `]}`)
	want := "Find the constraint [framework:theory-of-constraints]. L equals lambda W [paper:little-1961-queuing-formula]."
	if second["finish_reason"] != "stop" || second["content"] != want {
		t.Errorf("answer: %+v", second)
	}

	prompt := "Sources:\n\n[S1] Theory of Constraints (framework:theory-of-constraints)\n- Theory of Constraints by Eliyahu M. Goldratt.\n- Find the constraint.\n" +
		"\n[S2] Little's Law (paper:little-1961-queuing-formula)\n- Little's Law by John Little, published in 1961.\n" +
		"\nClaims:\n1. Find the constraint. (check against: S1)\n2. L equals lambda W. (check against: S2, S1)\n\nReturn the JSON object with exactly 2 verdicts."
	judge, _ := json.Marshal(map[string]any{"model": "m", "messages": []any{
		map[string]any{"role": "system", "content": "You check claims against source passages, strictly."},
		map[string]any{"role": "user", "content": prompt},
	}})
	third := call(string(judge))
	var verdicts struct {
		Verdicts []struct {
			Claim    int
			Status   string
			Evidence string
			Score    float64
		}
	}
	if err := json.Unmarshal([]byte(third["content"].(string)), &verdicts); err != nil {
		t.Fatalf("judge reply: %v: %v", err, third["content"])
	}
	v := verdicts.Verdicts
	if len(v) != 2 || v[0].Claim != 1 || v[0].Evidence != "Theory of Constraints by Eliyahu M. Goldratt." ||
		v[1].Claim != 2 || v[1].Evidence != "Little's Law by John Little, published in 1961." || v[1].Status != "verified" {
		t.Errorf("verdicts: %+v", v)
	}

	resp, _ := http.Get(srv.URL + "/v1/models")
	if resp.StatusCode != 404 {
		t.Errorf("GET /v1/models: %d", resp.StatusCode)
	}
	resp.Body.Close()
}

// TestSmoke runs the command end to end on short rows: it builds and
// starts the service, the bare handler and the fake upstream, and every
// row must answer with no error.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the service (-short)")
	}
	out := filepath.Join(t.TempDir(), "latest.json")
	o := options{duration: 200 * time.Millisecond, warmup: 50 * time.Millisecond, repeat: 1, conns: 4, chatConns: 2,
		upstreamLatency: 5 * time.Millisecond, only: "stats,leaderboard,chat-openai-1", out: out, citations: 100}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := run(ctx, o); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep report
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&rep); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rep.Rows {
		names = append(names, r.Name)
		if r.Requests == 0 || r.RPS <= 0 || r.Errors != 0 || r.Ratio <= 0 {
			t.Errorf("row %+v", r)
		}
	}
	if strings.Join(names, ",") != "bare,stats,leaderboard,chat-openai-1,bare-end" || len(rep.Runs) != 1 {
		t.Errorf("rows %v, %d runs", names, len(rep.Runs))
	}
}
