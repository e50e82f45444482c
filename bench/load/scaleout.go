package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// The scale-out mode (-scaleout, `make bench-scaleout`): the same rows on
// one instance on SQLite (the baseline), on one instance on PostgreSQL and
// Redis, and on -instances instances sharing one PostgreSQL schema and one
// Redis, in one run (docs/performance.md, "Scale-out (PostgreSQL +
// Redis)").

// setup is one configuration the scale-out mode measures.
type setup struct {
	name      string
	postgres  bool // PostgreSQL and Redis; SQLite otherwise
	instances int
}

// baseline is the setup every other is compared with.
const baseline = "sqlite-1"

func scaleSetups(instances int) []setup {
	return []setup{
		{baseline, false, 1},
		{"postgres-redis-1", true, 1},
		{fmt.Sprintf("postgres-redis-%d", instances), true, instances},
	}
}

// scaleDefaultRows are the rows of the scale-out mode without -only.
var scaleDefaultRows = []string{"stats", "resolve", "chat-builtin", "chat-builtin-1"}

// selectScaleRows returns the rows -only names (default scaleDefaultRows)
// in the order of rows. Only rows served by the builtin service can run
// on every setup.
func selectScaleRows(only string) ([]row, error) {
	want := map[string]bool{}
	for _, n := range strings.Split(only, ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[n] = true
		}
	}
	if len(want) == 0 {
		for _, n := range scaleDefaultRows {
			want[n] = true
		}
	}
	var out, allowed []row
	for _, r := range rows {
		if r.server == "builtin" {
			allowed = append(allowed, r)
		}
	}
	var names []string
	for _, r := range allowed {
		names = append(names, r.name)
		if want[r.name] {
			delete(want, r.name)
			out = append(out, r)
		}
	}
	for n := range want {
		return nil, fmt.Errorf("-only with -scaleout: no row %q (rows: %s)", n, strings.Join(names, ", "))
	}
	return out, nil
}

// scaleOutNeeds returns the PostgreSQL URL and the redis-server the mode
// needs: the -postgres flag or else ASSISTANT_TEST_POSTGRES_URL, and the
// -redis-server flag or else redis-server on the PATH. Without either it
// says what is missing and how to provide it.
func scaleOutNeeds(pgFlag, redisFlag string, getenv func(string) string, lookPath func(string) (string, error)) (pgURL, redisBin string, err error) {
	var missing []string
	pgURL = pgFlag
	if pgURL == "" {
		pgURL = getenv("ASSISTANT_TEST_POSTGRES_URL")
	}
	if pgURL == "" {
		missing = append(missing, "a PostgreSQL database: set ASSISTANT_TEST_POSTGRES_URL or pass -postgres URL (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable; a schema is created in it for the run and dropped after)")
	} else if !strings.HasPrefix(pgURL, "postgres://") && !strings.HasPrefix(pgURL, "postgresql://") {
		missing = append(missing, fmt.Sprintf("a PostgreSQL URL (postgres://...), not %q", maskPassword(pgURL)))
	}
	redisBin = redisFlag
	if redisBin == "" {
		redisBin = "redis-server"
	}
	if path, lerr := lookPath(redisBin); lerr != nil {
		missing = append(missing, fmt.Sprintf("redis-server (%v): install it (apt-get install redis-server) or pass -redis-server PATH; the run starts a private one on a free port", lerr))
	} else {
		redisBin = path
	}
	if len(missing) > 0 {
		return "", "", fmt.Errorf("-scaleout needs %s", strings.Join(missing, "; and "))
	}
	return pgURL, redisBin, nil
}

// maskPassword hides the password of a URL for messages.
func maskPassword(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// setupOrder is the order the setups run in repeat i (from 0): rotated by
// one each repeat, so each setup runs first, second and last as often as
// the others over a multiple of len repeats and a drift of the machine's
// load during a run does not favour one.
func setupOrder(i, n int) []int {
	out := make([]int, n)
	for k := range out {
		out[k] = (i + k) % n
	}
	return out
}

// setBaselineRatios sets each result's Ratio: its req/s over that of the
// row of the same name on the baseline setup.
func setBaselineRatios(results []result) {
	base := map[string]float64{}
	for _, r := range results {
		if r.Setup == baseline {
			base[r.Name] = r.RPS
		}
	}
	for i, r := range results {
		if b := base[r.Name]; b > 0 {
			results[i].Ratio = round(r.RPS/b, 4)
		}
	}
}

// sumMetric adds up the samples of a Prometheus counter or gauge (every
// label set) in a text exposition.
func sumMetric(exposition, name string) float64 {
	line := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `(?:\{[^}]*\})? ([0-9.eE+-]+|NaN|[+-]Inf)$`)
	var sum float64
	for _, m := range line.FindAllStringSubmatch(exposition, -1) {
		if f, err := strconv.ParseFloat(m[1], 64); err == nil {
			sum += f
		}
	}
	return sum
}

