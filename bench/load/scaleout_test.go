package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestScaleOutNeeds(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	found := func(name string) (string, error) {
		if strings.Contains(name, "/") {
			return name, nil
		}
		return "/usr/bin/" + name, nil
	}
	notFound := func(name string) (string, error) { return "", exec.ErrNotFound }
	const pg = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

	// The variable, and redis-server from the PATH.
	if u, r, err := scaleOutNeeds("", "", env("ASSISTANT_TEST_POSTGRES_URL", pg), found); err != nil || u != pg || r != "/usr/bin/redis-server" {
		t.Errorf("from the environment: %q %q %v", u, r, err)
	}
	// The flags win over the variable.
	if u, r, err := scaleOutNeeds("postgresql://other/db", "/opt/redis-server", env("ASSISTANT_TEST_POSTGRES_URL", pg), found); err != nil || u != "postgresql://other/db" || r != "/opt/redis-server" {
		t.Errorf("from the flags: %q %q %v", u, r, err)
	}
	for _, c := range []struct {
		name      string
		pg        string
		lookPath  func(string) (string, error)
		wants     []string
		wantsNots []string
	}{
		{"no database", "", found, []string{"ASSISTANT_TEST_POSTGRES_URL", "-postgres"}, []string{"redis-server ("}},
		{"no redis", pg, notFound, []string{"redis-server", "apt-get install redis-server"}, []string{"ASSISTANT_TEST_POSTGRES_URL"}},
		{"neither", "", notFound, []string{"ASSISTANT_TEST_POSTGRES_URL", "redis-server ("}, nil},
		{"not postgres", "mysql://u:secret@h/db", found, []string{"postgres://", "xxxxx"}, []string{"secret"}},
	} {
		_, _, err := scaleOutNeeds(c.pg, "", env(), c.lookPath)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		for _, w := range c.wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", c.name, err, w)
			}
		}
		for _, w := range c.wantsNots {
			if strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q has %q", c.name, err, w)
			}
		}
	}
}

// TestScaleOutRefuses: without PostgreSQL the mode fails at once (and so
// exits non-zero) instead of measuring less.
func TestScaleOutRefuses(t *testing.T) {
	t.Setenv("ASSISTANT_TEST_POSTGRES_URL", "")
	o := options{scaleout: true, duration: time.Second, repeat: 1, conns: 1, chatConns: 1, instances: 3, redisTimeout: 250 * time.Millisecond}
	err := runScaleOut(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "-scaleout needs") {
		t.Errorf("runScaleOut without a database: %v", err)
	}
}

func TestSelectScaleRows(t *testing.T) {
	if rs, err := selectScaleRows(""); err != nil || joinNames(rs) != "stats,resolve,chat-builtin,chat-builtin-1" {
		t.Errorf("default: %s, %v", joinNames(rs), err)
	}
	if rs, err := selectScaleRows("chat-builtin, leaderboard"); err != nil || joinNames(rs) != "leaderboard,chat-builtin" {
		t.Errorf("-only: %s, %v", joinNames(rs), err)
	}
	for _, bad := range []string{"chat-openai", "bare", "nope"} {
		if _, err := selectScaleRows(bad); err == nil || !strings.Contains(err.Error(), `"`+bad+`"`) {
			t.Errorf("-only %s: %v", bad, err)
		}
	}
}

// TestSetupOrder: over as many repeats as setups, each setup runs once in
// each position.
func TestSetupOrder(t *testing.T) {
	if got := setupOrder(0, 3); !slices.Equal(got, []int{0, 1, 2}) {
		t.Errorf("first repeat: %v", got)
	}
	positions := map[[2]int]int{}
	for i := range 3 {
		order := setupOrder(i, 3)
		sorted := slices.Sorted(slices.Values(order))
		if !slices.Equal(sorted, []int{0, 1, 2}) {
			t.Errorf("repeat %d: %v is not every setup once", i, order)
		}
		for pos, k := range order {
			positions[[2]int{k, pos}]++
		}
	}
	if len(positions) != 9 {
		t.Errorf("setup and position pairs: %v", positions)
	}
}

