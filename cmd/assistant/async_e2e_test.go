package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// submitBurst sends n asynchronous turns at once, spread over the
// instances, and returns the ids of the admitted ones (202) and the
// number refused with 429. Every request must be answered one way or the
// other.
func submitBurst(t *testing.T, bases []string, key string, n int) (admitted []string, refused int) {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			body := `{"message":"Our packing station cannot keep up and orders ship late (` + strings.Repeat("x", i%7) + `)","mode":"operator"}`
			req, _ := http.NewRequest("POST", bases[i%len(bases)]+"/api/v1/chat", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Prefer", "respond-async")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			var st struct{ ID, State string }
			json.NewDecoder(resp.Body).Decode(&st)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case resp.StatusCode == http.StatusAccepted && st.State == "queued" && resp.Header.Get("Location") == "/api/v1/chat/turns/"+st.ID:
				admitted = append(admitted, st.ID)
			case resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") != "":
				refused++
			default:
				t.Errorf("an async submission answered %d %+v", resp.StatusCode, st)
			}
		})
	}
	wg.Wait()
	return admitted, refused
}

// checkTurnsDelivered waits until every admitted turn's chat.turn.completed
// has reached the receiver, then checks that each was delivered exactly
// once after failing attempts, and that polling agrees with the bodies.
func checkTurnsDelivered(t *testing.T, rc *receiver, bases []string, key string, admitted []string, exactlyOnce bool) {
	t.Helper()
	byTurn := func() map[string]json.RawMessage {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		out := map[string]json.RawMessage{}
		for _, ev := range rc.events {
			if ev.Type != "chat.turn.completed" {
				continue
			}
			var d struct {
				TurnID string `json:"turn_id"`
			}
			json.Unmarshal(ev.Data, &d)
			out[d.TurnID] = ev.Data
		}
		return out
	}
	waitFor(t, "every admitted turn's chat.turn.completed", func() bool { return len(byTurn()) >= len(admitted) })
	got := byTurn()
	rc.mu.Lock()
	if len(rc.bad) > 0 {
		t.Errorf("%d deliveries did not verify, e.g. %s", len(rc.bad), rc.bad[0])
	}
	for id, n := range rc.delivered {
		if exactlyOnce && n != 1 {
			t.Errorf("event %s was delivered %d times", id, n)
		}
		if exactlyOnce && rc.attempts[id] != rc.failFirst+1 {
			t.Errorf("event %s was attempted %d times, want %d", id, rc.attempts[id], rc.failFirst+1)
		}
	}
	rc.mu.Unlock()
	for i, id := range admitted {
		data, ok := got[id]
		if !ok {
			t.Errorf("turn %s: no chat.turn.completed", id)
			continue
		}
		var ev struct {
			Status   string          `json:"status"`
			Response json.RawMessage `json:"response"`
		}
		json.Unmarshal(data, &ev)
		req, _ := http.NewRequest("GET", bases[i%len(bases)]+"/api/v1/chat/turns/"+id, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			State    string          `json:"state"`
			Response json.RawMessage `json:"response"`
		}
		json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if resp.StatusCode != 200 || st.State != "succeeded" || ev.Status != "succeeded" || !sameJSON(st.Response, ev.Response) ||
			!strings.Contains(string(st.Response), `"confidence"`) {
			t.Errorf("turn %s: polled %d %s, delivered %s; the responses differ or the turn failed", id, resp.StatusCode, st.State, ev.Status)
		}
	}
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

// TestAsyncBurstSurvivesARestart: 500 asynchronous turns in a burst are
// all answered, 202 within the key's limit and 429 beyond; the server is
// stopped mid-burst and a new one on the same database finishes the work:
// every admitted turn yields exactly one delivered chat.turn.completed
// after the receiver failed its first three attempts, and polling agrees
// with the delivered bodies.
func TestAsyncBurstSurvivesARestart(t *testing.T) {
	if testing.Short() {
		t.Skip("a burst of 500 turns: not in -short")
	}
	dir := t.TempDir()
	env := map[string]string{"ASSISTANT_DATA_DIR": dir, "ASSISTANT_WEBHOOK_ALLOW_PRIVATE": "true", "ASSISTANT_WEBHOOK_RETRY_BASE": "20ms",
		"ASSISTANT_PUBLIC_SOFT_LIMIT": "0", "ASSISTANT_PUBLIC_HARD_LIMIT": "0", "ASSISTANT_LOG_LEVEL": "warn"}
	getenv := func(k string) string { return env[k] }
	var key struct{ ID, Key string }
	out, _, err := cliRun(getenv, "", "keys", "create", "--workspace", "default", "--name", "burst", "--json")
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal([]byte(out), &key)
	rc := newReceiver(t, 3)
	var ep struct{ Secret string }
	out, _, err = cliRun(getenv, "", "webhooks", "create", "--workspace", "default", "--url", rc.URL, "--events", "chat.turn.completed", "--json")
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal([]byte(out), &ep)
	rc.addSecret(ep.Secret)

	base, stop := startServer(t, env)
	admitted, refused := submitBurst(t, []string{base}, key.Key, 500)
	t.Logf("admitted %d, refused %d", len(admitted), refused)
	if len(admitted) != 60 || len(admitted)+refused != 500 {
		t.Fatalf("admitted %d and refused %d of 500; want 60 admitted (the key's limit) and the rest refused", len(admitted), refused)
	}
	// Stop mid-burst: as soon as the burst is answered, with turns still
	// queued and deliveries still failing.
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	rc.mu.Lock()
	before := len(rc.events)
	rc.mu.Unlock()
	t.Logf("%d of %d events delivered before the restart", before, len(admitted))
	if before == len(admitted) {
		t.Log("every event was delivered before the restart: the restart was not mid-burst")
	}
	base, _ = startServer(t, env)
	checkTurnsDelivered(t, rc, []string{base}, key.Key, admitted, true)
}

// TestThreeInstancesDeliverEachEventOnce: three instances on one
// PostgreSQL schema (and one Redis) share the outbox: a burst spread over
// them is admitted within the key's one limit, and every event is
// attempted exactly four times (three 500s, then a success) and
// delivered once: no two instances ever send the same delivery while all
// are up.
func TestThreeInstancesDeliverEachEventOnce(t *testing.T) {
	if _, redisServer := requireScaleOut(t); redisServer == "" {
		return
	}
	t.Setenv("ASSISTANT_WEBHOOK_KEY", strings.Repeat("k", 40))
	t.Setenv("ASSISTANT_WEBHOOK_ALLOW_PRIVATE", "true")
	t.Setenv("ASSISTANT_WEBHOOK_RETRY_BASE", "20ms")
	c := startCluster(t, 3)
	_, key := c.newKey(t, "burst")
	rc := newReceiver(t, 3)
	var ep struct{ Secret string }
	json.Unmarshal([]byte(c.cli(t, "webhooks", "create", "--workspace", "default", "--url", rc.URL, "--json")), &ep)
	rc.addSecret(ep.Secret)

	admitted, refused := submitBurst(t, c.bases, key, 500)
	t.Logf("admitted %d, refused %d", len(admitted), refused)
	if len(admitted) != 60 || len(admitted)+refused != 500 {
		t.Fatalf("admitted %d and refused %d of 500 across three instances; want the key's 60 admitted", len(admitted), refused)
	}
	checkTurnsDelivered(t, rc, c.bases, key, admitted, true)
	// The key.created of the burst's key came before the endpoint existed:
	// nothing else was delivered.
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.events) != len(admitted) {
		t.Errorf("%d events delivered, want %d", len(rc.events), len(admitted))
	}
}