// groupInfo is what the JSON keeps of one setup in one repeat besides its
// rows.
type groupInfo struct {
	Repeat    int    `json:"repeat"`
	Setup     string `json:"setup"`
	Position  int    `json:"position"` // 1: measured first in its repeat
	Instances int    `json:"instances"`
	// Schema is the PostgreSQL schema the setup ran on, dropped after it.
	Schema string `json:"schema,omitempty"`
	// RedisFallbackDecisions and RedisErrors are the instances' totals of
	// assistant_redis_fallback_decisions_total and
	// assistant_redis_errors_total after the rows: limiter decisions made
	// without Redis (a call past ASSISTANT_REDIS_TIMEOUT, or the breaker
	// open). Zero means every decision went through Redis.
	RedisFallbackDecisions int `json:"redis_fallback_decisions"`
	RedisErrors            int `json:"redis_errors"`
}

// runScaleOut is run for -scaleout.
func runScaleOut(ctx context.Context, o options) error {
	if o.duration <= 0 || o.repeat < 1 || o.conns < 1 || o.chatConns < 1 || o.warmup < 0 || o.instances < 2 || o.redisTimeout < time.Millisecond || o.redisTimeout > time.Second {
		return errors.New("-duration, -repeat, -conns and -chat-conns must be positive, -warmup not negative, -instances at least 2, -redis-timeout from 1ms to 1s")
	}
	o.warmup = min(o.warmup, o.duration)
	pgURL, redisBin, err := scaleOutNeeds(o.postgres, o.redisServer, os.Getenv, exec.LookPath)
	if err != nil {
		return err
	}
	selected, err := selectScaleRows(o.only)
	if err != nil {
		return err
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	conn, err := pgx.Connect(pingCtx, pgURL)
	cancel()
	if err != nil {
		return fmt.Errorf("-scaleout: cannot connect to PostgreSQL at %s: %w", maskPassword(pgURL), err)
	}
	conn.Close(context.Background())
	root, tmp, bin, err := prepare(ctx, &o, "scaleout.json")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	setups := scaleSetups(o.instances)
	rep := report{
		Mode:     "scaleout",
		Date:     time.Now().Format(time.RFC3339),
		Commit:   gitDescribe(root),
		Machine:  machine{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU(), Go: runtime.Version(), LoadAvgStart: loadAvg()},
		Settings: settings{Duration: o.duration.String(), Warmup: o.warmup.String(), Repeat: o.repeat, Conns: o.conns, ChatConns: o.chatConns, UpstreamLatency: o.upstreamLatency.String(), Citations: o.citations, Instances: o.instances, RedisTimeout: o.redisTimeout.String()},
	}
	for i := range o.repeat {
		bySetup := map[string][]result{}
		for pos, k := range setupOrder(i, len(setups)) {
			s := setups[k]
			fmt.Fprintf(os.Stderr, "repeat %d of %d, %s\n", i+1, o.repeat, s.name)
			results, info, err := runSetup(ctx, o, s, bin, pgURL, redisBin, filepath.Join(tmp, fmt.Sprintf("run%d-%s", i+1, s.name)), selected)
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			info.Repeat, info.Position = i+1, pos+1
			rep.Groups = append(rep.Groups, info)
			bySetup[s.name] = results
		}
		var results []result
		for _, s := range setups {
			results = append(results, bySetup[s.name]...)
		}
		setBaselineRatios(results)
		rep.Runs = append(rep.Runs, results)
	}
	rep.Machine.LoadAvgEnd = loadAvg()
	rep.Rows = medians(rep.Runs)
	printScaleTable(os.Stdout, rep)
	if o.out != "-" {
		if err := writeJSON(o.out, rep); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "wrote %s\n", o.out)
	}
	return nil
}

