// Command load measures the service's HTTP throughput and latency on this
// machine, endpoint by endpoint, against a bare net/http handler measured
// in the same run (`make bench`, or `go run ./bench/load`; docs/performance.md).
//
// One run builds cmd/assistant with go build into a temporary directory,
// then, for each repeat, starts fresh servers, each in its own process:
//
//   - the bare handler: net/http writing a small constant JSON body, with
//     no routing or middleware: the yardstick;
//   - `assistant serve` with the builtin model, on a new data dir with an
//     API key made by `assistant keys create` and citation events recorded
//     in its database for the leaderboard to rank, logging at error level,
//     the public per-IP limits and the per-key chat limit raised out of
//     reach (the limiters still run: their cost is part of the figures);
//   - a fake OpenAI-compatible upstream answering every call after a fixed
//     latency (50 ms by default), and a second `assistant serve` whose
//     openai provider (ASSISTANT_LLM_BASE_URL) points at it.
//
// The bare handler and the fake upstream are this same binary run again
// with -role: a subprocess for the yardstick as for the service, so both
// sit behind the same process boundary (loopback TCP, their own Go
// runtime and scheduler) and the ratio compares the handlers, not the
// placement. The load client runs in this process: one goroutine per
// connection sending one request at a time (a closed loop) over a
// keep-alive Transport with as many idle connections as workers. On a
// small machine the client takes CPU from the server it measures; it does
// the same for the bare handler, which is why each row reports its ratio to
// the bare handler of the same run and why absolute figures move with the
// machine's load.
//
// Each row warms up (not counted) and then runs for the duration. req/s
// counts the requests measured, over the time from the end of the warm-up
// to the last response; p50 and p99 are nearest-rank percentiles of their
// latencies (request written to body read); errors counts the non-2xx
// answers and transport errors; CPU time per request is the user and
// system time of the serving process and of this one (from /proc) over
// the measured time, divided by the requests. Before its load, each row
// sends one request and checks its answer (a chat through the fake
// upstream must come back with the model's search and the model judge's
// verdicts), so a row never measures error pages quietly. The bare handler is measured
// first and last in each repeat; the ratio's denominator is the mean of
// the two. With -repeat N the whole set runs N times on fresh servers and
// each figure reported is the median over the repeats (errors: the total).
//
// The table goes to stdout; the JSON result (every repeat, the medians,
// the settings, the machine and its load average) to -out.
//
// With -scaleout (`make bench-scaleout`; scaleout.go) it measures instead
// the builtin service's rows (stats, resolve, builtin chat with 4
// connections and with 1 by default) on three setups in one run: one
// instance on SQLite, the baseline; one instance on PostgreSQL and Redis;
// and -instances (3) instances sharing a fresh PostgreSQL schema and a
// private redis-server, the load client sending each request to the next
// instance in turn over a keep-alive pool per instance. Each row's ratio is
// to the same row on SQLite. It needs -postgres or
// ASSISTANT_TEST_POSTGRES_URL, and redis-server, and fails without them.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// options are the command line.
type options struct {
	duration        time.Duration
	warmup          time.Duration
	repeat          int
	conns           int
	chatConns       int
	upstreamLatency time.Duration
	only            string
	out             string
	assistant       string
	citations       int
	profile         string // directory for the services' CPU profiles, "" for none
	// The scale-out mode (scaleout.go).
	scaleout     bool
	postgres     string
	redisServer  string
	instances    int
	redisTimeout time.Duration
	// The soak (soak.go).
	soak         bool
	soakPhase    time.Duration
	soakConns    int
	soakMemLimit string
	soakMixed    bool
}

