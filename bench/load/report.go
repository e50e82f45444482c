package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// result is one row's figures, in one repeat or as the median of repeats.
type result struct {
	// Setup and Instances say what served the row in the scale-out mode
	// (-scaleout): "sqlite-1", "postgres-redis-1" or "postgres-redis-3",
	// and how many instances; both are left out otherwise.
	Setup       string `json:"setup,omitempty"`
	Instances   int    `json:"instances,omitempty"`
	Name        string `json:"name"`
	Endpoint    string `json:"endpoint"`
	Connections int    `json:"connections"`
	// Requests is the number of requests measured (warm-up excluded).
	Requests int     `json:"requests"`
	RPS      float64 `json:"rps"`
	P50Ms    float64 `json:"p50_ms"`
	P99Ms    float64 `json:"p99_ms"`
	// Errors is Non2xx + TransportErrors; in the medians, the total over
	// the repeats.
	Errors          int `json:"errors"`
	Non2xx          int `json:"non_2xx"`
	TransportErrors int `json:"transport_errors"`
	// Ratio is RPS over the mean req/s of the bare handler's two rows of
	// the same repeat; in the medians, the median of the repeats' ratios.
	Ratio float64 `json:"ratio"`
	// ServerCPUMsPerReq is the CPU time (user and system) the serving
	// process used while the row was measured, per request measured: its
	// work per request, which a busy machine changes much less than req/s
	// (in steps of 10 ms over the whole row). ClientCPUMsPerReq is the same
	// for the load client's process. Both are omitted where /proc is not
	// there to read.
	ServerCPUMsPerReq float64 `json:"server_cpu_ms_per_req,omitempty"`
	ClientCPUMsPerReq float64 `json:"client_cpu_ms_per_req,omitempty"`
	// PostgresCPUMsPerReq and RedisCPUMsPerReq (scale-out mode only) are
	// the same for the PostgreSQL backend processes serving the instances'
	// connections and for the private redis-server.
	PostgresCPUMsPerReq float64 `json:"postgres_cpu_ms_per_req,omitempty"`
	RedisCPUMsPerReq    float64 `json:"redis_cpu_ms_per_req,omitempty"`
	// RedisFallbacks (scale-out mode, PostgreSQL + Redis setups) is the
	// number of limiter decisions the instances made without Redis during
	// the row, warm-up included (in the medians: the total).
	RedisFallbacks int    `json:"redis_fallbacks,omitempty"`
	FirstError     string `json:"first_error,omitempty"`
}

// report is the JSON result of a run.
type report struct {
	// Mode is "scaleout" for -scaleout, left out otherwise.
	Mode     string   `json:"mode,omitempty"`
	Date     string   `json:"date"`
	Commit   string   `json:"commit,omitempty"`
	Machine  machine  `json:"machine"`
	Settings settings `json:"settings"`
	// Rows are the medians over Runs (a single run's figures when Repeat
	// is 1).
	Rows []result   `json:"rows"`
	Runs [][]result `json:"runs"`
	// Groups (scale-out mode) are the setups of each repeat in the order
	// they ran, with their Redis fallbacks.
	Groups []groupInfo `json:"groups,omitempty"`
}

type machine struct {
	GOOS   string `json:"goos"`
	GOARCH string `json:"goarch"`
	CPUs   int    `json:"cpus"`
	Go     string `json:"go"`
	// LoadAvgStart and LoadAvgEnd are the 1, 5 and 15 minute load averages
	// before and after the run (Linux only): a loaded machine gives lower
	// absolute figures.
	LoadAvgStart []float64 `json:"load_avg_start,omitempty"`
	LoadAvgEnd   []float64 `json:"load_avg_end,omitempty"`
}

type settings struct {
	Duration        string `json:"duration"`
	Warmup          string `json:"warmup"`
	Repeat          int    `json:"repeat"`
	Conns           int    `json:"conns"`
	ChatConns       int    `json:"chat_conns"`
	UpstreamLatency string `json:"upstream_latency"`
	Citations       int    `json:"citations"`
	// Instances is the number of instances of the largest scale-out setup
	// (left out otherwise).
	Instances int `json:"instances,omitempty"`
	// RedisTimeout is the ASSISTANT_REDIS_TIMEOUT of the scale-out
	// instances (left out otherwise).
	RedisTimeout string `json:"redis_timeout,omitempty"`
}

// setRatios sets each result's Ratio: its req/s over the mean of the bare
// handler's rows.
func setRatios(results []result) {
	var sum float64
	var n int
	for _, r := range results {
		if strings.HasPrefix(r.Name, "bare") {
			sum += r.RPS
			n++
		}
	}
	if n == 0 || sum == 0 {
		return
	}
	base := sum / float64(n)
	for i := range results {
		results[i].Ratio = round(results[i].RPS/base, 4)
	}
}

