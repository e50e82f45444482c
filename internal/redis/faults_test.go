package redis_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/redis"
)

// ownRedis is a redis-server this test started on a free port (never the
// shared one), which it can stop, restart empty, hang and resume.
type ownRedis struct {
	t    *testing.T
	bin  string
	port string
	dir  string
	cmd  *exec.Cmd
}

func startOwnRedis(t *testing.T) *ownRedis {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server is not installed, and CI must run the Redis fault tests")
		}
		t.Skip("redis-server is not installed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	r := &ownRedis{t: t, bin: bin, port: port, dir: t.TempDir()}
	r.start()
	t.Cleanup(r.stop)
	return r
}

func (r *ownRedis) url() string { return "redis://127.0.0.1:" + r.port + "/0" }

// start starts the server, empty (no persistence).
func (r *ownRedis) start() {
	r.t.Helper()
	r.cmd = exec.Command(r.bin, "--bind", "127.0.0.1", "--port", r.port, "--save", "", "--appendonly", "no", "--dir", r.dir)
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	for i := 0; ; i++ {
		if conn, err := net.Dial("tcp", "127.0.0.1:"+r.port); err == nil {
			conn.Close()
			return
		}
		if i > 200 {
			r.t.Fatal("redis-server did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stop kills the server (its process only, by its id).
func (r *ownRedis) stop() {
	if r.cmd != nil && r.cmd.Process != nil {
		r.cmd.Process.Signal(syscall.SIGCONT) // a hung server must wake to die
		r.cmd.Process.Kill()
		r.cmd.Wait()
		r.cmd = nil
	}
}

func (r *ownRedis) hang()   { r.cmd.Process.Signal(syscall.SIGSTOP) }
func (r *ownRedis) resume() { r.cmd.Process.Signal(syscall.SIGCONT) }

// maxInAnyWindow is the largest number of the sorted times that fall in
// one window [t, t+window).
func maxInAnyWindow(times []time.Time, window time.Duration) int {
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	best, j := 0, 0
	for i := range times {
		for times[i].Sub(times[j]) >= window {
			j++
		}
		best = max(best, i-j+1)
	}
	return best
}

// TestPerKeyLimitThroughRedisFaults: three instances share one key under
// steady load while their Redis (a server of the test's own) is stopped,
// restarted empty and hung. The window is 6 s, a tenth of the default
// minute, and the faults are scaled alike (the 15 s stop and 10 s
// hang become 1.5 s and 1 s), so every fault falls within one window.
// Admissions in any window never exceed N x limit (the bound
// docs/operations.md states), and are exactly the limit while Redis is
// healthy.
func TestPerKeyLimitThroughRedisFaults(t *testing.T) {
	const (
		limit     = 60
		window    = 6 * time.Second
		instances = 3
	)
	r := startOwnRedis(t)
	prefix := uniquePrefix(t)
	var limiters []*redis.SlidingWindow
	for range instances {
		c := newClient(t, r.url(), prefix) // the default 25 ms timeout and 1 s breaker
		limiters = append(limiters, redis.NewSlidingWindow(c.Client, "chat", limit, window, nil))
	}

	var mu sync.Mutex
	var admitted []time.Time
	requests := 0
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, lim := range limiters {
		wg.Go(func() {
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				// An admission counts at the time the request arrived, the
				// time the instance decides on (a decision may take a
				// timeout or two to come back).
				at := time.Now()
				d, err := lim.Allow(context.Background(), "key")
				if err != nil {
					t.Errorf("Allow: %v", err)
				}
				mu.Lock()
				requests++
				if d.Allowed {
					admitted = append(admitted, at)
				}
				mu.Unlock()
			}
		})
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(admitted) }

	time.Sleep(1500 * time.Millisecond) // healthy
	if n := count(); n != limit {
		t.Errorf("healthy Redis: %d admitted across %d instances, want exactly %d", n, instances, limit)
	}
	r.stop() // stopped
	time.Sleep(1500 * time.Millisecond)
	duringStop := count()
	r.start() // restarted, empty
	time.Sleep(1000 * time.Millisecond)
	afterRestart := count()
	r.hang() // hung
	time.Sleep(1000 * time.Millisecond)
	r.resume()
	time.Sleep(2000 * time.Millisecond)
	cancel()
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	worst := maxInAnyWindow(slices.Clone(admitted), window)
	t.Logf("%d requests, %d admitted; by the end of the stop %d, after the restart %d; at most %d in any %v window (bound %d = %d x %d)",
		requests, len(admitted), duringStop, afterRestart, worst, window, instances*limit, instances, limit)
	if worst > instances*limit {
		t.Errorf("%d admissions in one window, over the bound of %d", worst, instances*limit)
	}
	if duringStop <= limit {
		t.Errorf("no instance admitted on its own while Redis was stopped (%d in all)", duringStop)
	}
}

// TestExactWithSaturatedCPUs: with Redis healthy and every CPU busy
// (twice as many spinning processes as CPUs), 200 requests on one key
// from ten clients over three instances admit exactly 60.
func TestExactWithSaturatedCPUs(t *testing.T) {
	r := startOwnRedis(t)
	prefix := uniquePrefix(t)
	var limiters []*redis.SlidingWindow
	var clients []*testClient
	for range 3 {
		c := newClient(t, r.url(), prefix)
		clients = append(clients, c)
		if err := c.Prepare(context.Background()); err != nil { // as serve does at start
			t.Fatal(err)
		}
		limiters = append(limiters, redis.NewSlidingWindow(c.Client, "chat", 60, time.Minute, nil))
	}
	for range 2 * runtime.NumCPU() {
		hog := exec.Command("sh", "-c", "while :; do :; done")
		if err := hog.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { hog.Process.Kill(); hog.Wait() })
	}
	time.Sleep(200 * time.Millisecond)
	var mu sync.Mutex
	admitted := 0
	// Ten clients, each sending 20 requests one after the other, round
	// robin over the instances.
	var wg sync.WaitGroup
	for client := range 10 {
		wg.Go(func() {
			for i := range 20 {
				d, err := limiters[(client+i)%3].Allow(context.Background(), "key")
				if err != nil {
					t.Errorf("Allow: %v", err)
				}
				if d.Allowed {
					mu.Lock()
					admitted++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	fallbacks, errs := 0.0, 0.0
	for _, c := range clients {
		fallbacks += metric(t, c.reg, "assistant_redis_fallback_decisions_total")
		errs += metric(t, c.reg, "assistant_redis_errors_total")
	}
	t.Logf("%d of 200 admitted; %v Redis calls failed, %v decisions fell back", admitted, errs, fallbacks)
	if admitted != 60 {
		t.Errorf("%d of 200 admitted with the CPUs saturated, want exactly 60\n%s", admitted, clients[0].logs)
	}
}
