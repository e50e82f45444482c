package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/postgres/pgtest"
)

// The scale-out mode end to end: three `assistant serve` processes on
// loopback ports sharing one PostgreSQL schema and one Redis of their own
// (started here, so that the test can stop and kill it without touching
// anyone else's). It runs where ASSISTANT_TEST_POSTGRES_URL is set and
// redis-server is installed; under CI=true both are required.

// cluster is the three instances and what they share.
type cluster struct {
	bin      string
	env      []string // the shared settings
	bases    []string // one base URL per instance
	procs    []*exec.Cmd
	redis    *exec.Cmd
	redisDir string
	redisAdr string
}

func requireScaleOut(t *testing.T) (pgURL, redisServer string) {
	t.Helper()
	if testing.Short() {
		t.Skip("multi-instance test: not in -short")
	}
	pgURL = os.Getenv("ASSISTANT_TEST_POSTGRES_URL")
	redisServer, _ = exec.LookPath("redis-server")
	missing := ""
	switch {
	case pgURL == "":
		missing = "ASSISTANT_TEST_POSTGRES_URL"
	case redisServer == "":
		missing = "redis-server"
	}
	if missing != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("multi-instance test: %s is required under CI", missing)
		}
		t.Skipf("multi-instance test: %s is missing", missing)
	}
	return pgURL, redisServer
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// startRedis starts (or restarts, on the same port) the cluster's Redis.
func (c *cluster) startRedis(t *testing.T, redisServer string) {
	t.Helper()
	_, port, _ := net.SplitHostPort(c.redisAdr)
	cmd := exec.Command(redisServer, "--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no", "--dir", c.redisDir)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c.redis = cmd
	for i := 0; ; i++ {
		if conn, err := net.Dial("tcp", c.redisAdr); err == nil {
			conn.Close()
			return
		}
		if i > 200 {
			t.Fatal("redis-server did not start")
		}
		time.Sleep(25 * time.Millisecond)
	}
}

func (c *cluster) killRedis() {
	if c.redis != nil && c.redis.Process != nil {
		c.redis.Process.Kill()
		c.redis.Wait()
		c.redis = nil
	}
}

// cli runs a subcommand of the binary against the shared database.
func (c *cluster) cli(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(c.bin, args...)
	cmd.Env = c.env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("assistant %v: %v\n%s", args, err, errOut.String())
	}
	return out.String()
}

func (c *cluster) newKey(t *testing.T, name string) (id, key string) {
	t.Helper()
	var created struct{ ID, Key string }
	if err := json.Unmarshal([]byte(c.cli(t, "keys", "create", "--workspace", "default", "--name", name, "--json")), &created); err != nil {
		t.Fatal(err)
	}
	return created.ID, created.Key
}

func startCluster(t *testing.T, n int) *cluster {
	t.Helper()
	_, redisServer := requireScaleOut(t)
	dir := t.TempDir()
	c := &cluster{bin: filepath.Join(dir, "assistant"), redisDir: dir, redisAdr: "127.0.0.1:" + freePort(t)}
	build := exec.Command("go", "build", "-o", c.bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	c.startRedis(t, redisServer)
	t.Cleanup(c.killRedis)
	c.env = append(os.Environ(),
		"ASSISTANT_DATABASE_URL="+pgtest.URL(t),
		"ASSISTANT_REDIS_URL=redis://"+c.redisAdr+"/0",
		"ASSISTANT_DATA_DIR="+filepath.Join(dir, "data"),
		"ASSISTANT_LOG_LEVEL=warn",
		// Generous for a loaded CI machine under the race detector: a
		// Redis call that times out is decided by the instance alone,
		// which would make the shared count inexact (45 ms once admitted
		// 100 of a key's 60 across three instances). A hung Redis still
		// answers within the 2 s the hung-Redis check allows.
		"ASSISTANT_REDIS_TIMEOUT=250ms",
		// Public per-IP limits off: every request here comes from one
		// address, and this test is about the per-key limit.
		"ASSISTANT_PUBLIC_SOFT_LIMIT=0", "ASSISTANT_PUBLIC_HARD_LIMIT=0",
	)
	// All instances start at once: migrations run under an advisory lock.
	var wg sync.WaitGroup
	c.bases = make([]string, n)
	c.procs = make([]*exec.Cmd, n)
	for i := range n {
		cmd := exec.Command(c.bin, "serve")
		cmd.Env = append(slices.Clone(c.env), "ASSISTANT_ADDR=127.0.0.1:0")
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		c.procs[i] = cmd
		t.Cleanup(func() {
			cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
			}
		})
		wg.Go(func() {
			serving := regexp.MustCompile(`serving on (http://[0-9.:]+)`)
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				if m := serving.FindStringSubmatch(sc.Text()); m != nil {
					c.bases[i] = m[1]
					break
				}
			}
			go io.Copy(io.Discard, stdout)
		})
	}
	wg.Wait()
	for i, b := range c.bases {
		if b == "" {
			t.Fatalf("instance %d did not start", i+1)
		}
	}
	return c
}

