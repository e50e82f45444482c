package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/postgres"
	"github.com/constraintlab/assistant/internal/postgres/pgtest"
	"github.com/constraintlab/assistant/internal/sqlite"
	"github.com/constraintlab/assistant/internal/storetest"
)

// envOf returns a getenv over the map.
func envOf(env map[string]string) func(string) string { return func(k string) string { return env[k] } }

// mustRun runs a subcommand that must succeed and returns its stdout.
func mustRun(t *testing.T, getenv func(string) string, stdin string, args ...string) string {
	t.Helper()
	out, errOut, err := cliRun(getenv, stdin, args...)
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, errOut)
	}
	return out
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// callVerify posts a verify request with the key and returns the status.
func callVerify(t *testing.T, base, key string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/api/v1/verify", strings.NewReader(
		`{"text":"Kingman's queueing paper is one that every operations manager should read [paper:kingman-1961-heavy-traffic]."}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestSubcommandsOnPostgres runs every kind of subcommand with
// ASSISTANT_DATABASE_URL=postgres://...: migrate, keys, admin, kb, eval
// and serve (knowledge, keys, usage, revocation, readiness).
func TestSubcommandsOnPostgres(t *testing.T) {
	env := map[string]string{"ASSISTANT_DATABASE_URL": pgtest.URL(t), "ASSISTANT_DATA_DIR": t.TempDir()}
	getenv := envOf(env)

	if out := mustRun(t, getenv, "", "migrate"); !strings.Contains(out, "up to date") {
		t.Errorf("migrate: %q", out)
	}
	key := lastLine(mustRun(t, getenv, "", "keys", "create", "--workspace", "w", "--name", "pg"))
	var listed []struct{ ID, Status string }
	if err := json.Unmarshal([]byte(mustRun(t, getenv, "", "keys", "list", "--workspace", "w", "--json")), &listed); err != nil || len(listed) != 1 || listed[0].Status != "active" {
		t.Fatalf("keys list: %+v %v", listed, err)
	}
	mustRun(t, getenv, "a long passphrase for the admin\n", "admin", "create-user", "--workspace", "w", "--email", "admin@example.test")
	if _, _, err := cliRun(getenv, "another long passphrase\n", "admin", "create-user", "--workspace", "w", "--email", "ADMIN@example.test"); err == nil {
		t.Error("a second admin with the same email in another case was created")
	}

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "framework", "pg-import.md"), entityMarkdown("framework", "pg-import", "postgresql"))
	mustRun(t, getenv, "", "kb", "import", dir)
	if out := mustRun(t, getenv, "", "kb", "export", "--format", "jsonl"); !strings.Contains(out, `"slug":"pg-import"`) || !strings.Contains(out, `"origin":"imported"`) {
		t.Errorf("kb export lacks the import")
	}
	mustRun(t, getenv, "", "kb", "validate")
	archetypes := writeFile(t, filepath.Join(dir, "archetypes.tsv"), "vertical\tarchetype\tfree_text\nmanufacturing\tdelivery-capacity\tOrders wait in front of one machine and ship late\n")
	mustRun(t, getenv, "", "eval", "archetypes", "--file", archetypes)

	base, stop := startServer(t, env)
	for _, path := range []string{"/readyz", "/api/assistant/v1/knowledge-stats"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d", path, resp.StatusCode)
		}
	}
	resp, err := http.Post(base+"/api/assistant/v1/resolve", "application/json", strings.NewReader(`{"tokens":[{"type":"framework","slug":"pg-import"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "postgresql title") {
		t.Errorf("resolve of the imported entity: %d %s", resp.StatusCode, body)
	}
	resp, err = http.Get(base + "/api/assistant/v1/search?q=postgresql&limit=3")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "pg-import") {
		t.Errorf("search for the imported entity: %d %s", resp.StatusCode, body)
	}
	if status := callVerify(t, base, key); status != 200 {
		t.Errorf("verify with the key: %d", status)
	}
	if status, body, _ := postChat(t, base, key, `{"message":"Orders pile up at packing","mode":"operator"}`, false); status != 200 || !strings.Contains(body, "[") {
		t.Errorf("chat: %d %s", status, body)
	}
	mustRun(t, getenv, "", "keys", "revoke", listed[0].ID)
	deadline := time.Now().Add(3 * time.Second)
	for callVerify(t, base, key) != 401 {
		if time.Now().After(deadline) {
			t.Fatal("the revoked key is still accepted")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	db, err := postgres.Open(context.Background(), env["ASSISTANT_DATABASE_URL"], time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	usage, err := db.WorkspaceUsageByDay(context.Background(), "w", time.Now().Add(-time.Hour))
	if err != nil || len(usage) == 0 {
		t.Errorf("no usage rows recorded on PostgreSQL: %v %v", usage, err)
	}
	board, err := db.Leaderboard(context.Background(), time.Now().Add(-time.Hour), time.Now().Add(time.Hour), 10)
	if err != nil || len(board) == 0 {
		t.Errorf("the chat's citations were not recorded on PostgreSQL: %v %v", board, err)
	}
}

// TestMigrateSQLiteToPostgres copies a single machine's SQLite database
// (made by the subcommands, plus some of everything) into a fresh
// PostgreSQL schema, compares the two stores, refuses a second copy, and
// serves the copy: the key made on SQLite works on PostgreSQL.
func TestMigrateSQLiteToPostgres(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sqliteEnv := envOf(map[string]string{"ASSISTANT_DATA_DIR": dir})
	key := lastLine(mustRun(t, sqliteEnv, "", "keys", "create", "--workspace", "default", "--name", "before the move"))
	mustRun(t, sqliteEnv, "a long passphrase for the admin\n", "admin", "create-user", "--workspace", "default", "--email", "owner@example.test")
	kbDir := t.TempDir()
	writeFile(t, filepath.Join(kbDir, "paper", "moved.md"), entityMarkdown("paper", "moved", "migration"))
	mustRun(t, sqliteEnv, "", "kb", "import", kbDir)
	path := filepath.Join(dir, "assistant.db")
	src, err := sqlite.Open(ctx, path, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	storetest.Populate(t, src)
	src.Close()

	pgURL := pgtest.URL(t)
	getenv := envOf(nil)
	if _, _, err := cliRun(getenv, "", "migrate", "--from", "sqlite://"+path); err == nil || exitCode(err) != 2 {
		t.Errorf("--from alone: %v, want a usage error", err)
	}
	if _, _, err := cliRun(getenv, "", "migrate", "--from", "sqlite://"+filepath.Join(dir, "typo.db"), "--to", pgURL); err == nil || !strings.Contains(err.Error(), "no SQLite database") {
		t.Errorf("a missing source: %v", err)
	}
	out := mustRun(t, getenv, "", "migrate", "--from", "sqlite://"+path, "--to", pgURL)
	for _, want := range []string{"api_keys", "usage", "citation_events", "entities (imported)", "Copied and verified"} {
		if !strings.Contains(out, want) {
			t.Errorf("migrate output lacks %q:\n%s", want, out)
		}
	}
	t.Log("\n" + out)

	src, err = sqlite.Open(ctx, path, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := postgres.Open(ctx, pgURL, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	storetest.Compare(t, dst, src)
	stats, _ := dst.KnowledgeStats(ctx)
	if srcStats, _ := src.KnowledgeStats(ctx); stats != srcStats {
		t.Errorf("knowledge stats %+v on PostgreSQL, %+v on SQLite", stats, srcStats)
	}
	dst.Close()

	_, _, err = cliRun(getenv, "", "migrate", "--from", "sqlite://"+path, "--to", pgURL)
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "already holds data") {
		t.Errorf("a second copy: %v, want a refusal", err)
	}

	base, _ := startServer(t, map[string]string{"ASSISTANT_DATABASE_URL": pgURL})
	if status := callVerify(t, base, key); status != 200 {
		t.Errorf("the key made on SQLite, on PostgreSQL: %d", status)
	}
}