// runSetup starts a setup's instances (and, on PostgreSQL, a fresh schema
// and a private Redis), measures the rows, and stops and removes
// everything it started.
func runSetup(ctx context.Context, o options, s setup, bin, pgBase, redisBin, dir string, selected []row) ([]result, groupInfo, error) {
	info := groupInfo{Setup: s.name, Instances: s.instances}
	ctx, cancel := context.WithCancel(ctx) // ends what backendPIDs keeps
	defer cancel()
	var procs []*process
	defer func() { stopAll(procs) }()
	var key string
	probes := []cpuProbe{{name: probeClient, pids: fixedPIDs(os.Getpid())}}

	if !s.postgres {
		p, k, err := startService(ctx, "assistant serve ("+s.name+")", bin, filepath.Join(dir, "data"), o.citations, nil)
		if err != nil {
			return nil, info, err
		}
		procs, key = append(procs, p), k
	} else {
		schema, dbURL, err := createSchema(ctx, pgBase)
		if err != nil {
			return nil, info, err
		}
		defer dropSchema(pgBase, schema)
		info.Schema = schema
		rds, err := startRedis(ctx, redisBin, dir)
		if err != nil {
			return nil, info, err
		}
		defer rds.stop()
		settings := serviceSettings("", map[string]string{
			"ASSISTANT_DATABASE_URL":  dbURL,
			"ASSISTANT_REDIS_URL":     "redis://" + rds.addr + "/0",
			"ASSISTANT_REDIS_TIMEOUT": o.redisTimeout.String(),
		})
		settings["ASSISTANT_DATA_DIR"] = filepath.Join(dir, "keys")
		if key, err = createKey(ctx, bin, settings); err != nil { // applies the migrations
			return nil, info, err
		}
		if err := seedPostgres(ctx, dbURL, o.citations, time.Now()); err != nil {
			return nil, info, err
		}
		// All instances start at once, as a deployment's replicas do.
		started := make([]*process, s.instances)
		errs := make([]error, s.instances)
		var wg sync.WaitGroup
		for i := range s.instances {
			st := maps(settings)
			st["ASSISTANT_DATA_DIR"] = filepath.Join(dir, fmt.Sprintf("instance%d", i+1))
			wg.Go(func() {
				started[i], errs[i] = startServe(ctx, fmt.Sprintf("assistant serve (%s #%d)", s.name, i+1), bin, st)
			})
		}
		wg.Wait()
		for _, p := range started {
			if p != nil {
				procs = append(procs, p)
			}
		}
		if err := errors.Join(errs...); err != nil {
			return nil, info, err
		}
		backends, err := backendPIDs(ctx, pgBase, applicationName(schema))
		if err != nil {
			return nil, info, err
		}
		probes = append(probes, cpuProbe{name: probePostgres, pids: backends, optional: true},
			cpuProbe{name: probeRedis, pids: fixedPIDs(rds.cmd.Process.Pid)})
	}
	var pids []int
	for _, p := range procs {
		pids = append(pids, p.cmd.Process.Pid)
	}
	probes = append(probes, cpuProbe{name: probeServer, pids: fixedPIDs(pids...)})

	var results []result
	for _, r := range selected {
		conns := r.conns(o)
		var eps []endpoint
		for _, p := range procs {
			eps = append(eps, endpoint{newClient(conns), r.target(p.url, key)})
		}
		for i, ep := range eps {
			status, body, err := fetch(ctx, ep.client, ep.t)
			if err == nil && (status < 200 || status > 299) {
				err = fmt.Errorf("status %d: %.300s", status, body)
			}
			if err == nil {
				err = r.check(body)
			}
			if err != nil {
				return nil, info, fmt.Errorf("%s (%s) on instance %d: the first request failed: %w", r.name, r.endpoint, i+1, err)
			}
		}
		fmt.Fprintf(os.Stderr, "  %-15s %d connections over %d instance(s) ...", r.name, conns, len(eps))
		var fallbacksBefore int
		if s.postgres {
			var err error
			if fallbacksBefore, _, err = redisCounters(ctx, procs); err != nil {
				return nil, info, err
			}
		}
		res := summarize(load(ctx, eps, conns, o.warmup, o.duration, probes))
		if s.postgres {
			fallbacksAfter, _, err := redisCounters(ctx, procs)
			if err != nil {
				return nil, info, err
			}
			res.RedisFallbacks = fallbacksAfter - fallbacksBefore
		}
		for _, ep := range eps {
			ep.client.CloseIdleConnections()
		}
		if ctx.Err() != nil {
			return nil, info, ctx.Err()
		}
		fmt.Fprintf(os.Stderr, " %.1f req/s\n", res.RPS)
		res.Setup, res.Instances = s.name, s.instances
		res.Name, res.Endpoint, res.Connections = r.name, r.endpoint, conns
		results = append(results, res)
	}
	if s.postgres {
		fb, errs, err := redisCounters(ctx, procs)
		if err != nil {
			return nil, info, err
		}
		info.RedisFallbackDecisions, info.RedisErrors = fb, errs
	}
	return results, info, nil
}

