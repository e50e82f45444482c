package main

import (
	"bytes"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/postgres/pgtest"
)

// TestStoresAnswerAlike: the same knowledge base, once on SQLite and once
// on PostgreSQL, with the same imported entities, gives byte-identical
// answers on the public knowledge endpoints: stats, resolve, search (with
// and without a type) and preview (structured and free text).
func TestStoresAnswerAlike(t *testing.T) {
	pgURL := pgtest.URL(t) // skips without PostgreSQL, fails under CI
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "framework", "agree-import.md"), entityMarkdown("framework", "agree-import", "warehouse slotting"))
	writeFile(t, filepath.Join(dir, "blog", "agree-essay.md"), entityMarkdown("blog", "agree-essay", "packing bench queue"))

	var bases []string
	for _, env := range []map[string]string{
		{"ASSISTANT_DATA_DIR": t.TempDir()},
		{"ASSISTANT_DATA_DIR": t.TempDir(), "ASSISTANT_DATABASE_URL": pgURL},
	} {
		mustRun(t, envOf(env), "", "kb", "import", dir)
		base, _ := startServer(t, env)
		bases = append(bases, base)
	}

	requests := []struct{ method, path, body string }{
		{"GET", "/api/assistant/v1/knowledge-stats", ""},
		{"POST", "/api/assistant/v1/resolve", `{"tokens":[{"type":"framework","slug":"theory-of-constraints"},{"type":"framework","slug":"agree-import"},{"type":"paper","slug":"no-such-paper"},{"type":"blog","slug":"agree-essay"},{"type":"x","slug":"Bad Slug"}]}`},
		{"GET", "/api/assistant/v1/search?q=orders+pile+up+at+the+packing+bench&limit=20", ""},
		{"GET", "/api/assistant/v1/search?q=customers+cancel+after+the+first+month&type=paper", ""},
		{"GET", "/api/assistant/v1/search?q=warehouse+slotting&limit=5", ""},
		{"GET", "/api/assistant/v1/search?q=pricing+churn+bottleneck&type=blog&limit=50", ""},
		{"POST", "/api/assistant/v1/preview", `{"vertical":"ecommerce","archetype_id":"delivery-capacity"}`},
		{"POST", "/api/assistant/v1/preview", `{"vertical":"manufacturing","free_text":"the packing bench cannot keep up in December and orders ship late"}`},
		{"GET", "/api/assistant/v1/catalog", ""},
	}
	for _, r := range requests {
		var bodies [][]byte
		for _, base := range bases {
			req, err := http.NewRequest(r.method, base+r.path, strings.NewReader(r.body))
			if err != nil {
				t.Fatal(err)
			}
			if r.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("%s %s: %d %s", r.method, r.path, resp.StatusCode, b)
			}
			bodies = append(bodies, b)
		}
		if !bytes.Equal(bodies[0], bodies[1]) {
			t.Errorf("%s %s differs:\nSQLite:     %.400s\nPostgreSQL: %.400s", r.method, r.path, bodies[0], bodies[1])
		}
	}
}
