package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// target is one request the load client sends over and over; with bodies,
// each request sends the next of them in turn instead of body.
type target struct {
	method string
	url    string
	body   []byte
	bodies *bodyCycle
	header http.Header
	// vary, when set, draws each request's URL and body instead (the
	// soak's varied inputs).
	vary func() (url string, body []byte)
}

// bodyCycle hands out request bodies in turn, to every worker of a row.
type bodyCycle struct {
	bodies [][]byte
	next   atomic.Uint64
}

func (c *bodyCycle) take() []byte {
	return c.bodies[(c.next.Add(1)-1)%uint64(len(c.bodies))]
}

func (t target) request(ctx context.Context) (*http.Request, error) {
	var body io.Reader
	u := t.url
	switch {
	case t.vary != nil:
		var b []byte
		if u, b = t.vary(); b != nil {
			body = bytes.NewReader(b)
		}
	case t.bodies != nil:
		body = bytes.NewReader(t.bodies.take())
	case t.body != nil:
		body = bytes.NewReader(t.body)
	}
	req, err := http.NewRequestWithContext(ctx, t.method, u, body)
	if err != nil {
		return nil, err
	}
	for k, v := range t.header {
		req.Header[k] = v
	}
	return req, nil
}

// newClient returns an HTTP client for conns keep-alive connections to one
// host: as many idle connections kept as there are workers (the default
// Transport keeps 2 per host, so 32 workers would keep reconnecting), no
// more connections than workers, no proxy from the environment, no gzip
// (the service does not compress; asking would only add a header), and a
// 64 KiB read buffer per connection, so a 29 KB answer (a 20-token resolve)
// is read in one or two system calls rather than eight.
func newClient(conns int) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        conns,
			MaxIdleConnsPerHost: conns,
			MaxConnsPerHost:     conns,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
			ForceAttemptHTTP2:   false,
			ReadBufferSize:      64 << 10,
		},
		Timeout: 60 * time.Second,
	}
}

// measurement is what one row's load produced.
type measurement struct {
	samples         []time.Duration // latency of each measured request
	elapsed         time.Duration   // from the end of the warm-up to the last measured response
	non2xx          int
	transportErrors int
	firstError      string
	// cpu is the CPU time each probe's processes used over the same time
	// as elapsed (probeServer: the serving processes, probeClient: this
	// one); cpuOK is false when a required probe could not be read.
	cpu   map[string]time.Duration
	cpuOK bool
}

// Names of the CPU probes.
const (
	probeServer   = "server"   // the assistant serve processes (or the bare handler) of the row
	probeClient   = "client"   // this process
	probePostgres = "postgres" // the PostgreSQL backends of the instances (scale-out mode)
	probeRedis    = "redis"    // the private redis-server (scale-out mode)
)

// cpuProbe names processes whose CPU time a row adds up. pids is asked at
// the end of the warm-up and again after the last response, so processes
// that start during the row count from zero. A process of a required
// probe that cannot be read makes the row's CPU figures unknown; one of an
// optional probe is left out (a PostgreSQL backend that has exited).
type cpuProbe struct {
	name     string
	pids     func() []int
	optional bool
}

// fixedPIDs is a probe's pids when they do not change.
func fixedPIDs(pids ...int) func() []int { return func() []int { return pids } }

// serverProbes are the probes of a row served by the processes pids: those
// processes and this one.
func serverProbes(pids ...int) []cpuProbe {
	return []cpuProbe{{name: probeServer, pids: fixedPIDs(pids...)}, {name: probeClient, pids: fixedPIDs(os.Getpid())}}
}

// cpuSample is the CPU time used so far by each process of each probe.
type cpuSample map[string]map[int]time.Duration

// sampleCPU reads the CPU time of the probes' processes; ok is false when
// a process of a required probe could not be read.
func sampleCPU(probes []cpuProbe) (s cpuSample, ok bool) {
	s, ok = cpuSample{}, true
	for _, p := range probes {
		s[p.name] = map[int]time.Duration{}
		for _, pid := range p.pids() {
			t, read := cpuTime(pid)
			switch {
			case read:
				s[p.name][pid] = t
			case !p.optional:
				ok = false
			}
		}
	}
	return s, ok
}

// cpuSince is the CPU time each probe used from before to after: the sum
// over the processes of after of their growth, counting a process absent
// from before from zero (it started in between). A process gone by after
// is not counted.
func cpuSince(before, after cpuSample) map[string]time.Duration {
	out := map[string]time.Duration{}
	for name, pids := range after {
		var d time.Duration
		for pid, t := range pids {
			d += t - before[name][pid]
		}
		out[name] = d
	}
	return out
}

// endpoint is a server the load client sends a row's request to, with the
// keep-alive pool of connections to it.
type endpoint struct {
	client *http.Client
	t      target
}

// roundRobin returns a function that, called concurrently, gives 0, 1,
// ..., n-1, 0, 1, ... in turn.
func roundRobin(n int) func() int {
	if n <= 1 {
		return func() int { return 0 }
	}
	var next atomic.Uint64
	return func() int { return int((next.Add(1) - 1) % uint64(n)) }
}