// fallbacks sums, per instance, the limiter decisions made without Redis
// (from /metrics).
func (c *cluster) fallbacks(t *testing.T) []int {
	t.Helper()
	line := regexp.MustCompile(`(?m)^assistant_redis_fallback_decisions_total\{[^}]*\} ([0-9.e+]+)$`)
	out := make([]int, len(c.bases))
	for i, base := range c.bases {
		r := send(t, "GET", base+"/metrics", "", "")
		for _, m := range line.FindAllStringSubmatch(string(r.body), -1) {
			f, _ := strconv.ParseFloat(m[1], 64)
			out[i] += int(f)
		}
	}
	return out
}

type reply struct {
	status     int
	retryAfter string
	body       []byte
	took       time.Duration
}

func send(t *testing.T, method, url, key, body string) reply {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: b, took: time.Since(start)}
}

const verifyBody = `{"text":"The Theory of Constraints says a system's output is set by its constraint [framework:theory-of-constraints]."}`

func TestScaleOutThreeInstances(t *testing.T) {
	c := startCluster(t, 3)

	// Every instance has served a limited request before the counts
	// begin, as in a deployment that has been up for a moment.
	_, warm := c.newKey(t, "warm-up")
	for _, base := range c.bases {
		if r := send(t, "POST", base+"/api/v1/verify", warm, verifyBody); r.status != 200 {
			t.Fatalf("warm-up: %d %s", r.status, r.body)
		}
	}

	t.Run("one key's limit is exact across the instances", func(t *testing.T) {
		_, key := c.newKey(t, "limit")
		var admitted, refused int
		var cited []string
		start := time.Now()
		for i := range 200 {
			r := send(t, "POST", c.bases[i%3]+"/api/v1/chat", key, fmt.Sprintf(`{"message":"Orders pile up at our packing station and ship late (%d). What should we do first?","mode":"operator"}`, i))
			switch r.status {
			case 200:
				admitted++
				var resp struct {
					ResponseID string `json:"response_id"`
					RagHits    []struct {
						Source string `json:"source"`
					} `json:"rag_hits"`
				}
				if err := json.Unmarshal(r.body, &resp); err != nil {
					t.Fatal(err)
				}
				for _, h := range resp.RagHits {
					cited = append(cited, h.Source)
				}
			case 429:
				refused++
				if n, err := strconv.Atoi(r.retryAfter); err != nil || n < 1 {
					t.Errorf("429 with Retry-After %q", r.retryAfter)
				}
			default:
				t.Fatalf("request %d: status %d: %s", i, r.status, r.body)
			}
		}
		t.Logf("200 chats over 3 instances in %v: %d admitted, %d refused; decisions made without Redis: %v",
			time.Since(start).Round(time.Millisecond), admitted, refused, c.fallbacks(t))
		if time.Since(start) > time.Minute {
			t.Skip("the 200 requests took more than the window; the count is not meaningful")
		}
		if admitted != 60 || refused != 140 {
			t.Errorf("admitted %d and refused %d, want exactly 60 and 140 (decisions made without Redis: %v)", admitted, refused, c.fallbacks(t))
		}

		// Every citation recorded through any instance counts once: the
		// leaderboard, read from each instance, adds up to the rag hits
		// of the admitted answers (each lists an entity once).
		want := map[string]int{}
		for _, s := range cited {
			want[s]++
		}
		// The leaderboard's window ends at the current minute (so that
		// edges can cache it): wait until the turns are inside it.
		time.Sleep(time.Until(time.Now().Truncate(time.Minute).Add(time.Minute + time.Second)))
		for i, base := range c.bases {
			r := send(t, "GET", base+"/api/assistant/v1/leaderboard?limit=50", "", "")
			var board struct {
				Entries []struct {
					Token     string `json:"token"`
					Citations int    `json:"citations"`
				} `json:"entries"`
			}
			if err := json.Unmarshal(r.body, &board); err != nil {
				t.Fatalf("leaderboard: %v: %s", err, r.body)
			}
			got := map[string]int{}
			for _, e := range board.Entries {
				got[e.Token] = e.Citations
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("instance %d's leaderboard %v, want %v\n%s", i+1, got, want, r.body)
			}
		}
	})

	t.Run("a revoked key is refused everywhere within a second", func(t *testing.T) {
		id, key := c.newKey(t, "revoke")
		for _, base := range c.bases { // every instance has the key cached
			if r := send(t, "GET", base+"/api/v1/key", key, ""); r.status != 200 {
				t.Fatalf("fresh key: %d", r.status)
			}
		}
		c.cli(t, "keys", "revoke", id)
		revoked := time.Now()
		for i, base := range c.bases {
			for send(t, "GET", base+"/api/v1/key", key, "").status != 401 {
				if time.Since(revoked) > time.Second {
					t.Fatalf("instance %d still accepts the key a second after it was revoked", i+1)
				}
				time.Sleep(10 * time.Millisecond)
			}
			t.Logf("instance %d refuses the revoked key %v after the revoke", i+1, time.Since(revoked).Round(time.Millisecond))
		}
	})

	t.Run("without Redis the service keeps answering, and exact limits return with it", func(t *testing.T) {
		_, key := c.newKey(t, "redis-down")
		check := func(phase string, n int) (admitted int) {
			t.Helper()
			var slowest time.Duration
			for i := range n {
				r := send(t, "POST", c.bases[i%3]+"/api/v1/verify", key, verifyBody)
				if r.status >= 500 {
					t.Fatalf("%s: request %d: status %d: %s", phase, i, r.status, r.body)
				}
				if r.status == 200 {
					admitted++
				}
				slowest = max(slowest, r.took)
			}
			t.Logf("%s: %d of %d admitted, slowest request %v", phase, admitted, n, slowest.Round(time.Millisecond))
			// A limiter decision may take tens of milliseconds when Redis
			// hangs; a request that took seconds would mean a limiter
			// waited on it. Generous, since the machine is shared.
			if slowest > 2*time.Second {
				t.Errorf("%s: a request took %v", phase, slowest)
			}
			return admitted
		}
		check("redis up", 30)

		// Hung: the process is stopped, connections open but never answer.
		c.redis.Process.Signal(syscall.SIGSTOP)
		check("redis hung", 30)
		c.redis.Process.Signal(syscall.SIGCONT)

		// Dead: connections are refused.
		c.killRedis()
		check("redis dead", 30)

		// Back, empty (it keeps nothing): exact shared limits again once
		// every instance has noticed. Use a new key so the count starts
		// at zero in Redis.
		_, redisServer := requireScaleOut(t)
		c.startRedis(t, redisServer)
		time.Sleep(3 * time.Second) // past any back-off of the instances' Redis clients
		_, fresh := c.newKey(t, "redis-back")
		key = fresh
		if got := check("redis back", 70); got != 60 {
			t.Errorf("after Redis returned: %d of 70 admitted, want exactly 60", got)
		}
	})
}
