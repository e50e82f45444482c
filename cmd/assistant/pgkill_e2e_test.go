package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/constraintlab/assistant/internal/postgres/pgtest"
)

// TestPostgresConnectionsKilledMidLoad serves chat turns on PostgreSQL
// while the server's backends are terminated again and again (what a
// restart or failover does to them; pg_terminate_backend touches only this
// server's connections, never the shared PostgreSQL): every answer is 200
// or 503 with Retry-After, never another 5xx, and every turn answered 200
// has its usage row.
func TestPostgresConnectionsKilledMidLoad(t *testing.T) {
	app := fmt.Sprintf("assistant_kill_%d", time.Now().UnixNano())
	env := map[string]string{"ASSISTANT_DATABASE_URL": pgtest.URL(t) + "&application_name=" + app, "ASSISTANT_DATA_DIR": t.TempDir(),
		"ASSISTANT_CHAT_RATE_LIMIT": "0"}
	key := lastLine(mustRun(t, envOf(env), "", "keys", "create", "--workspace", "w", "--name", "load"))
	base, _ := startServer(t, env)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	killer, err := pgx.Connect(ctx, os.Getenv(pgtest.EnvURL))
	if err != nil {
		t.Fatal(err)
	}
	defer killer.Close(context.Background())

	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	stop := time.Now().Add(4 * time.Second)
	killed := 0
	wg.Go(func() {
		for time.Now().Before(stop) {
			var n int
			killer.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n)
			killed += n
			time.Sleep(150 * time.Millisecond)
		}
	})
	for range 4 {
		wg.Go(func() {
			for time.Now().Before(stop) {
				req, _ := http.NewRequest("POST", base+"/api/v1/chat", strings.NewReader(`{"message":"Our packing station cannot keep up and orders ship late"}`))
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				var answer struct{ Response string }
				if resp.StatusCode == 200 && (json.Unmarshal(body, &answer) != nil || answer.Response == "") {
					t.Errorf("a 200 without an answer: %.200s", body)
				}
				mu.Lock()
				statuses[resp.StatusCode]++
				mu.Unlock()
				if resp.StatusCode == 503 && resp.Header.Get("Retry-After") == "" {
					t.Errorf("503 without Retry-After: %s", body)
				}
				if resp.StatusCode != 200 && resp.StatusCode != 503 {
					t.Errorf("status %d: %s", resp.StatusCode, body)
				}
			}
		})
	}
	wg.Wait()
	t.Logf("statuses %v; %d backends terminated", statuses, killed)
	if killed == 0 || statuses[200] == 0 {
		t.Fatalf("no backend killed (%d) or no turn answered (%v)", killed, statuses)
	}
	// Every acknowledged turn has its usage row and its citations (each
	// answer to this question cites the knowledge).
	check, err := pgx.Connect(context.Background(), strings.Replace(env["ASSISTANT_DATABASE_URL"], "application_name="+app, "application_name=check", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close(context.Background())
	var rows, turns int
	if err := check.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM usage WHERE endpoint = 'POST /api/v1/chat' AND status = 200),
		(SELECT count(DISTINCT response_id) FROM citation_events)`).Scan(&rows, &turns); err != nil {
		t.Fatal(err)
	}
	if rows < statuses[200] || turns < statuses[200] {
		t.Errorf("%d usage rows and %d turns with citations recorded, %d turns answered 200", rows, turns, statuses[200])
	}
}