func TestSetBaselineRatios(t *testing.T) {
	rs := []result{
		{Setup: "sqlite-1", Name: "resolve", RPS: 400}, {Setup: "sqlite-1", Name: "chat-builtin", RPS: 50},
		{Setup: "postgres-redis-1", Name: "resolve", RPS: 300}, {Setup: "postgres-redis-1", Name: "chat-builtin", RPS: 55},
		{Setup: "postgres-redis-3", Name: "resolve", RPS: 200}, {Setup: "postgres-redis-3", Name: "stats", RPS: 10},
	}
	setBaselineRatios(rs)
	var got []float64
	for _, r := range rs {
		got = append(got, r.Ratio)
	}
	// stats has no baseline row: no ratio.
	if want := []float64{1, 1, 0.75, 1.1, 0.5, 0}; !slices.Equal(got, want) {
		t.Errorf("ratios %v, want %v", got, want)
	}
}

func TestSumMetric(t *testing.T) {
	text := `# HELP assistant_redis_fallback_decisions_total decisions without Redis
# TYPE assistant_redis_fallback_decisions_total counter
assistant_redis_fallback_decisions_total{limiter="chat"} 3
assistant_redis_fallback_decisions_total{limiter="public"} 1.2e+01
assistant_redis_fallback_decisions_total_other 100
assistant_redis_errors_total{op="chat"} 2
assistant_redis_up 1
`
	for name, want := range map[string]float64{
		"assistant_redis_fallback_decisions_total": 15,
		"assistant_redis_errors_total":             2,
		"assistant_redis_up":                       1,
		"assistant_missing":                        0,
	} {
		if got := sumMetric(text, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
}

func TestRoundRobin(t *testing.T) {
	one := roundRobin(1)
	for range 3 {
		if i := one(); i != 0 {
			t.Errorf("one endpoint: %d", i)
		}
	}
	next := roundRobin(3)
	counts := make([]atomic.Int64, 3)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 300 {
				counts[next()].Add(1)
			}
		})
	}
	wg.Wait()
	for i := range counts {
		if n := counts[i].Load(); n != 800 {
			t.Errorf("endpoint %d got %d of 2400", i, n)
		}
	}
}

// TestLoadSpreads: with several endpoints each gets its share of the
// requests, each over its own pool.
func TestLoadSpreads(t *testing.T) {
	var eps []endpoint
	counts := make([]atomic.Int64, 3)
	for i := range counts {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			counts[i].Add(1)
			w.Write([]byte("{}"))
		}))
		defer srv.Close()
		eps = append(eps, endpoint{newClient(4), target{method: "GET", url: srv.URL}})
	}
	r := summarize(load(context.Background(), eps, 4, 20*time.Millisecond, 150*time.Millisecond, nil))
	if r.Requests == 0 || r.Errors != 0 {
		t.Fatalf("figures: %+v", r)
	}
	var total int64
	for i := range counts {
		total += counts[i].Load()
	}
	for i := range counts {
		// Round robin: each within a few requests of a third (the workers
		// stop at the deadline wherever the counter is).
		if n := counts[i].Load(); n < total/3-4 || n > total/3+4 {
			t.Errorf("endpoint %d got %d of %d requests", i, n, total)
		}
	}
}

func TestCPUSince(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	before := cpuSample{"server": {1: ms(100), 2: ms(50)}, "postgres": {7: ms(10), 8: ms(30)}}
	// pid 9 started in between (counted from zero); 8 exited (not counted).
	after := cpuSample{"server": {1: ms(130), 2: ms(60)}, "postgres": {7: ms(15), 9: ms(20)}}
	got := cpuSince(before, after)
	if got["server"] != ms(40) || got["postgres"] != ms(25) || len(got) != 2 {
		t.Errorf("cpuSince = %v", got)
	}
}

func TestSampleCPUOptional(t *testing.T) {
	gone := []cpuProbe{{name: "x", pids: fixedPIDs(-1), optional: true}, {name: probeClient, pids: fixedPIDs(os.Getpid())}}
	if s, ok := sampleCPU(gone); !ok || len(s["x"]) != 0 || len(s[probeClient]) != 1 {
		t.Errorf("an optional probe's missing process: %v %v", s, ok)
	}
	gone[0].optional = false
	if _, ok := sampleCPU(gone); ok {
		t.Error("a required probe's missing process reads")
	}
}

func TestWithParams(t *testing.T) {
	got, err := withParams("postgres://postgres@127.0.0.1:5432/test?sslmode=disable", map[string]string{"search_path": "bench_x", "application_name": "assistant-bench_x"})
	if err != nil || got != "postgres://postgres@127.0.0.1:5432/test?application_name=assistant-bench_x&search_path=bench_x&sslmode=disable" {
		t.Errorf("withParams = %q, %v", got, err)
	}
}