// TestAsyncBurstSurvivesKill9: the instance delivering a burst is killed
// with SIGKILL mid-burst and started again on the same SQLite file: no
// event of an admitted turn is lost (delivery is at least once; a
// delivery in flight at the kill may arrive twice, with the same id).
func TestAsyncBurstSurvivesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills a real process: not in -short")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "assistant")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	env := append(os.Environ(), "ASSISTANT_DATA_DIR="+filepath.Join(dir, "data"), "ASSISTANT_WEBHOOK_ALLOW_PRIVATE=true",
		"ASSISTANT_WEBHOOK_RETRY_BASE=100ms", "ASSISTANT_PUBLIC_SOFT_LIMIT=0", "ASSISTANT_PUBLIC_HARD_LIMIT=0", "ASSISTANT_LOG_LEVEL=warn",
		"ASSISTANT_ADDR=127.0.0.1:"+freePort(t))
	cli := func(args ...string) string {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("assistant %v: %v", args, err)
		}
		return string(out)
	}
	var key struct{ Key string }
	json.Unmarshal([]byte(cli("keys", "create", "--workspace", "default", "--name", "burst", "--json")), &key)
	rc := newReceiver(t, 3)
	var ep struct{ Secret string }
	json.Unmarshal([]byte(cli("webhooks", "create", "--workspace", "default", "--url", rc.URL, "--events", "chat.turn.completed", "--json")), &ep)
	rc.addSecret(ep.Secret)

	start := func() (*exec.Cmd, string) {
		cmd := exec.Command(bin, "serve")
		cmd.Env = env
		stdout, _ := cmd.StdoutPipe()
		cmd.Stderr = io.Discard
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		sc := bufio.NewScanner(stdout)
		serving := regexp.MustCompile(`serving on (http://[0-9.:]+)`)
		for sc.Scan() {
			if m := serving.FindStringSubmatch(sc.Text()); m != nil {
				go io.Copy(io.Discard, stdout)
				return cmd, m[1]
			}
		}
		t.Fatal("serve did not start")
		return nil, ""
	}
	cmd, base := start()
	admitted, refused := submitBurst(t, []string{base}, key.Key, 500)
	if len(admitted) != 60 || len(admitted)+refused != 500 {
		t.Fatalf("admitted %d and refused %d of 500", len(admitted), refused)
	}
	// Kill it while the first deliveries are being retried.
	waitFor(t, "the first attempts", func() bool { rc.mu.Lock(); defer rc.mu.Unlock(); return len(rc.attempts) > 0 })
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	rc.mu.Lock()
	t.Logf("killed with %d of %d events delivered", len(rc.events), len(admitted))
	rc.mu.Unlock()
	_, base = start()
	checkTurnsDelivered(t, rc, []string{base}, key.Key, admitted, false)
}

