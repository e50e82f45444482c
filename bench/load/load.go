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
	"time"
)

// target is one request the load client sends over and over.
type target struct {
	method string
	url    string
	body   []byte
	header http.Header
}

func (t target) request(ctx context.Context) (*http.Request, error) {
	var body io.Reader
	if t.body != nil {
		body = bytes.NewReader(t.body)
	}
	req, err := http.NewRequestWithContext(ctx, t.method, t.url, body)
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
// more connections than workers, no proxy from the environment, and no
// gzip (the service does not compress; asking would only add a header).
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
	// serverCPU and clientCPU are the CPU time the serving process and
	// this process used over the same time as elapsed; cpuOK is false when
	// they could not be read.
	serverCPU, clientCPU time.Duration
	cpuOK                bool
}

// cpuSample is the CPU time used so far by the serving process and by
// this one.
type cpuSample struct {
	server, client time.Duration
	ok             bool
}

func sampleCPU(serverPID int) cpuSample {
	s, ok1 := cpuTime(serverPID)
	c, ok2 := cpuTime(os.Getpid())
	return cpuSample{s, c, ok1 && ok2}
}

// load runs conns workers, each sending t one request at a time on its own
// keep-alive connection (a closed loop: a slow response delays the next
// request of that worker), for warmup and then for duration. Only requests
// that start after the warm-up count; each counts when its response body
// has been read to the end. A request that starts before the deadline is
// finished and counted, so elapsed runs to the last response rather than
// to the deadline. The CPU time of serverPID (0: none) and of this
// process is sampled at the end of the warm-up and after the last
// response.
func load(ctx context.Context, client *http.Client, t target, conns int, warmup, duration time.Duration, serverPID int) measurement {
	start := time.Now()
	measureFrom := start.Add(warmup)
	deadline := measureFrom.Add(duration)
	var before cpuSample
	sampled := make(chan struct{})
	time.AfterFunc(warmup, func() {
		if serverPID > 0 {
			before = sampleCPU(serverPID)
		}
		close(sampled)
	})

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
				status, err := do(ctx, client, t)
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
	if serverPID > 0 {
		after := sampleCPU(serverPID)
		m.serverCPU, m.clientCPU, m.cpuOK = after.server-before.server, after.client-before.client, before.ok && after.ok
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
		r.ServerCPUMsPerReq = round(ms(m.serverCPU)/float64(len(m.samples)), 4)
		r.ClientCPUMsPerReq = round(ms(m.clientCPU)/float64(len(m.samples)), 4)
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