// median returns the median of xs (the mean of the middle two for an even
// count; 0 for none). It does not change xs.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// medians combines the repeats row by row: the median of each figure, and
// the total of the errors (a median would hide a bad repeat). Every repeat
// has the same rows in the same order.
func medians(runs [][]result) []result {
	if len(runs) == 0 {
		return nil
	}
	out := make([]result, len(runs[0]))
	for i := range out {
		var requests, rps, p50, p99, ratio, srvCPU, cliCPU, pgCPU, redisCPU []float64
		first := runs[0][i]
		r := result{Setup: first.Setup, Instances: first.Instances, Name: first.Name, Endpoint: first.Endpoint, Connections: first.Connections}
		for _, run := range runs {
			x := run[i]
			requests = append(requests, float64(x.Requests))
			rps = append(rps, x.RPS)
			p50 = append(p50, x.P50Ms)
			p99 = append(p99, x.P99Ms)
			ratio = append(ratio, x.Ratio)
			srvCPU = append(srvCPU, x.ServerCPUMsPerReq)
			cliCPU = append(cliCPU, x.ClientCPUMsPerReq)
			pgCPU = append(pgCPU, x.PostgresCPUMsPerReq)
			redisCPU = append(redisCPU, x.RedisCPUMsPerReq)
			r.Errors += x.Errors
			r.Non2xx += x.Non2xx
			r.TransportErrors += x.TransportErrors
			r.RedisFallbacks += x.RedisFallbacks
			if r.FirstError == "" {
				r.FirstError = x.FirstError
			}
		}
		r.Requests = int(median(requests))
		r.RPS = round(median(rps), 1)
		r.P50Ms = round(median(p50), 3)
		r.P99Ms = round(median(p99), 3)
		r.Ratio = round(median(ratio), 4)
		r.ServerCPUMsPerReq = round(median(srvCPU), 4)
		r.ClientCPUMsPerReq = round(median(cliCPU), 4)
		r.PostgresCPUMsPerReq = round(median(pgCPU), 4)
		r.RedisCPUMsPerReq = round(median(redisCPU), 4)
		out[i] = r
	}
	return out
}

// printTable writes the medians as a table, with the run's settings and
// the machine's load.
func printTable(w io.Writer, rep report) {
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
	nameW, endW := len("row"), len("endpoint")
	for _, r := range rep.Rows {
		nameW, endW = max(nameW, len(r.Name)), max(endW, len(r.Endpoint))
	}
	fmt.Fprintf(w, "%-*s  %-*s  %5s  %9s  %8s  %8s  %6s  %6s  %8s  %8s\n", nameW, "row", endW, "endpoint", "conns", "req/s", "p50 ms", "p99 ms", "errors", "ratio", "srv cpu", "cli cpu")
	for _, r := range rep.Rows {
		fmt.Fprintf(w, "%-*s  %-*s  %5d  %9.1f  %8.2f  %8.2f  %6d  %6s  %8s  %8s\n", nameW, r.Name, endW, r.Endpoint, r.Connections, r.RPS, r.P50Ms, r.P99Ms, r.Errors, ratioString(r.Ratio),
			cpuString(r.ServerCPUMsPerReq), cpuString(r.ClientCPUMsPerReq))
	}
	fmt.Fprintln(w, "srv cpu, cli cpu: CPU ms per request of the serving process and of the load client")
	for _, r := range rep.Rows {
		if r.FirstError != "" {
			fmt.Fprintf(w, "%s: %d errors (%d non-2xx, %d transport), first: %s\n", r.Name, r.Errors, r.Non2xx, r.TransportErrors, r.FirstError)
		}
	}
}

func orNone(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func loadString(l []float64) string {
	if len(l) != 3 {
		return "unknown"
	}
	return fmt.Sprintf("%.2f %.2f %.2f", l[0], l[1], l[2])
}

// ratioString prints small ratios (the chat rows) with enough digits.
func ratioString(r float64) string {
	if r < 0.01 {
		return fmt.Sprintf("%.4f", r)
	}
	return fmt.Sprintf("%.3f", r)
}

// cpuString prints a CPU time per request in ms, "-" when not measured.
func cpuString(ms float64) string {
	switch {
	case ms == 0:
		return "-"
	case ms < 1:
		return fmt.Sprintf("%.3f", ms)
	}
	return fmt.Sprintf("%.2f", ms)
}

// writeJSON writes rep to path, creating its directory.
func writeJSON(path string, rep any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
