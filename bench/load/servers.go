package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// --- the roles this binary plays in a subprocess (-role) ---

// bareBody is the bare handler's answer: the size and shape of the
// knowledge-stats answer.
var bareBody = []byte(`{"total":184,"frameworks":86,"papers":48,"blogs":50}` + "\n")

// bareHandler is the yardstick: net/http writing a small constant JSON
// body, with no routing, middleware or logging. POST /sized is the
// yardstick of rows with large answers: it reads the request body and
// writes a constant JSON body of the ?bytes= asked (at most 1 MiB),
// built once, with its length, in one write.
func bareHandler() http.Handler {
	var mu sync.Mutex
	sized := map[int][]byte{}
	body := func(n int) []byte {
		mu.Lock()
		defer mu.Unlock()
		if b, ok := sized[n]; ok {
			return b
		}
		b := append([]byte(`{"pad":"`), bytes.Repeat([]byte("x"), max(0, n-11))...)
		b = append(b, "\"}\n"...)
		sized[n] = b
		return b
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/sized" {
			w.Write(bareBody)
			return
		}
		io.Copy(io.Discard, r.Body)
		n, err := strconv.Atoi(r.URL.Query().Get("bytes"))
		if err != nil || n < 0 || n > 1<<20 {
			http.Error(w, "bytes: 0 to 1048576", http.StatusBadRequest)
			return
		}
		b := body(n)
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.Write(b)
	})
}