// load runs conns workers, each sending its endpoint's request one at a
// time (a closed loop: a slow response delays the next request of that
// worker), for warmup and then for duration. With several endpoints (the
// instances of the scale-out mode) each request goes to the next endpoint
// in turn, over that endpoint's own keep-alive pool. Only requests that
// start after the warm-up count; each counts when its response body has
// been read to the end. A request that starts before the deadline is
// finished and counted, so elapsed runs to the last response rather than
// to the deadline. The CPU time of the probes' processes (none: not
// measured) is sampled at the end of the warm-up and after the last
// response.
func load(ctx context.Context, eps []endpoint, conns int, warmup, duration time.Duration, probes []cpuProbe) measurement {
	start := time.Now()
	measureFrom := start.Add(warmup)
	deadline := measureFrom.Add(duration)
	var before cpuSample
	var beforeOK bool
	sampled := make(chan struct{})
	time.AfterFunc(warmup, func() {
		if len(probes) > 0 {
			before, beforeOK = sampleCPU(probes)
		}
		close(sampled)
	})
	next := roundRobin(len(eps))

	type worker struct {
		samples         []time.Duration
		last            time.Time
		non2xx          int
		transportErrors int
		firstError      string
	}
	workers := make([]worker, conns)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Add(1)
		go func(w *worker) {
			defer wg.Done()
			for {
				t0 := time.Now()
				if !t0.Before(deadline) || ctx.Err() != nil {
					return
				}
				ep := eps[next()]
				status, err := do(ctx, ep.client, ep.t)
				t1 := time.Now()
				if t0.Before(measureFrom) {
					continue
				}
				w.samples = append(w.samples, t1.Sub(t0))
				w.last = t1
				switch {
				case err != nil:
					w.transportErrors++
					if w.firstError == "" {
						w.firstError = err.Error()
					}
					time.Sleep(10 * time.Millisecond) // a server that is down is not hammered
				case status < 200 || status > 299:
					w.non2xx++
					if w.firstError == "" {
						w.firstError = fmt.Sprintf("status %d", status)
					}
				}
			}
		}(&workers[i])
	}
	wg.Wait()
	<-sampled

	var m measurement
	if len(probes) > 0 {
		after, afterOK := sampleCPU(probes)
		m.cpu, m.cpuOK = cpuSince(before, after), beforeOK && afterOK
	}
	last := measureFrom
	for _, w := range workers {
		m.samples = append(m.samples, w.samples...)
		m.non2xx += w.non2xx
		m.transportErrors += w.transportErrors
		if m.firstError == "" {
			m.firstError = w.firstError
		}
		if w.last.After(last) {
			last = w.last
		}
	}
	m.elapsed = last.Sub(measureFrom)
	return m
}

// do sends one request and reads the whole response, so the connection is
// reused.
func do(ctx context.Context, client *http.Client, t target) (int, error) {
	req, err := t.request(ctx)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, err
}

// fetch sends one request and returns its status and body (for preflight
// checks and seeding).
func fetch(ctx context.Context, client *http.Client, t target) (int, []byte, error) {
	req, err := t.request(ctx)
	if err != nil {
		return 0, nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// percentile returns the p-th percentile (0 < p <= 100) of samples by the
// nearest-rank method: the smallest sample such that at least p% of the
// samples are at or below it. It sorts samples in place; it returns 0 for
// no samples.
func percentile(samples []time.Duration, p float64) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	slices.Sort(samples)
	rank := int(math.Ceil(p / 100 * float64(len(samples))))
	rank = min(max(rank, 1), len(samples))
	return samples[rank-1]
}

// summarize turns a measurement into the figures of a row (ratio left 0:
// it needs the bare handler's figure of the same run).
func summarize(m measurement) result {
	r := result{
		Requests:        len(m.samples),
		Non2xx:          m.non2xx,
		TransportErrors: m.transportErrors,
		Errors:          m.non2xx + m.transportErrors,
		FirstError:      m.firstError,
	}
	if m.elapsed > 0 {
		r.RPS = round(float64(len(m.samples))/m.elapsed.Seconds(), 1)
	}
	if m.cpuOK && len(m.samples) > 0 {
		perReq := func(d time.Duration) float64 { return round(ms(d)/float64(len(m.samples)), 4) }
		r.ServerCPUMsPerReq = perReq(m.cpu[probeServer])
		r.ClientCPUMsPerReq = perReq(m.cpu[probeClient])
		r.PostgresCPUMsPerReq = perReq(m.cpu[probePostgres])
		r.RedisCPUMsPerReq = perReq(m.cpu[probeRedis])
	}
	r.P50Ms = ms(percentile(m.samples, 50))
	r.P99Ms = ms(percentile(m.samples, 99))
	return r
}

func ms(d time.Duration) float64 { return round(float64(d)/float64(time.Millisecond), 3) }

func round(x float64, digits int) float64 {
	f := math.Pow(10, float64(digits))
	return math.Round(x*f) / f
}
