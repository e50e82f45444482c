package client

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The tests against a real service build cmd/assistant once per test run,
// create API keys with `assistant keys create` in a temporary data
// directory, and start `assistant serve` on a free loopback port. Each
// service is started on first use, shared by the tests, and stopped by
// TestMain:
//
//   - real: the builtin model and the default limits (60 a minute);
//   - limited: the builtin model with a per-key chat limit of 2 requests
//     per rolling 3 seconds (ASSISTANT_CHAT_RATE_LIMIT,
//     ASSISTANT_CHAT_RATE_WINDOW), so a real 429 is waited out in seconds;
//   - down: the openai provider pointed at a loopback port nothing listens
//     on, so every chat is the service's real 502.

type realService struct {
	base   string
	key    string
	key2   string // a second key, spent by the rate-limit test
	cmd    *exec.Cmd
	dir    string
	stderr *syncWriter
	err    error
}

var (
	buildOnce sync.Once
	buildDir  string // holds the binary
	buildBin  string
	buildErr  error

	realOnce, limitedOnce, downOnce sync.Once
	real, limited, down             realService
)

func TestMain(m *testing.M) {
	code := m.Run()
	for _, s := range []*realService{&real, &limited, &down} {
		s.stop()
	}
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

func (s *realService) stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			s.cmd.Process.Kill()
		}
	}
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// startReal builds and starts the builtin service (once); it skips in
// -short mode.
func startReal(t *testing.T) (base, key string) {
	t.Helper()
	s := startService(t, &realOnce, &real, nil)
	return s.base, s.key
}

// The per-key chat limit of the limited service.
const (
	limitedRate   = 2
	limitedWindow = 3 * time.Second
)

// startLimited starts the service whose per-key chat limit is limitedRate
// requests per rolling limitedWindow.
func startLimited(t *testing.T) *realService {
	t.Helper()
	return startService(t, &limitedOnce, &limited, func() ([]string, error) {
		return []string{
			"ASSISTANT_CHAT_RATE_LIMIT=" + strconv.Itoa(limitedRate),
			"ASSISTANT_CHAT_RATE_WINDOW=" + limitedWindow.String(),
		}, nil
	})
}

// startDown starts a service whose model provider cannot be reached: the
// openai provider with its base URL on a loopback port that was free a
// moment ago (connection refused).
func startDown(t *testing.T) *realService {
	t.Helper()
	return startService(t, &downOnce, &down, func() ([]string, error) {
		port, err := closedPort()
		if err != nil {
			return nil, err
		}
		return []string{
			"ASSISTANT_LLM_PROVIDER=openai",
			"ASSISTANT_LLM_BASE_URL=http://127.0.0.1:" + strconv.Itoa(port) + "/v1",
			"ASSISTANT_LLM_MODEL=unreachable-model",
			"ASSISTANT_LLM_API_KEY=sk-test-unused",
		}, nil
	})
}

// closedPort returns a loopback port nothing listens on: listen on port
// 0, read it, close.
func closedPort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	return port, ln.Close()
}

// startService starts s once, with the settings env returns (nil: none)
// on top of the defaults; it skips in -short mode.
func startService(t *testing.T, once *sync.Once, s *realService, env func() ([]string, error)) *realService {
	t.Helper()
	if testing.Short() {
		t.Skip("starts the real service; skipped with -short")
	}
	once.Do(func() {
		var extra []string
		if env != nil {
			if extra, s.err = env(); s.err != nil {
				return
			}
		}
		s.err = s.start(extra...)
	})
	if s.err != nil {
		t.Fatal(s.err)
	}
	return s
}

// build compiles cmd/assistant once per test run.
func build() (string, error) {
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "assistant-client-test-bin-")
		if buildErr != nil {
			return
		}
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Dir(filepath.Dir(file))
		trackSources(root)
		buildBin = filepath.Join(buildDir, "assistant")
		cmd := exec.Command("go", "build", "-o", buildBin, "./cmd/assistant")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("building the service: %v\n%s", err, out)
		}
	})
	return buildBin, buildErr
}

// start creates two keys and starts serve with the builtin provider, the
// defaults, and env on top (later entries win).
func (s *realService) start(env ...string) error {
	bin, err := build()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "assistant-client-test-")
	if err != nil {
		return err
	}
	s.dir = dir
	data := filepath.Join(dir, "data")
	env = append(append(os.Environ(), "ASSISTANT_DATA_DIR="+data, "ASSISTANT_ADDR=127.0.0.1:0", "ASSISTANT_LLM_PROVIDER=builtin"), env...)

	createKey := func(name string) (string, error) {
		keys := exec.Command(bin, "keys", "create", "--workspace", "w", "--name", name, "--json")
		keys.Env = env
		out, err := keys.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("creating a key: %v\n%s", err, out)
		}
		var created struct{ Key string }
		if err := json.Unmarshal(out, &created); err != nil || created.Key == "" {
			return "", fmt.Errorf("reading the created key %q: %v", out, err)
		}
		return created.Key, nil
	}
	if s.key, err = createKey("t"); err != nil {
		return err
	}
	if s.key2, err = createKey("t2"); err != nil {
		return err
	}

	s.cmd = exec.Command(bin, "serve")
	s.cmd.Env = env
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	s.stderr = &syncWriter{w: &strings.Builder{}}
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		return err
	}
	found := make(chan string, 1)
	go func() {
		serving := regexp.MustCompile(`serving on (http://[0-9.:]+)`)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := serving.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case s.base = <-found:
	case <-time.After(90 * time.Second):
		return fmt.Errorf("the service did not start:\n%s", s.stderr)
	}
	// Ready when the knowledge is loaded.
	c := New(s.base)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		if st, err := c.KnowledgeStats(ctx); err == nil && st.Total > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the service never served its knowledge")
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// trackSources opens every file the service is built from. go test caches
// a package's result keyed on the files its tests open; the service is
// built by a subprocess the cache cannot see, so without this a change to
// the service (a renamed JSON field) could be answered with a stale pass.
func trackSources(root string) {
	for _, name := range []string{"go.mod", "go.sum"} {
		if f, err := os.Open(filepath.Join(root, name)); err == nil {
			f.Close()
		}
	}
	for _, dir := range []string{"cmd", "internal"} {
		filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !strings.HasSuffix(path, "_test.go") {
				if f, err := os.Open(path); err == nil {
					f.Close()
				}
			}
			return nil
		})
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}

// strictClient decodes with DisallowUnknownFields, so a field the service
// sends that the client types lack fails the test (drift).
func strictClient(t *testing.T, withKey bool) *Client {
	base, key := startReal(t)
	opts := []Option{WithUserAgent("client-test")}
	if withKey {
		opts = append(opts, WithAPIKey(key))
	}
	c := New(base, opts...)
	c.strict = true
	return c
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}