// TestScaleMedians: the medians keep the setup and total the fallbacks.
func TestScaleMedians(t *testing.T) {
	run := func(rps float64, fb int) []result {
		return []result{{Setup: "postgres-redis-3", Instances: 3, Name: "resolve", RPS: rps, RedisFallbacks: fb}}
	}
	got := medians([][]result{run(1, 2), run(3, 0), run(2, 5)})
	if got[0].Setup != "postgres-redis-3" || got[0].Instances != 3 || got[0].RPS != 2 || got[0].RedisFallbacks != 7 {
		t.Errorf("medians = %+v", got[0])
	}
}

func TestPrintScaleTable(t *testing.T) {
	rep := report{Mode: "scaleout", Date: "d", Settings: settings{Repeat: 3, RedisTimeout: "250ms"},
		Rows: []result{
			{Setup: "sqlite-1", Name: "resolve", Connections: 32, RPS: 400, Ratio: 1},
			{Setup: "sqlite-1", Name: "stats", Connections: 32, RPS: 900, Ratio: 1},
			{Setup: "postgres-redis-3", Name: "resolve", Connections: 32, RPS: 300, Ratio: 0.75, RedisFallbacks: 2},
			{Setup: "postgres-redis-3", Name: "stats", Connections: 32, RPS: 800, Ratio: 0.8889, Errors: 1, FirstError: "status 429"},
		},
		Groups: []groupInfo{{RedisFallbackDecisions: 2, RedisErrors: 1}},
	}
	var b bytes.Buffer
	printScaleTable(&b, rep)
	out := b.String()
	// Rows in the order of the tool's rows, each setup under its row.
	var order []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && (f[1] == "sqlite-1" || f[1] == "postgres-redis-3") {
			order = append(order, f[0]+"/"+f[1]+"/"+f[len(f)-1])
		}
	}
	if want := []string{"stats/sqlite-1/-", "stats/postgres-redis-3/0", "resolve/sqlite-1/-", "resolve/postgres-redis-3/2"}; !slices.Equal(order, want) {
		t.Errorf("rows %v, want %v\n%s", order, want, out)
	}
	for _, w := range []string{"median of 3 runs", "ASSISTANT_REDIS_TIMEOUT=250ms", "2 limiter decisions fell back", "stats on postgres-redis-3: 1 errors", "0.889"} {
		if !strings.Contains(out, w) {
			t.Errorf("the table lacks %q:\n%s", w, out)
		}
	}
}

// TestScaleOutSmoke runs the mode end to end on short rows (long enough
// for a chat turn on a cold, loaded machine to complete) where
// PostgreSQL and redis-server are there (under CI=true they must be): every
// setup answers every row with no error and no limiter decision made
// without Redis, and the schemas it made are gone afterwards.
func TestScaleOutSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the service (-short)")
	}
	pgURL, _, err := scaleOutNeeds("", "", os.Getenv, exec.LookPath)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	out := filepath.Join(t.TempDir(), "scaleout.json")
	o := options{scaleout: true, postgres: pgURL, duration: time.Second, warmup: 500 * time.Millisecond, repeat: 1, conns: 4, chatConns: 2,
		only: "stats,chat-builtin", out: out, citations: 100, instances: 2, redisTimeout: time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := runScaleOut(ctx, o); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rep.Rows {
		got = append(got, r.Name+"@"+r.Setup)
		if r.Requests == 0 || r.RPS <= 0 || r.Errors != 0 || r.Ratio <= 0 || r.RedisFallbacks != 0 {
			t.Errorf("row %+v", r)
		}
	}
	want := []string{"stats@sqlite-1", "chat-builtin@sqlite-1", "stats@postgres-redis-1", "chat-builtin@postgres-redis-1", "stats@postgres-redis-2", "chat-builtin@postgres-redis-2"}
	if !slices.Equal(got, want) || rep.Mode != "scaleout" || len(rep.Groups) != 3 {
		t.Errorf("rows %v, mode %q, %d groups", got, rep.Mode, len(rep.Groups))
	}
	// The schemas it made are dropped.
	conn, err := pgx.Connect(ctx, pgURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, g := range rep.Groups {
		if (g.Schema != "") != (g.Setup != baseline) {
			t.Errorf("group %+v: schema", g)
		}
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_namespace WHERE nspname = $1`, g.Schema).Scan(&n); err != nil || n != 0 {
			t.Errorf("schema %s: %d left, %v", g.Schema, n, err)
		}
	}
}
