package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/constraintlab/assistant/internal/api"
	"github.com/constraintlab/assistant/internal/assistant"
)

const reviewMessage = "Our packing station cannot keep up and orders ship late (marker qz7Kx9wPv)"

// runEverySurface runs one turn of reviewMessage through each surface
// that runs one with key: POST /api/v1/chat as JSON (with two earlier
// turns) and streamed, the OpenAI-compatible completions and responses,
// MCP's ask_assistant and, with async, an asynchronous turn. It returns
// the JSON answer of the first.
func (f *fixture) runEverySurface(t *testing.T, key string, async bool) (answer struct {
	Response       string          `json:"response"`
	ReasoningTrace json.RawMessage `json:"reasoning_trace"`
	RagHits        json.RawMessage `json:"rag_hits"`
	Confidence     json.RawMessage `json:"confidence"`
}) {
	t.Helper()
	auth := []string{"Authorization", "Bearer " + key}
	body, _ := json.Marshal(map[string]any{"message": reviewMessage, "mode": "operator",
		"history": []map[string]string{{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "How can I help?"}}})
	r := f.chat(t, key, string(body))
	if r.Code != 200 {
		t.Fatalf("chat: %d %s", r.Code, r.Body)
	}
	r.json(t, &answer)
	if r := f.chat(t, key, string(body), "Accept", "text/event-stream"); r.Code != 200 || !strings.Contains(r.Body.String(), "event: final") {
		t.Fatalf("streamed chat: %d %s", r.Code, r.Body)
	}
	msg, _ := json.Marshal(reviewMessage)
	if r := f.do(t, "POST", completionsPath, `{"model":"assistant-operator","messages":[{"role":"user","content":`+string(msg)+`}]}`, auth...); r.Code != 200 {
		t.Fatalf("completion: %d %s", r.Code, r.Body)
	}
	if r := f.do(t, "POST", responsesPath, `{"model":"assistant-operator","input":`+string(msg)+`}`, auth...); r.Code != 200 {
		t.Fatalf("responses: %d %s", r.Code, r.Body)
	}
	cs, err := f.mcpSession(t, key)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask_assistant", Arguments: map[string]any{"message": reviewMessage}})
	if err != nil || res.IsError {
		t.Fatalf("ask_assistant: %v %+v", err, res)
	}
	if !async {
		return answer
	}
	if r := f.chat(t, key, string(body), "Prefer", "respond-async"); r.Code != 202 {
		t.Fatalf("async submission: %d %s", r.Code, r.Body)
	}
	runner := &api.AsyncRunner{Server: f.srv, Owner: "test", Workers: 1, Poll: 10 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { runner.Run(ctx); close(done) }()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		turns, _ := f.db.ClaimTurns(context.Background(), "probe", f.clock.Now(), 0, 1)
		var open int
		f.db.SQL().QueryRow(`SELECT count(*) FROM async_turns WHERE state IN ('queued', 'running')`).Scan(&open)
		if len(turns) == 0 && open == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	return answer
}

// TestReviewKeepsTurnsOfEverySurface: with review on, every surface's
// turn is kept with what the answer was made of, under the key's id
// (never the key); another workspace, review off, keeps nothing.
func TestReviewKeepsTurnsOfEverySurface(t *testing.T) {
	f := newFixture(t, 0, 0)
	f.srv.Reviews = f.db
	key, other := f.newKey(t, "acme"), f.newKey(t, "globex")
	ctx := context.Background()
	if err := f.db.SetReviewSetting(ctx, "acme", assistant.ReviewSetting{Enabled: true, RetentionDays: 7}, f.clock.Now()); err != nil {
		t.Fatal(err)
	}
	answer := f.runEverySurface(t, key, true)
	f.runEverySurface(t, other, true)

	kept, err := f.db.Reviews(ctx, "acme", f.clock.Now(), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var surfaces []string
	for _, r := range kept {
		surfaces = append(surfaces, r.Surface)
	}
	slices.Sort(surfaces)
	want := []string{"POST /api/v1/chat", "POST /api/v1/chat", "POST /api/v1/openai/chat/completions", "POST /api/v1/openai/responses",
		"POST /mcp tools/call ask_assistant", "async"}
	if !slices.Equal(surfaces, want) {
		t.Errorf("kept turns of the surfaces %q, want %q", surfaces, want)
	}
	var keyID string
	f.db.SQL().QueryRow(`SELECT id FROM api_keys WHERE workspace = 'acme'`).Scan(&keyID)
	for _, r := range kept {
		if r.Message != reviewMessage || r.Answer == "" || r.KeyID != keyID || r.Mode != "operator" || r.Level == "" ||
			!r.ExpiresAt.Equal(r.At.Add(7*24*time.Hour)) {
			t.Errorf("kept %+v", r)
		}
		full, err := f.db.Review(ctx, "acme", r.ID, f.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		for _, field := range [][]byte{[]byte(full.ID), []byte(full.KeyID), []byte(full.Message), []byte(full.Answer), full.Trace, full.Knowledge, full.Verdicts} {
			if bytes.Contains(field, []byte(key)) || bytes.Contains(field, []byte(strings.SplitN(key, "_", 3)[2])) {
				t.Errorf("a kept turn holds the key: %s", field)
			}
		}
	}
	// The JSON answer's turn in full: history count, answer, trace,
	// knowledge and verdicts as the response carried them.
	var first assistant.Review
	for _, r := range kept {
		if r.Surface == "POST /api/v1/chat" && r.History == 2 {
			first, _ = f.db.Review(ctx, "acme", r.ID, f.clock.Now())
			break
		}
	}
	if first.Answer != answer.Response || !jsonEqual(string(first.Trace), string(answer.ReasoningTrace)) ||
		!jsonEqual(string(first.Knowledge), string(answer.RagHits)) || !jsonEqual(string(first.Verdicts), string(answer.Confidence)) {
		t.Errorf("kept %+v\nanswered %+v", first, answer)
	}
	if kept, _ := f.db.Reviews(ctx, "globex", f.clock.Now(), 0, 100); len(kept) != 0 {
		t.Errorf("a workspace with review off kept %d turns", len(kept))
	}
}

// databaseHolds reports whether any file of the SQLite database at path
// (the database, its write-ahead log and shared memory) holds text.
func databaseHolds(t *testing.T, path, text string) bool {
	t.Helper()
	files, _ := filepath.Glob(path + "*")
	if len(files) == 0 {
		t.Fatalf("no database files at %s", path)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(text)) {
			return true
		}
	}
	return false
}

// TestReviewOffStoresNoText: with review off, turns on every synchronous
// surface leave neither the message nor the answer in any file of the database;
// with review on the same turns are found there, and once their period
// ended and the purge ran, they are gone again (overwritten, the log
// emptied).
func TestReviewOffStoresNoText(t *testing.T) {
	f := newFixture(t, 0, 0)
	f.srv.Reviews = f.db
	var path string
	f.db.SQL().QueryRow(`SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&path)
	key := f.newKey(t, "acme")
	ctx := context.Background()

	answer := f.runEverySurface(t, key, false)
	// The answer's first 200 bytes: the cell's part that stays on the
	// row's page, so that a kept answer is found whole.
	fragment := answer.Response[:min(200, len(answer.Response))]
	for what, text := range map[string]string{"message": reviewMessage, "answer": fragment, "marker": "qz7Kx9wPv"} {
		if databaseHolds(t, path, text) {
			t.Errorf("with review off the database holds the %s", what)
		}
	}

	if err := f.db.SetReviewSetting(ctx, "acme", assistant.ReviewSetting{Enabled: true, RetentionDays: 2}, f.clock.Now()); err != nil {
		t.Fatal(err)
	}
	f.runEverySurface(t, key, false)
	for what, text := range map[string]string{"message": reviewMessage, "answer": fragment} {
		if !databaseHolds(t, path, text) {
			t.Errorf("with review on the database does not hold the %s", what)
		}
	}

	f.clock.Add(2*24*time.Hour + time.Second)
	if kept, _ := f.db.Reviews(ctx, "acme", f.clock.Now(), 0, 100); len(kept) != 0 {
		t.Errorf("%d turns listed after their period ended", len(kept))
	}
	if n, err := f.db.PurgeReviews(ctx, f.clock.Now()); err != nil || n != 5 {
		t.Fatalf("PurgeReviews = %d, %v; want 5", n, err)
	}
	for what, text := range map[string]string{"message": reviewMessage, "answer": fragment, "marker": "qz7Kx9wPv"} {
		if databaseHolds(t, path, text) {
			t.Errorf("after the purge the database still holds the %s", what)
		}
	}
}
