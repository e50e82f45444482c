package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
)

// TestInstancesShareRedis runs two `assistant serve` on one database and
// one Redis (miniredis: the real server is exercised by internal/redis):
// the per-key limit holds across them, a key revoked from the command line
// is refused by both within a second, and when Redis dies they keep
// answering, report it on /readyz and /metrics, and limit per instance.
func TestInstancesShareRedis(t *testing.T) {
	m := miniredis.RunT(t)
	dir := t.TempDir()
	env := map[string]string{
		"ASSISTANT_DATA_DIR": dir, "ASSISTANT_REDIS_URL": "redis://" + m.Addr(),
		"ASSISTANT_CHAT_RATE_LIMIT": "5",
		// miniredis runs scripts slower than Redis; the decision budget
		// under a dead Redis is tested in internal/redis.
		"ASSISTANT_REDIS_TIMEOUT": "500ms",
	}
	a, _ := startServer(t, env)
	b, _ := startServer(t, env)
	key := createKey(t, dir)

	verify := func(base string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("POST", base+"/api/v1/verify", strings.NewReader(`{"text":"Queues grow without bound as utilisation nears one."}`))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	get := func(url string) (int, string) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}

	statuses := map[int]int{}
	for i := range 12 {
		resp := verify([]string{a, b}[i%2])
		statuses[resp.StatusCode]++
		if resp.StatusCode == 429 && resp.Header.Get("Retry-After") == "" {
			t.Error("429 without Retry-After")
		}
	}
	if statuses[200] != 5 || statuses[429] != 7 {
		t.Errorf("12 requests over two instances with a limit of 5: %v, want 5 admitted and 7 refused", statuses)
	}
	if code, body := get(a + "/readyz"); code != 200 || !strings.Contains(body, `"redis":"ok"`) {
		t.Errorf("readyz: %d %s", code, body)
	}

	// Revoked from the command line, which tells both through Redis.
	var errOut bytes.Buffer
	if err := run(context.Background(), []string{"keys", "revoke", key[len("sk_service_") : len("sk_service_")+12]},
		func(k string) string { return env[k] }, nil, io.Discard, &errOut); err != nil || errOut.Len() > 0 {
		t.Fatalf("keys revoke: %v %s", err, errOut.String())
	}
	revoked := time.Now()
	for _, base := range []string{a, b} {
		for verify(base).StatusCode != 401 {
			if time.Since(revoked) > time.Second {
				t.Fatalf("%s still accepts the revoked key after a second", base)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	// Redis dies: the public endpoints keep answering, the instances stay
	// ready but say they are degraded, and the fallback is counted.
	m.Close()
	for i := range 20 {
		if code, _ := get([]string{a, b}[i%2] + "/api/assistant/v1/knowledge-stats"); code != 200 {
			t.Fatalf("knowledge-stats with Redis down: %d", code)
		}
	}
	if code, body := get(a + "/readyz"); code != 200 || !strings.Contains(body, `"redis":"degraded"`) {
		t.Errorf("readyz with Redis down: %d %s", code, body)
	}
	_, metrics := get(b + "/metrics")
	for _, want := range []string{`assistant_redis_fallback_decisions_total{limiter="public"}`, "assistant_redis_up 0"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