// serveRole listens on addr and serves the role's handler until the
// process is stopped. It prints "listening on http://HOST:PORT" on stdout
// first, which startRole reads.
func serveRole(role, addr string, latency time.Duration) error {
	var h http.Handler
	switch role {
	case "bare":
		h = bareHandler()
	case "fake-openai":
		h = &fakeOpenAI{latency: latency}
	default:
		return fmt.Errorf("unknown -role %q (bare or fake-openai)", role)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	return srv.Serve(ln)
}

// fakeOpenAI is an OpenAI-compatible Chat Completions server (POST
// .../chat/completions, JSON, not streamed: the chat turn and the judge
// call the provider's Complete) that answers every call after a fixed
// latency, as a hosted model would, and plays a whole chat turn:
//
//  1. a call whose last message is the user's asks for one search_knowledge
//     tool call with the user's message as the query;
//  2. a call whose last message is a tool result answers with two
//     sentences taken from the summaries of the first two hits, each citing
//     its hit's token;
//  3. the judge's call (its system prompt starts "You check claims") gets
//     every claim verified, quoting the first passage of the claim's first
//     source, the strict JSON the judge accepts.
//
// Its answers are computed, never invented, so the service's citation
// check and judge accept them and the turn does the work a real one does.
type fakeOpenAI struct {
	latency time.Duration
}

type fakeMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

// text returns a message's content, sent as a string or as text parts.
func (m fakeMessage) text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct{ Text string }
	json.Unmarshal(m.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	var req struct {
		Model    string        `json:"model"`
		Messages []fakeMessage `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
		http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	time.Sleep(f.latency)
	message, finish := fakeReply(req.Messages)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-bench", "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "message": message, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150},
	})
}

// fakeReply computes the assistant message and finish reason for a
// conversation (see fakeOpenAI).
func fakeReply(msgs []fakeMessage) (map[string]any, string) {
	if msgs[0].Role == "system" && strings.HasPrefix(msgs[0].text(), "You check claims") {
		return map[string]any{"role": "assistant", "content": judgeReply(msgs[len(msgs)-1].text())}, "stop"
	}
	last := msgs[len(msgs)-1]
	if last.Role != "tool" {
		args, _ := json.Marshal(map[string]string{"query": last.text()})
		return map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
			"id": "call_bench_1", "type": "function",
			"function": map[string]any{"name": "search_knowledge", "arguments": string(args)},
		}}}, "tool_calls"
	}
	var result struct {
		Hits []struct{ Token, Summary string }
	}
	json.Unmarshal([]byte(last.text()), &result)
	var b strings.Builder
	for _, h := range result.Hits[:min(2, len(result.Hits))] {
		sentence := strings.TrimSpace(strings.SplitN(h.Summary, ". ", 2)[0])
		fmt.Fprintf(&b, "%s [%s]. ", strings.TrimSuffix(sentence, "."), h.Token)
	}
	if b.Len() == 0 {
		b.WriteString("Find the bottleneck first and exploit it before buying capacity [framework:theory-of-constraints].")
	}
	return map[string]any{"role": "assistant", "content": strings.TrimSpace(b.String())}, "stop"
}

var (
	sourceLine = regexp.MustCompile(`^\[(S\d+)\] `)
	claimLine  = regexp.MustCompile(`^(\d+)\. .*\(check against: (S\d+)`)
)

// judgeReply answers the judge's prompt (verify.judgePrompt: sources with
// their passages, then numbered claims each naming its sources): every
// claim verified, quoting its first source's first passage.
func judgeReply(prompt string) string {
	first := map[string]string{} // source label -> its first passage
	var label string
	type verdict struct {
		Claim    int     `json:"claim"`
		Status   string  `json:"status"`
		Evidence string  `json:"evidence"`
		Score    float64 `json:"score"`
	}
	verdicts := []verdict{}
	for _, line := range strings.Split(prompt, "\n") {
		if m := sourceLine.FindStringSubmatch(line); m != nil {
			label = m[1]
			continue
		}
		if p, ok := strings.CutPrefix(line, "- "); ok && label != "" && first[label] == "" {
			first[label] = p
			continue
		}
		if m := claimLine.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			verdicts = append(verdicts, verdict{Claim: n, Status: "verified", Evidence: first[m[2]], Score: 0.9})
		}
	}
	out, _ := json.Marshal(map[string]any{"verdicts": verdicts})
	return string(out)
}

// --- starting and stopping subprocesses ---

// process is a server running in a subprocess.
type process struct {
	name string
	url  string // http://HOST:PORT
	cmd  *exec.Cmd
	log  *bytes.Buffer // stderr, for the error message when it fails
	done chan error
}

// addrLine matches the line a server prints once it listens: ours
// ("listening on http://...") and assistant serve's ("... serving on
// http://... (API docs ...)").
var addrLine = regexp.MustCompile(`(?:listening|serving) on (http://[^\s]+)`)

// start runs cmd and waits until it prints the address it listens on.
func start(ctx context.Context, name string, cmd *exec.Cmd) (*process, error) {
	p := &process{name: name, cmd: cmd, log: &bytes.Buffer{}, done: make(chan error, 1)}
	found := make(chan string, 1)
	cmd.Stdout = &addrWriter{found: found}
	cmd.Stderr = &limitedWriter{b: p.log, max: 64 << 10}
	setProcAttr(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	go func() { p.done <- cmd.Wait() }()
	select {
	case p.url = <-found:
		return p, nil
	case err := <-p.done:
		return nil, fmt.Errorf("%s exited before listening: %v\n%s", name, err, p.log.String())
	case <-time.After(60 * time.Second):
		p.stop()
		return nil, fmt.Errorf("%s did not listen within 60s\n%s", name, p.log.String())
	case <-ctx.Done():
		p.stop()
		return nil, ctx.Err()
	}
}

// addrWriter is a server's stdout: it sends the first address the server
// says it listens on to found and discards the rest.
type addrWriter struct {
	found chan<- string
	line  []byte
	sent  bool
}

func (w *addrWriter) Write(p []byte) (int, error) {
	if w.sent {
		return len(p), nil
	}
	w.line = append(w.line, p...)
	for {
		i := bytes.IndexByte(w.line, '\n')
		if i < 0 {
			break
		}
		if m := addrLine.FindSubmatch(w.line[:i]); m != nil {
			w.found <- string(m[1])
			w.sent, w.line = true, nil
			break
		}
		w.line = w.line[i+1:]
	}
	return len(p), nil
}

// stop interrupts the process (assistant serve shuts down gracefully on
// it), killing it if it has not exited within 10 seconds.
func (p *process) stop() {
	if p == nil || p.cmd.Process == nil {
		return
	}
	p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// limitedWriter keeps the first max bytes written to it.
type limitedWriter struct {
	b   *bytes.Buffer
	max int
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	if room := w.max - w.b.Len(); room > 0 {
		w.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// startRole runs this binary again in a role (bare, fake-openai).
func startRole(ctx context.Context, role string, latency time.Duration) (*process, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-role", role, "-listen", "127.0.0.1:0", "-upstream-latency", latency.String())
	cmd.Env = os.Environ()
	return start(ctx, role, cmd)
}

// serviceEnv is the environment of every assistant command: the caller's
// without any ASSISTANT_* variable, plus settings.
func serviceEnv(settings map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ASSISTANT_") {
			env = append(env, kv)
		}
	}
	for k, v := range settings {
		env = append(env, k+"="+v)
	}
	return env
}

// Limits of the service under load. The limiters stay in the request path
// (their cost is part of what is measured) with limits no run reaches:
// the public per-IP tiers at a billion a minute (soft must not exceed
// hard), and the per-key chat window at 100,000 per second (the
// in-process window keeps one timestamp per allowed request of a key, so
// its limit is also its memory: 100,000 x 24 bytes).
const (
	publicLimit     = "1000000000"
	chatLimit       = "100000"
	chatLimitWindow = "1s"
)

// serviceSettings are the settings of every measured `assistant serve`:
// data dir, error-level logs, a port of its own, and the limits raised out
// of reach; extra adds to or overrides them.
func serviceSettings(dataDir string, extra map[string]string) map[string]string {
	settings := map[string]string{
		"ASSISTANT_DATA_DIR":          dataDir,
		"ASSISTANT_LOG_LEVEL":         "error",
		"ASSISTANT_ADDR":              "127.0.0.1:0",
		"ASSISTANT_PUBLIC_SOFT_LIMIT": publicLimit,
		"ASSISTANT_PUBLIC_HARD_LIMIT": publicLimit,
		"ASSISTANT_CHAT_RATE_LIMIT":   chatLimit,
		"ASSISTANT_CHAT_RATE_WINDOW":  chatLimitWindow,
	}
	for k, v := range extra {
		settings[k] = v
	}
	return settings
}

// startService creates an API key in a fresh data dir, records citations
// citation events in it (seedCitations) and starts `assistant serve` on
// it, with extra settings (the model provider). It returns the process and
// the key.
func startService(ctx context.Context, name, bin, dataDir string, citations int, extra map[string]string) (*process, string, error) {
	settings := serviceSettings(dataDir, extra)
	key, err := createKey(ctx, bin, settings)
	if err != nil {
		return nil, "", err
	}
	if err := seedCitations(ctx, dataDir, citations, time.Now()); err != nil {
		return nil, "", err
	}
	p, err := startServe(ctx, name, bin, settings)
	if err != nil {
		return nil, "", err
	}
	return p, key, nil
}

// createKey runs `assistant keys create` with settings and returns the
// key.
func createKey(ctx context.Context, bin string, settings map[string]string) (string, error) {
	keys := exec.CommandContext(ctx, bin, "keys", "create", "--workspace", "default", "--name", "bench", "--json")
	keys.Env = serviceEnv(settings)
	out, err := keys.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			err = fmt.Errorf("%w: %s", err, exit.Stderr)
		}
		return "", fmt.Errorf("assistant keys create: %w", err)
	}
	var created struct{ Key string }
	if err := json.Unmarshal(out, &created); err != nil || created.Key == "" {
		return "", fmt.Errorf("assistant keys create printed no key: %q", out)
	}
	return created.Key, nil
}

// startServe starts `assistant serve` with settings and waits until it is
// ready.
func startServe(ctx context.Context, name, bin string, settings map[string]string) (*process, error) {
	serve := exec.Command(bin, "serve")
	serve.Env = serviceEnv(settings)
	p, err := start(ctx, name, serve)
	if err != nil {
		return nil, err
	}
	// Listening is not ready: wait for /readyz (the database answers).
	client := &http.Client{Timeout: 2 * time.Second}
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := client.Get(p.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			p.stop()
			return nil, fmt.Errorf("%s is not ready after 30s: %v\n%s", name, err, p.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// buildService builds cmd/assistant into dir with go build, from the
// module root.
func buildService(ctx context.Context, root, dir string) (string, error) {
	bin := filepath.Join(dir, "assistant")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/assistant")
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/assistant: %w", err)
	}
	return bin, nil
}

// moduleRoot is the directory of the go.mod of the module this command
// belongs to, found from the working directory upwards.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.Contains(b, []byte("module github.com/constraintlab/assistant\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run it inside the assistant repository (no go.mod of github.com/constraintlab/assistant above the working directory)")
		}
		dir = parent
	}
}

// freeAddr returns a loopback address with a port no one listens on now.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// captureProfile asks the service whose profiles are served at addr for a
// CPU profile of the measured part of a row: it waits out the warm-up, then
// profiles for the duration (whole seconds, at least one) and writes the
// profile to path. The result arrives on the channel once written.
func captureProfile(ctx context.Context, addr string, warmup, duration time.Duration, path string) <-chan error {
	done := make(chan error, 1)
	go func() {
		select {
		case <-time.After(warmup):
		case <-ctx.Done():
			done <- ctx.Err()
			return
		}
		seconds := max(1, int(duration.Round(time.Second)/time.Second))
		req, err := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, seconds), nil)
		if err != nil {
			done <- err
			return
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- err
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			done <- fmt.Errorf("%s answered %s", addr, resp.Status)
			return
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			done <- err
			return
		}
		f, err := os.Create(path)
		if err != nil {
			done <- err
			return
		}
		if _, err := io.Copy(f, resp.Body); err != nil {
			f.Close()
			done <- err
			return
		}
		done <- f.Close()
	}()
	return done
}