func main() {
	var o options
	var role, listen string
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	fs.DurationVar(&o.duration, "duration", 5*time.Second, "measured time per row")
	fs.DurationVar(&o.warmup, "warmup", time.Second, "warm-up per row before it is measured (at most -duration)")
	fs.IntVar(&o.repeat, "repeat", 1, "run the whole set this many times on fresh servers and report the median of each figure")
	fs.IntVar(&o.conns, "conns", 32, "keep-alive connections for the bare handler and the public endpoints")
	fs.IntVar(&o.chatConns, "chat-conns", 4, "connections for the concurrent chat rows (the -1 rows use one)")
	fs.DurationVar(&o.upstreamLatency, "upstream-latency", 50*time.Millisecond, "latency of each call to the fake OpenAI-compatible upstream")
	fs.StringVar(&o.only, "only", "", "comma-separated rows to run (the bare handler always runs): "+strings.Join(rowNames(), ", "))
	fs.StringVar(&o.out, "out", "", "where to write the JSON result (default bench/results/latest.json in the repository; - for none)")
	fs.StringVar(&o.assistant, "assistant", "", "an assistant binary to measure instead of building ./cmd/assistant")
	fs.IntVar(&o.citations, "citations", 10000, "citation events recorded in the builtin service's database before it starts, for the leaderboard row to rank")
	fs.StringVar(&o.profile, "profile", "", "write a CPU profile of the measuring service for each row of the builtin and openai services into this directory (ROW.runN.pprof; read with go tool pprof)")
	fs.BoolVar(&o.scaleout, "scaleout", false, "measure stats, resolve and builtin chat on one instance on SQLite, one on PostgreSQL + Redis and -instances on PostgreSQL + Redis (needs -postgres and redis-server)")
	fs.StringVar(&o.postgres, "postgres", "", "-scaleout: the PostgreSQL database to create a schema in for the run (default $ASSISTANT_TEST_POSTGRES_URL)")
	fs.StringVar(&o.redisServer, "redis-server", "", "-scaleout: the redis-server binary to start a private Redis with (default: redis-server on the PATH)")
	fs.IntVar(&o.instances, "instances", 3, "-scaleout: instances of the largest setup")
	fs.DurationVar(&o.redisTimeout, "redis-timeout", 250*time.Millisecond, "-scaleout: ASSISTANT_REDIS_TIMEOUT of the instances (the service's default is 25ms; a call past it is decided without Redis)")
	fs.BoolVar(&o.soak, "soak", false, "soak one builtin service with varied requests (chat, resolve, search, preview in turn) for -duration and report its memory (make soak)")
	fs.DurationVar(&o.soakPhase, "soak-phase", 5*time.Second, "-soak: how long each kind of request runs before the next takes its turn")
	fs.IntVar(&o.soakConns, "soak-conns", 2, "-soak: connections of each kind's phase")
	fs.BoolVar(&o.soakMixed, "soak-mixed", false, "-soak: the four kinds at once, each with -soak-conns connections, instead of in turn")
	fs.StringVar(&o.soakMemLimit, "soak-memlimit", "", "-soak: the service's GOMEMLIMIT (e.g. 256MiB), as a container limit would set it")
	fs.StringVar(&role, "role", "", "internal: serve as the bare handler or the fake upstream (bare, fake-openai)")
	fs.StringVar(&listen, "listen", "127.0.0.1:0", "internal: the address of -role")
	fs.Parse(os.Args[1:])

	if role != "" {
		if err := serveRole(role, listen, o.upstreamLatency); err != nil {
			fmt.Fprintln(os.Stderr, "load:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	runMode := run
	switch {
	case o.scaleout:
		runMode = runScaleOut
	case o.soak:
		runMode = runSoak
	}
	if err := runMode(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

// row is one line of the table: an endpoint under a number of connections.
type row struct {
	name     string
	endpoint string // as printed: method and path
	server   string // bare, builtin or openai
	conns    func(o options) int
	target   func(base, key string) target
	check    func(body []byte) error // of the preflight answer
}

// Requests of the rows.
const (
	searchQuery = "the packing station cannot keep up and orders ship late"
	chatBody    = `{"message":"Our packing station cannot keep up and orders ship late","mode":"operator","vertical":"ecommerce"}`
	previewBody = `{"vertical":"ecommerce","free_text":"the packing bench cannot keep up in December"}`
)

// resolveAnswerBytes is about the length of the resolve row's answer with
// the embedded knowledge base (15 cards): the resolve-bare row sends the
// same request to the bare handler and reads an answer this long, the
// ceiling of what any resolve can reach with this client on this machine.
const resolveAnswerBytes = 29250

// resolveBody asks for 20 tokens: 15 in the embedded knowledge base and 5
// that are not.
var resolveBody = func() []byte {
	tokens := []string{
		"framework:theory-of-constraints", "framework:drum-buffer-rope", "framework:critical-chain",
		"framework:kanban-method", "framework:okrs", "framework:jobs-to-be-done", "framework:net-promoter-score",
		"framework:value-based-pricing", "framework:five-whys", "framework:pdca",
		"paper:little-1961-queuing-formula", "paper:kingman-1961-heavy-traffic", "paper:harris-1913-eoq",
		"blog:graham-2013-do-things-that-dont-scale", "blog:kelly-2008-1000-true-fans",
		"framework:missing-one", "paper:missing-two", "blog:missing-three", "framework:missing-four", "paper:missing-five",
	}
	type tok struct {
		Type string `json:"type"`
		Slug string `json:"slug"`
	}
	var body struct {
		Tokens []tok `json:"tokens"`
	}
	for _, t := range tokens {
		typ, slug, _ := strings.Cut(t, ":")
		body.Tokens = append(body.Tokens, tok{typ, slug})
	}
	b, _ := json.Marshal(body)
	return b
}()

// variedResolveBodies are resolveBody's 20 tokens in 5,000 orders: the
// service remembers answers to the last 512 bodies it saw, so taken in
// turn none is answered from memory, and each answer costs what a batch
// never seen before costs.
var variedResolveBodies = func() [][]byte {
	var body struct {
		Tokens []json.RawMessage `json:"tokens"`
	}
	if err := json.Unmarshal(resolveBody, &body); err != nil {
		panic(err)
	}
	rng := rand.New(rand.NewPCG(13, 13))
	out := make([][]byte, 5000)
	for i := range out {
		rng.Shuffle(len(body.Tokens), func(a, b int) { body.Tokens[a], body.Tokens[b] = body.Tokens[b], body.Tokens[a] })
		out[i], _ = json.Marshal(body)
	}
	return out
}()

// postEach is post with each request's body the next of bodies.
func postEach(path string, bodies [][]byte) func(base, key string) target {
	return func(base, key string) target {
		t := post(path, nil, false)(base, key)
		t.bodies = &bodyCycle{bodies: bodies}
		return t
	}
}

func get(path string) func(base, key string) target {
	return func(base, _ string) target { return target{method: http.MethodGet, url: base + path} }
}

func post(path string, body []byte, auth bool) func(base, key string) target {
	return func(base, key string) target {
		h := http.Header{"Content-Type": {"application/json"}}
		if auth {
			h.Set("Authorization", "Bearer "+key)
		}
		return target{method: http.MethodPost, url: base + path, body: body, header: h}
	}
}

// contains checks that a preflight answer holds each of parts.
func contains(parts ...string) func([]byte) error {
	return func(body []byte) error {
		for _, p := range parts {
			if !strings.Contains(string(body), p) {
				return fmt.Errorf("the answer lacks %q: %.300s", p, body)
			}
		}
		return nil
	}
}

func public(o options) int { return o.conns }
func chat(o options) int   { return o.chatConns }
func one(options) int      { return 1 }

const pub = "/api/assistant/v1"

// rows are the rows in the order they run; bare-end closes each repeat.
var rows = []row{
	{"bare", "GET / (bare net/http handler)", "bare", public, get("/"), contains(`"total":184`)},
	{"stats", "GET " + pub + "/knowledge-stats", "builtin", public, get(pub + "/knowledge-stats"), contains(`"total":`)},
	{"leaderboard", "GET " + pub + "/leaderboard?days=7&limit=10", "builtin", public,
		get(pub + "/leaderboard?days=7&limit=10"), contains(`"rank":1`)},
	{"search", "GET " + pub + "/search?q=(12 words)&limit=10", "builtin", public,
		get(pub + "/search?limit=10&q=" + url.QueryEscape(searchQuery)), contains(`"token":"`)},
	{"resolve", "POST " + pub + "/resolve (20 tokens, 5 unknown)", "builtin", public,
		post(pub+"/resolve", resolveBody, false), contains(`"token":"blog:kelly-2008-1000-true-fans"`, `"slug":"missing-five"`)},
	{"resolve-varied", "POST " + pub + fmt.Sprintf("/resolve (the same 20 tokens in %d orders, in turn)", len(variedResolveBodies)), "builtin", public,
		postEach(pub+"/resolve", variedResolveBodies), contains(`"token":"blog:kelly-2008-1000-true-fans"`, `"slug":"missing-five"`)},
	{"resolve-bare", fmt.Sprintf("POST /sized (bare handler: resolve's request, a %d-byte answer)", resolveAnswerBytes), "bare", public,
		post(fmt.Sprintf("/sized?bytes=%d", resolveAnswerBytes), resolveBody, false), contains(`{"pad":"`)},
	{"preview", "POST " + pub + "/preview (free text)", "builtin", public,
		post(pub+"/preview", []byte(previewBody), false), contains(`"framework_applications":[{`)},
	{"chat-builtin", "POST /api/v1/chat (builtin model)", "builtin", chat,
		post("/api/v1/chat", []byte(chatBody), true), contains(`"response":"`, `"rag_hits":[{`)},
	{"chat-builtin-1", "POST /api/v1/chat (builtin model)", "builtin", one,
		post("/api/v1/chat", []byte(chatBody), true), contains(`"response":"`)},
	{"chat-openai", "POST /api/v1/chat (openai, fake upstream)", "openai", chat,
		post("/api/v1/chat", []byte(chatBody), true), contains(`"tool":"search_knowledge"`, `the model found`)},
	{"chat-openai-1", "POST /api/v1/chat (openai, fake upstream)", "openai", one,
		post("/api/v1/chat", []byte(chatBody), true), contains(`"response":"`)},
	{"bare-end", "GET / (bare net/http handler, again)", "bare", public, get("/"), contains(`"total":184`)},
}

func rowNames() []string {
	var names []string
	for _, r := range rows {
		if !strings.HasPrefix(r.name, "bare") {
			names = append(names, r.name)
		}
	}
	return names
}

// selectRows returns the rows -only names, with the two bare rows always.
func selectRows(only string) ([]row, error) {
	if strings.TrimSpace(only) == "" {
		return rows, nil
	}
	want := map[string]bool{}
	for _, n := range strings.Split(only, ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[n] = true
		}
	}
	var out []row
	for _, r := range rows {
		if want[r.name] || strings.HasPrefix(r.name, "bare") {
			delete(want, r.name)
			out = append(out, r)
		}
	}
	for n := range want {
		return nil, fmt.Errorf("-only: no row %q (rows: %s)", n, strings.Join(rowNames(), ", "))
	}
	return out, nil
}

// prepare finds the repository, sets the default result file (name, in
// bench/results), makes the run's temporary directory and builds the
// service unless -assistant names a binary. The caller removes tmp.
func prepare(ctx context.Context, o *options, name string) (root, tmp, bin string, err error) {
	if root, err = moduleRoot(); err != nil {
		return "", "", "", err
	}
	if o.out == "" {
		o.out = filepath.Join(root, "bench", "results", name)
	}
	if tmp, err = os.MkdirTemp("", "assistant-bench-"); err != nil {
		return "", "", "", err
	}
	bin = o.assistant
	if bin == "" {
		fmt.Fprintln(os.Stderr, "building ./cmd/assistant ...")
		if bin, err = buildService(ctx, root, tmp); err != nil {
			os.RemoveAll(tmp)
			return "", "", "", err
		}
	}
	return root, tmp, bin, nil
}

func run(ctx context.Context, o options) error {
	if o.duration <= 0 || o.repeat < 1 || o.conns < 1 || o.chatConns < 1 || o.warmup < 0 || o.upstreamLatency < 0 {
		return errors.New("-duration, -repeat, -conns and -chat-conns must be positive, -warmup and -upstream-latency not negative")
	}
	o.warmup = min(o.warmup, o.duration)
	selected, err := selectRows(o.only)
	if err != nil {
		return err
	}
	root, tmp, bin, err := prepare(ctx, &o, "latest.json")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	rep := report{
		Date:     time.Now().Format(time.RFC3339),
		Commit:   gitDescribe(root),
		Machine:  machine{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU(), Go: runtime.Version(), LoadAvgStart: loadAvg()},
		Settings: settings{Duration: o.duration.String(), Warmup: o.warmup.String(), Repeat: o.repeat, Conns: o.conns, ChatConns: o.chatConns, UpstreamLatency: o.upstreamLatency.String(), Citations: o.citations},
	}
	for i := range o.repeat {
		fmt.Fprintf(os.Stderr, "repeat %d of %d\n", i+1, o.repeat)
		results, err := runOnce(ctx, o, bin, filepath.Join(tmp, fmt.Sprintf("run%d", i+1)), selected)
		if err != nil {
			return err
		}
		rep.Runs = append(rep.Runs, results)
	}
	rep.Machine.LoadAvgEnd = loadAvg()
	rep.Rows = medians(rep.Runs)
	printTable(os.Stdout, rep)
	if o.out != "-" {
		if err := writeJSON(o.out, rep); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "wrote %s\n", o.out)
	}
	return nil
}

// runOnce starts the servers the rows need, measures the rows in order and
// stops the servers.
func runOnce(ctx context.Context, o options, bin, dir string, selected []row) ([]result, error) {
	need := map[string]bool{}
	for _, r := range selected {
		need[r.server] = true
	}
	type server struct {
		p   *process
		key string
	}
	servers := map[string]server{}
	defer func() {
		for _, s := range servers {
			s.p.stop()
		}
	}()
	bare, err := startRole(ctx, "bare", 0)
	if err != nil {
		return nil, err
	}
	servers["bare"] = server{p: bare}
	// With -profile each service serves its runtime profiles on a port of
	// its own (ASSISTANT_PROFILE_ADDR).
	profileAddrs := map[string]string{}
	profileSetting := func(server string, extra map[string]string) (map[string]string, error) {
		if o.profile == "" {
			return extra, nil
		}
		addr, err := freeAddr()
		if err != nil {
			return nil, err
		}
		profileAddrs[server] = addr
		if extra == nil {
			extra = map[string]string{}
		}
		extra["ASSISTANT_PROFILE_ADDR"] = addr
		return extra, nil
	}
	if need["builtin"] {
		extra, err := profileSetting("builtin", nil)
		if err != nil {
			return nil, err
		}
		p, key, err := startService(ctx, "assistant serve (builtin)", bin, filepath.Join(dir, "builtin"), o.citations, extra)
		if err != nil {
			return nil, err
		}
		servers["builtin"] = server{p, key}
	}
	if need["openai"] {
		fake, err := startRole(ctx, "fake-openai", o.upstreamLatency)
		if err != nil {
			return nil, err
		}
		servers["fake-openai"] = server{p: fake}
		extra, err := profileSetting("openai", map[string]string{
			"ASSISTANT_LLM_PROVIDER": "openai", "ASSISTANT_LLM_BASE_URL": fake.url + "/v1",
			"ASSISTANT_LLM_MODEL": "bench-model", "ASSISTANT_LLM_API_KEY": "bench",
		})
		if err != nil {
			return nil, err
		}
		p, key, err := startService(ctx, "assistant serve (openai)", bin, filepath.Join(dir, "openai"), 0, extra)
		if err != nil {
			return nil, err
		}
		servers["openai"] = server{p, key}
	}

	var results []result
	for _, r := range selected {
		s := servers[r.server]
		t := r.target(s.p.url, s.key)
		conns := r.conns(o)
		client := newClient(conns)
		status, body, err := fetch(ctx, client, t)
		if err == nil && (status < 200 || status > 299) {
			err = fmt.Errorf("status %d: %.300s", status, body)
		}
		if err == nil {
			err = r.check(body)
		}
		if err != nil {
			return nil, fmt.Errorf("%s (%s): the first request failed: %w", r.name, r.endpoint, err)
		}
		fmt.Fprintf(os.Stderr, "  %-15s %d connections ...", r.name, conns)
		var profiled <-chan error
		if addr := profileAddrs[r.server]; addr != "" {
			profiled = captureProfile(ctx, addr, o.warmup, o.duration, filepath.Join(o.profile, r.name+"."+filepath.Base(dir)+".pprof"))
		}
		res := summarize(load(ctx, []endpoint{{client, t}}, conns, o.warmup, o.duration, serverProbes(s.p.cmd.Process.Pid)))
		if profiled != nil {
			if err := <-profiled; err != nil {
				return nil, fmt.Errorf("%s: the CPU profile: %w", r.name, err)
			}
		}
		client.CloseIdleConnections()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		fmt.Fprintf(os.Stderr, " %.1f req/s\n", res.RPS)
		res.Name, res.Endpoint, res.Connections = r.name, r.endpoint, conns
		results = append(results, res)
	}
	setRatios(results)
	return results, nil
}

// gitDescribe names the commit measured ("" without git), with -dirty
// when the work tree has changes.
func gitDescribe(root string) string {
	cmd := exec.Command("git", "describe", "--always", "--dirty")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// loadAvg returns the 1, 5 and 15 minute load averages (Linux; nil
// elsewhere).
func loadAvg() []float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return nil
	}
	var l [3]float64
	if _, err := fmt.Sscan(string(b), &l[0], &l[1], &l[2]); err != nil {
		return nil
	}
	return l[:]
}
