package client

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// The tests against a real service build cmd/assistant once per test run,
// create an API key with `assistant keys create` in a temporary data
// directory, and start `assistant serve` on a free loopback port. The
// server is shared by the tests and stopped by TestMain.

type realService struct {
	base string
	key  string
	key2 string // a second key, spent by the rate-limit test
	cmd  *exec.Cmd
	dir  string
	err  error
}

var (
	realOnce sync.Once
	real     realService
)

func TestMain(m *testing.M) {
	code := m.Run()
	if real.cmd != nil && real.cmd.Process != nil {
		real.cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { real.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			real.cmd.Process.Kill()
		}
	}
	if real.dir != "" {
		os.RemoveAll(real.dir)
	}
	os.Exit(code)
}

// startReal builds and starts the service (once); it skips in -short mode.
func startReal(t *testing.T) (base, key string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts the real service; skipped with -short")
	}
	realOnce.Do(func() { real.err = real.start() })
	if real.err != nil {
		t.Fatal(real.err)
	}
	return real.base, real.key
}

func (s *realService) start() error {
	dir, err := os.MkdirTemp("", "assistant-client-test-")
	if err != nil {
		return err
	}
	s.dir = dir
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(file))
	trackSources(root)
	bin := filepath.Join(dir, "assistant")
	build := exec.Command("go", "build", "-o", bin, "./cmd/assistant")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building the service: %v\n%s", err, out)
	}
	data := filepath.Join(dir, "data")
	env := append(os.Environ(), "ASSISTANT_DATA_DIR="+data, "ASSISTANT_ADDR=127.0.0.1:0", "ASSISTANT_LLM_PROVIDER=builtin")

	createKey := func(name string) (string, error) {
		keys := exec.Command(bin, "keys", "create", "--workspace", "w", "--name", name, "--json")
		keys.Env = env
		out, err := keys.Output()
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
	var stderr strings.Builder
	s.cmd.Stderr = &syncWriter{w: &stderr}
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
		return fmt.Errorf("the service did not start:\n%s", stderr.String())
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
