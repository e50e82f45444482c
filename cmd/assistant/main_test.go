package main

import (
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
// fresh data directory (unless extraEnv names one) and returns its base URL
// and a stop function that cancels it (as SIGTERM does) and returns run's
// error. Everything the server prints on stdout is in the returned buffer.
func startServer(t *testing.T, extraEnv map[string]string) (string, func() error) {
	base, _, stop := startServerOutput(t, extraEnv)
	return base, stop
}

func startServerOutput(t *testing.T, extraEnv map[string]string) (string, *syncBuffer, func() error) {
	t.Helper()
	env := map[string]string{"ASSISTANT_ADDR": "127.0.0.1:0", "ASSISTANT_DATA_DIR": t.TempDir()}
	for k, v := range extraEnv {
		env[k] = v
	}
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve"}, func(k string) string { return env[k] }, strings.NewReader(""), stdout, stderr)
	}()
	serving := regexp.MustCompile(`serving on (https?://[0-9.:]+)`)
	deadline := time.Now().Add(60 * time.Second)
	var base string
	for base == "" {
		if m := serving.FindStringSubmatch(stdout.String()); m != nil {
			base = m[1]
			break
		}
		select {
		case err := <-done:
			cancel()
			t.Fatalf("serve exited early: %v\n%s", err, stderr)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("serve did not start:\n%s", stderr)
		}
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
	return base, stdout, stop
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

func TestRefusesInvalidSettings(t *testing.T) {
	var stderr bytes.Buffer
	env := map[string]string{"ASSISTANT_DATA_DIR": t.TempDir(), "ASSISTANT_REDIS_URL": "127.0.0.1:6379"}
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

// TestKeyRevokedFromTheCommandLine runs `assistant keys` against the data
// directory of a running server: the created key works, and once `keys
// revoke` returns, the server refuses it within one second (D18).
func TestKeyRevokedFromTheCommandLine(t *testing.T) {
	dir := t.TempDir()
	base, _ := startServer(t, map[string]string{"ASSISTANT_DATA_DIR": dir})
	getenv := func(k string) string {
		if k == "ASSISTANT_DATA_DIR" {
			return dir
		}
		return ""
	}
	cli := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if err := run(context.Background(), args, getenv, strings.NewReader(""), &out, &errOut); err != nil {
			t.Fatalf("assistant %v: %v\n%s", args, err, errOut.String())
		}
		return out.String()
	}
	var created struct{ ID, Workspace, Name, Key string }
	if err := json.Unmarshal([]byte(cli("keys", "create", "--workspace", "acme", "--name", "ci", "--json")), &created); err != nil {
		t.Fatal(err)
	}
	plain := cli("keys", "create", "--workspace", "acme", "--name", "second")
	lines := strings.Split(strings.TrimSpace(plain), "\n")
	if !strings.HasPrefix(lines[len(lines)-1], "sk_service_") {
		t.Errorf("keys create: the key is not alone on the last line: %q", plain)
	}
	status := func(key string) int {
		req, _ := http.NewRequest("GET", base+"/api/v1/key", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := status(created.Key); s != 200 {
		t.Fatalf("new key: %d", s)
	}
	if list := cli("keys", "list", "--workspace", "acme"); !strings.Contains(list, "\n"+created.ID) && !strings.HasPrefix(list, created.ID) {
		t.Errorf("keys list does not start a line with the key id:\n%s", list)
	}
	var limited struct{ ID string }
	if err := json.Unmarshal([]byte(cli("keys", "create", "--workspace", "acme", "--name", "widget", "--limit", "5", "--json")), &limited); err != nil {
		t.Fatal(err)
	}
	if list := cli("keys", "list", "--workspace", "acme"); !regexp.MustCompile(`(?m)^` + limited.ID + `\s.*limit 5/min$`).MatchString(list) {
		t.Errorf("keys list does not show the key's own limit:\n%s", list)
	}
	var rows []struct {
		ID        string `json:"id"`
		RateLimit *int   `json:"rate_limit"`
	}
	if err := json.Unmarshal([]byte(cli("keys", "list", "--workspace", "acme", "--json")), &rows); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if want := r.ID == limited.ID; want != (r.RateLimit != nil && *r.RateLimit == 5) {
			t.Errorf("keys list --json: %s has rate_limit %v", r.ID, r.RateLimit)
		}
	}
	var errOut bytes.Buffer
	if err := run(context.Background(), []string{"keys", "create", "--workspace", "acme", "--name", "x", "--limit", "-1"}, getenv, strings.NewReader(""), io.Discard, &errOut); err == nil {
		t.Error("keys create --limit -1 succeeded")
	}
	cli("keys", "revoke", created.ID)
	revoked := time.Now()
	for status(created.Key) != 401 {
		if time.Since(revoked) > time.Second {
			t.Fatal("the key revoked from the command line still works after one second")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("refused %v after the revoke command returned", time.Since(revoked))
}

// TestProfileListener starts serve with ASSISTANT_PROFILE_ADDR: the
// runtime profiles answer on that address, and only there.
func TestProfileListener(t *testing.T) {
	base, stdout, _ := startServerOutput(t, map[string]string{"ASSISTANT_PROFILE_ADDR": "127.0.0.1:0"})
	announced := regexp.MustCompile(`runtime profiles on (http://[0-9.:]+)/debug/pprof/`)
	var profiles string
	for deadline := time.Now().Add(30 * time.Second); profiles == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := announced.FindStringSubmatch(stdout.String()); m != nil {
			profiles = m[1]
		}
	}
	if profiles == "" {
		t.Fatalf("no profile address printed:\n%s", stdout)
	}
	resp, err := http.Get(profiles + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "goroutine profile:") {
		t.Errorf("goroutine profile: %d %.200s", resp.StatusCode, body)
	}
	resp, err = http.Get(base + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("the API address serves profiles: %d", resp.StatusCode)
	}
}

func TestRefusesAProfileAddressWithoutPort(t *testing.T) {
	env := map[string]string{"ASSISTANT_DATA_DIR": t.TempDir(), "ASSISTANT_PROFILE_ADDR": "localhost"}
	err := run(context.Background(), []string{"serve"}, func(k string) string { return env[k] }, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "ASSISTANT_PROFILE_ADDR") {
		t.Errorf("err = %v, want a refusal naming ASSISTANT_PROFILE_ADDR", err)
	}
}