// redisCounters returns the instances' totals of
// assistant_redis_fallback_decisions_total and assistant_redis_errors_total
// (from /metrics).
func redisCounters(ctx context.Context, procs []*process) (fallbacks, errs int, err error) {
	client := &http.Client{Timeout: 5 * time.Second}
	for _, p := range procs {
		status, body, err := fetch(ctx, client, target{method: http.MethodGet, url: p.url + "/metrics"})
		if err == nil && status != http.StatusOK {
			err = fmt.Errorf("status %d", status)
		}
		if err != nil {
			return 0, 0, fmt.Errorf("reading %s/metrics: %w", p.url, err)
		}
		fallbacks += int(sumMetric(string(body), "assistant_redis_fallback_decisions_total"))
		errs += int(sumMetric(string(body), "assistant_redis_errors_total"))
	}
	return fallbacks, errs, nil
}

func maps(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// stopAll stops processes at once (each may take a moment to shut down).
func stopAll(procs []*process) {
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Go(p.stop)
	}
	wg.Wait()
}

// applicationName is what the instances of a schema call themselves to
// PostgreSQL, so that their backends can be found in pg_stat_activity.
func applicationName(schema string) string { return "assistant-" + schema }

// createSchema creates a new schema in the database of base and returns
// its name and a URL whose connections use it (search_path) and name
// themselves applicationName(schema).
func createSchema(ctx context.Context, base string) (schema, dbURL string, err error) {
	b := make([]byte, 6)
	rand.Read(b)
	schema = "bench_" + hex.EncodeToString(b)
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", "", err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return "", "", fmt.Errorf("creating schema %s: %w", schema, err)
	}
	dbURL, err = withParams(base, map[string]string{"search_path": schema, "application_name": applicationName(schema)})
	return schema, dbURL, err
}

// withParams sets query parameters of a URL.
func withParams(base string, params map[string]string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	q := u.Query()
	for k, v := range params {
		q.Set(k, v)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// dropSchema drops a schema createSchema made, with everything in it.
func dropSchema(base, schema string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		fmt.Fprintf(os.Stderr, "load: could not drop schema %s: %v\n", schema, err)
		return
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
		fmt.Fprintf(os.Stderr, "load: could not drop schema %s: %v\n", schema, err)
	}
}

// backendPIDs returns a function listing the process ids of the
// PostgreSQL backends whose connections call themselves app (on this
// machine they are processes /proc can read). It keeps one connection of
// its own, closed when ctx ends.
func backendPIDs(ctx context.Context, base, app string) (func() []int, error) {
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return nil, err
	}
	context.AfterFunc(ctx, func() { conn.Close(context.Background()) })
	var mu sync.Mutex
	return func() []int {
		mu.Lock()
		defer mu.Unlock()
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		rows, err := conn.Query(qctx, `SELECT pid FROM pg_stat_activity WHERE application_name = $1`, app)
		if err != nil {
			return nil
		}
		pids, _ := pgx.CollectRows(rows, pgx.RowTo[int32])
		out := make([]int, len(pids))
		for i, p := range pids {
			out[i] = int(p)
		}
		return out
	}, nil
}

// redisProc is a private redis-server.
type redisProc struct {
	cmd  *exec.Cmd
	addr string
	done chan struct{}
}

