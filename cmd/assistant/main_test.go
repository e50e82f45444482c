package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a goroutine-safe buffer for the server's stderr.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// startServer runs `assistant serve` through run() on a free port with a
// fresh data directory and returns its base URL and a stop function that
// cancels it (as SIGTERM does) and returns run's error.
func startServer(t *testing.T, extraEnv map[string]string) (string, func() error) {
	t.Helper()
	dir := t.TempDir()
	env := map[string]string{"ASSISTANT_ADDR": "127.0.0.1:0", "ASSISTANT_DATA_DIR": dir}
	for k, v := range extraEnv {
		env[k] = v
	}
	ctx, cancel := context.WithCancel(context.Background())
	outR, outW := io.Pipe()
	stderr := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve"}, func(k string) string { return env[k] }, strings.NewReader(""), outW, stderr)
		outW.Close()
	}()
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	var base string
	select {
	case line := <-lines:
		base = regexp.MustCompile(`http://[0-9.:]+`).FindString(line)
	case err := <-done:
		t.Fatalf("serve exited early: %v\n%s", err, stderr)
	case <-time.After(60 * time.Second):
		t.Fatalf("serve did not start:\n%s", stderr)
	}
	var once sync.Once
	var runErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(60 * time.Second):
				runErr = fmt.Errorf("serve did not stop")
			}
		})
		return runErr
	}
	t.Cleanup(func() { stop() })
	return base, stop
}

func TestServeEndToEnd(t *testing.T) {
	base, stop := startServer(t, nil)

	resp, err := http.Get(base + "/api/assistant/v1/knowledge-stats")
	if err != nil {
		t.Fatal(err)
	}
	var st struct{ Total, Frameworks, Papers, Blogs int }
	json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if resp.StatusCode != 200 || st.Total == 0 || st.Total != st.Frameworks+st.Papers+st.Blogs {
		t.Errorf("knowledge-stats: %d %+v", resp.StatusCode, st)
	}

	resp, err = http.Post(base+"/api/assistant/v1/resolve", "application/json",
		strings.NewReader(`{"tokens":[{"type":"framework","slug":"theory-of-constraints"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"token":"framework:theory-of-constraints"`) {
		t.Errorf("resolve: %d %s", resp.StatusCode, body)
	}
	for _, path := range []string{"/api/assistant/openapi.json", "/api/assistant/docs/", "/healthz", "/readyz", "/metrics"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d", path, resp.StatusCode)
		}
	}
	if err := stop(); err != nil {
		t.Errorf("run returned %v after shutdown", err)
	}
}

// TestShutdownFinishesInFlightRequests holds a request open (its body still
// arriving) while the server is told to stop, and checks that the request
// is answered in full before run returns.
func TestShutdownFinishesInFlightRequests(t *testing.T) {
	base, stop := startServer(t, nil)
	bodyR, bodyW := io.Pipe()
	type result struct {
		status int
		body   string
		err    error
	}
	got := make(chan result, 1)
	go func() {
		req, _ := http.NewRequest("POST", base+"/api/assistant/v1/resolve", bodyR)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			got <- result{err: err}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- result{status: resp.StatusCode, body: string(b)}
	}()
	bodyW.Write([]byte(`{"tokens":[{"type":"framework",`))
	time.Sleep(200 * time.Millisecond) // let the server start reading the request

	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	select {
	case err := <-stopped:
		t.Fatalf("run returned (%v) while a request was in flight", err)
	case <-time.After(300 * time.Millisecond):
	}
	bodyW.Write([]byte(`"slug":"kaizen"}]}`))
	bodyW.Close()

	r := <-got
	if r.err != nil || r.status != 200 || !strings.Contains(r.body, "framework:kaizen") {
		t.Fatalf("in-flight request: %+v", r)
	}
	if err := <-stopped; err != nil {
		t.Errorf("run returned %v", err)
	}
}

func TestRefusesUnbuiltSettings(t *testing.T) {
	var stderr bytes.Buffer
	env := map[string]string{"ASSISTANT_DATA_DIR": t.TempDir(), "ASSISTANT_REDIS_URL": "redis://127.0.0.1:6379"}
	err := run(context.Background(), []string{"serve"}, func(k string) string { return env[k] }, nil, io.Discard, &stderr)
	if err == nil || !strings.Contains(err.Error(), "ASSISTANT_REDIS_URL") {
		t.Errorf("err = %v, want a refusal naming ASSISTANT_REDIS_URL", err)
	}
}

func TestSubcommands(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"version"}, func(string) string { return "" }, nil, &out, io.Discard); err != nil || !strings.HasPrefix(out.String(), "assistant ") {
		t.Errorf("version: %v %q", err, out.String())
	}
	out.Reset()
	if err := run(context.Background(), []string{"--help"}, func(string) string { return "" }, nil, &out, io.Discard); err != nil || !strings.Contains(out.String(), "serve") {
		t.Errorf("--help: %v %q", err, out.String())
	}
	var errOut bytes.Buffer
	if err := run(context.Background(), []string{"serve", "--help"}, func(string) string { return "" }, nil, io.Discard, &errOut); err != nil || !strings.Contains(errOut.String(), "ASSISTANT_ADDR") {
		t.Errorf("serve --help: %v %q", err, errOut.String())
	}
	err := run(context.Background(), []string{"frobnicate"}, func(string) string { return "" }, nil, io.Discard, io.Discard)
	if err == nil || exitCode(err) != 2 {
		t.Errorf("unknown subcommand: %v (exit %d)", err, exitCode(err))
	}
	dir := t.TempDir()
	out.Reset()
	if err := run(context.Background(), []string{"migrate", "--data-dir", dir}, func(string) string { return "" }, nil, &out, io.Discard); err != nil {
		t.Errorf("migrate: %v", err)
	}
	err = run(context.Background(), []string{"migrate", "--no-such-flag"}, func(string) string { return "" }, nil, io.Discard, io.Discard)
	if err == nil || exitCode(err) != 2 {
		t.Errorf("bad flag: %v", err)
	}
}