// TestKilledInstanceIsTakenOver: one of three instances on PostgreSQL is
// killed with SIGKILL mid-burst, holding leases of turns and deliveries;
// the other two take its work over when the leases run out, and no event
// of an admitted turn is lost (at least once: the receiver may see an
// id twice).
func TestKilledInstanceIsTakenOver(t *testing.T) {
	if _, redisServer := requireScaleOut(t); redisServer == "" {
		return
	}
	t.Setenv("ASSISTANT_WEBHOOK_KEY", strings.Repeat("k", 40))
	t.Setenv("ASSISTANT_WEBHOOK_ALLOW_PRIVATE", "true")
	t.Setenv("ASSISTANT_WEBHOOK_RETRY_BASE", "200ms")
	c := startCluster(t, 3)
	_, key := c.newKey(t, "burst")
	rc := newReceiver(t, 3)
	var ep struct{ Secret string }
	json.Unmarshal([]byte(c.cli(t, "webhooks", "create", "--workspace", "default", "--url", rc.URL, "--events", "chat.turn.completed", "--json")), &ep)
	rc.addSecret(ep.Secret)

	admitted, refused := submitBurst(t, c.bases, key, 500)
	if len(admitted) != 60 || len(admitted)+refused != 500 {
		t.Fatalf("admitted %d and refused %d of 500", len(admitted), refused)
	}
	waitFor(t, "the first attempts", func() bool { rc.mu.Lock(); defer rc.mu.Unlock(); return len(rc.attempts) > 0 })
	c.procs[0].Process.Signal(syscall.SIGKILL)
	rc.mu.Lock()
	t.Logf("killed instance 1 with %d of %d events delivered", len(rc.events), len(admitted))
	rc.mu.Unlock()
	checkTurnsDelivered(t, rc, c.bases[1:], key, admitted, false)
}