// startRedis starts redis-server on a free loopback port, without
// persistence, with dir as its working directory, and waits until it
// accepts connections.
func startRedis(ctx context.Context, bin, dir string) (*redisProc, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no", "--dir", dir)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	setProcAttr(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting redis-server: %w", err)
	}
	r := &redisProc{cmd: cmd, addr: "127.0.0.1:" + port, done: make(chan struct{})}
	go func() { cmd.Wait(); close(r.done) }()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.DialTimeout("tcp", r.addr, time.Second); err == nil {
			c.Close()
			return r, nil
		}
		select {
		case <-r.done:
			return nil, fmt.Errorf("redis-server exited before listening on %s", r.addr)
		case <-ctx.Done():
			r.stop()
			return nil, ctx.Err()
		case <-time.After(25 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			r.stop()
			return nil, fmt.Errorf("redis-server did not listen on %s within 10s", r.addr)
		}
	}
}

// stop kills the redis-server (nothing in it is kept).
func (r *redisProc) stop() {
	if r == nil {
		return
	}
	r.cmd.Process.Kill()
	<-r.done
}

// fallbackString prints a row's Redis fallbacks, "-" on SQLite.
func fallbackString(r result) string {
	if r.Setup == baseline {
		return "-"
	}
	return strconv.Itoa(r.RedisFallbacks)
}

// printScaleTable writes the scale-out medians as a table: per row, each
// setup with its ratio to the baseline, then the Redis fallbacks.
func printScaleTable(w io.Writer, rep report) {
	s := rep.Settings
	what := "one run"
	if s.Repeat > 1 {
		what = fmt.Sprintf("median of %d runs; errors: total", s.Repeat)
	}
	fmt.Fprintf(w, "%s, commit %s, %s/%s, %d CPUs, %s; %s per row after %s warm-up; %s\n",
		rep.Date, orNone(rep.Commit), rep.Machine.GOOS, rep.Machine.GOARCH, rep.Machine.CPUs, rep.Machine.Go, s.Duration, s.Warmup, what)
	if rep.Machine.LoadAvgStart != nil {
		fmt.Fprintf(w, "load average before %s, after %s\n", loadString(rep.Machine.LoadAvgStart), loadString(rep.Machine.LoadAvgEnd))
	}
	ordered := slices.Clone(rep.Rows)
	rowIndex := map[string]int{}
	for i, r := range rows {
		rowIndex[r.name] = i
	}
	slices.SortStableFunc(ordered, func(a, b result) int { return rowIndex[a.Name] - rowIndex[b.Name] })
	nameW, setupW := len("row"), len("setup")
	for _, r := range ordered {
		nameW, setupW = max(nameW, len(r.Name)), max(setupW, len(r.Setup))
	}
	fmt.Fprintf(w, "%-*s  %-*s  %5s  %9s  %8s  %8s  %6s  %9s  %8s  %8s  %8s  %8s  %6s\n", nameW, "row", setupW, "setup", "conns", "req/s", "p50 ms", "p99 ms", "errors", "vs sqlite", "srv cpu", "pg cpu", "redis", "cli cpu", "fallbk")
	for _, r := range ordered {
		fmt.Fprintf(w, "%-*s  %-*s  %5d  %9.1f  %8.2f  %8.2f  %6d  %9.3f  %8s  %8s  %8s  %8s  %6s\n", nameW, r.Name, setupW, r.Setup, r.Connections, r.RPS, r.P50Ms, r.P99Ms, r.Errors, r.Ratio,
			cpuString(r.ServerCPUMsPerReq), cpuString(r.PostgresCPUMsPerReq), cpuString(r.RedisCPUMsPerReq), cpuString(r.ClientCPUMsPerReq), fallbackString(r))
	}
	fmt.Fprintln(w, "cpu: CPU ms per request of the instances (all of them), their PostgreSQL backends, the Redis server, the load client")
	fmt.Fprintf(w, "fallbk: limiter decisions made without Redis (a call past ASSISTANT_REDIS_TIMEOUT=%s, or the breaker open), warm-up included; total of the repeats\n", orNone(s.RedisTimeout))
	fallbacks, redisErrors := 0, 0
	for _, g := range rep.Groups {
		fallbacks += g.RedisFallbackDecisions
		redisErrors += g.RedisErrors
	}
	fmt.Fprintf(w, "Redis over the whole run: %d limiter decisions fell back to the instance, %d Redis calls failed\n", fallbacks, redisErrors)
	for _, r := range ordered {
		if r.FirstError != "" {
			fmt.Fprintf(w, "%s on %s: %d errors (%d non-2xx, %d transport), first: %s\n", r.Name, r.Setup, r.Errors, r.Non2xx, r.TransportErrors, r.FirstError)
		}
	}
}
