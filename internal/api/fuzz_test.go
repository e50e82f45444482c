package api_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/constraintlab/assistant/internal/access"
	"github.com/constraintlab/assistant/internal/api"
	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/chat"
	"github.com/constraintlab/assistant/internal/llm/builtin"
	"github.com/constraintlab/assistant/internal/ratelimit"
	"github.com/constraintlab/assistant/internal/retrieval"
	"github.com/constraintlab/assistant/internal/verify"
)

// fuzzServer is the whole HTTP surface with no rate limits, and a key.
func fuzzServer(tb testing.TB) (http.Handler, string) {
	tb.Helper()
	ctx := context.Background()
	now := func() time.Time { return time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC) }
	db, shared := loadedDB(tb, now)
	cat, dg := shared.catalog, shared.diagnoser
	personas, err := chat.LoadPersonas()
	if err != nil {
		tb.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	n := 0
	srv := &api.Server{
		Knowledge: db, Retriever: retrieval.NewIndex(db, retrieval.WithCheckInterval(0)), Citations: db, Ready: db, Catalog: cat, Diagnosis: dg,
		Logger: logger, Now: now, Version: "fuzz", PublicLimiter: ratelimit.NewTiered(0, 0, time.Minute, now),
		Metrics: prometheus.NewRegistry(), Access: db, Keys: access.NewVerifier(db, now, logger),
		Chat: &chat.Service{Provider: builtin.New(), Knowledge: db, Retriever: retrieval.NewIndex(db, retrieval.WithCheckInterval(0)), Checker: verify.New(),
			Diagnoser: chat.NewDiagnosisAdapter(dg), Personas: personas, Now: now,
			NewID: func() string { n++; return fmt.Sprintf("resp_%d", n) }},
		ChatLimiter: ratelimit.NewSlidingWindow(0, time.Minute, now),
	}
	if err := db.EnsureWorkspace(ctx, "fuzz"); err != nil {
		tb.Fatal(err)
	}
	plain, id, hash := access.NewKey()
	if err := db.CreateKey(ctx, assistant.APIKey{ID: id, Workspace: "fuzz", Name: "fuzz", Hash: hash, CreatedAt: now()}); err != nil {
		tb.Fatal(err)
	}
	return srv.Handler(), plain
}

// fuzzDecoder feeds arbitrary bodies, with the JSON content type or
// without one, to one endpoint: never a 5xx or a panic (the recoverer
// would turn it into a 500), and every error is a problem document.
func fuzzDecoder(f *testing.F, path string, seeds ...string) {
	h, key := fuzzServer(f)
	for _, s := range append(seeds, "", "{}", "[]", "null", "{", `{"a":`, "\x00", `"x"`, "1e999", `{"message":1}`,
		`{"tokens":null}`, strings.Repeat("[", 10_000), `{"history":[{"role":"system","content":"x"}]}`) {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, body string, asJSON bool) {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		if asJSON {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("POST %s %q: %d %s", path, body, rec.Code, rec.Body)
		}
		if rec.Code >= 400 && rec.Header().Get("Content-Type") != "application/problem+json" {
			t.Fatalf("POST %s %q: %d as %q", path, body, rec.Code, rec.Header().Get("Content-Type"))
		}
	})
}

func FuzzResolve(f *testing.F) {
	fuzzDecoder(f, "/api/assistant/v1/resolve",
		`{"tokens":[{"type":"framework","slug":"theory-of-constraints"}]}`,
		`{"tokens":[{"type":"framework","slug":"UPPER"},{"type":"nope","slug":"x"},{"type":"paper"}]}`,
		`{"tokens":["framework:x"]}`)
}

func FuzzPreview(f *testing.F) {
	fuzzDecoder(f, "/api/assistant/v1/preview",
		`{"vertical":"saas","archetype_id":"sales-conversion"}`,
		`{"vertical":"saas","free_text":"Our trials do not convert"}`,
		`{"vertical":"nope","archetype_id":"x","free_text":"y"}`)
}

func FuzzChat(f *testing.F) {
	fuzzDecoder(f, "/api/v1/chat",
		`{"message":"Our support queue doubled since the last release","mode":"support"}`,
		`{"message":"hi","history":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}],"source":"crm"}`,
		`{"message":"   ","mode":"pirate"}`)
}

// FuzzOpenAICompletions: whatever the body, the facade never answers 5xx,
// and every error is OpenAI's error object (application/json), never a
// problem document.
func FuzzOpenAICompletions(f *testing.F) {
	h, key := fuzzServer(f)
	for _, s := range []string{
		`{"model":"assistant-operator","messages":[{"role":"user","content":"Our packing station cannot keep up"}]}`,
		`{"model":"assistant-support","stream":true,"messages":[{"role":"system","content":"x"},{"role":"user","content":[{"type":"text","text":"hi"}]}]}`,
		`{"model":"assistant-x","messages":[{"role":"assistant","content":null}]}`,
		`{"model":"assistant-operator","n":0,"messages":[{"role":"user","content":[{"type":"image_url"}]}]}`,
		"", "{}", "[]", "null", `{"model":1}`, `{"messages":"x"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/openai/chat/completions", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%q: %d %s", body, rec.Code, rec.Body)
		}
		if rec.Code >= 400 && (rec.Header().Get("Content-Type") != "application/json" || !strings.HasPrefix(rec.Body.String(), `{"error":{`)) {
			t.Fatalf("%q: %d %q %s", body, rec.Code, rec.Header().Get("Content-Type"), rec.Body)
		}
	})
}

// FuzzMCP: whatever the body, /mcp never answers 5xx, every answer is
// JSON (a JSON-RPC message, an error included) within the bound of 1 MiB,
// and a batch is never served.
func FuzzMCP(f *testing.F) {
	h, key := fuzzServer(f)
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_knowledge","arguments":{"query":"bottleneck","limit":50}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"assistant://framework/theory-of-constraints"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"resources/list","params":{"cursor":"nope"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`,
		`[{"jsonrpc":"2.0","id":0,"method":"resources/list"},{"jsonrpc":"2.0","id":1,"method":"resources/list"}]`,
		"", "{}", "[]", "null", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, `{"jsonrpc":"1.0","id":1,"method":"ping"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%q: %d %s", body, rec.Code, rec.Body)
		}
		if rec.Body.Len() > 1<<20 {
			t.Fatalf("%q: an answer of %d bytes", body, rec.Body.Len())
		}
		if rec.Code != http.StatusAccepted && rec.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%q: %d as %q: %s", body, rec.Code, rec.Header().Get("Content-Type"), rec.Body)
		}
		if strings.HasPrefix(strings.TrimSpace(body), "[") && rec.Code == http.StatusOK {
			t.Fatalf("%q: a batch was served: %s", body, rec.Body)
		}
	})
}
