package api_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/openapi.golden.json from the served OpenAPI document")

const goldenPath = "testdata/openapi.golden.json"

// TestOpenAPIGolden holds the served OpenAPI document to the checked-in
// copy, so every change to the API contract shows up in review (and is
// what CI lints with Redocly: scripts/openapi-lint/run.sh).
func TestOpenAPIGolden(t *testing.T) {
	f := newFixture(t, 0, 0)
	r := f.do(t, "GET", "/api/assistant/openapi.json", "")
	if r.Code != 200 {
		t.Fatalf("GET openapi.json: %d", r.Code)
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, r.Body.Bytes(), "", "  "); err != nil {
		t.Fatal(err)
	}
	buf.WriteByte('\n')
	got := buf.Bytes()

	if *update {
		if err := os.MkdirAll(filepath.Dir(goldenPath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenPath, got, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", goldenPath)
		return
	}
	want, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatalf("%v\nCreate it with: go test ./internal/api -run TestOpenAPIGolden -update", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the served OpenAPI document differs from %s:\n%s\n"+
			"If the change to the API contract is intended, regenerate the golden file and commit it with the change:\n"+
			"\tgo test ./internal/api -run TestOpenAPIGolden -update",
			goldenPath, firstDifference(want, got))
	}
}

// firstDifference shows the first differing line of the golden (want)
// and served (got) documents, with a little context.
func firstDifference(want, got []byte) string {
	w := bytes.Split(want, []byte("\n"))
	g := bytes.Split(got, []byte("\n"))
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl []byte
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if !bytes.Equal(wl, gl) {
			var b bytes.Buffer
			b.WriteString("first difference at line ")
			b.WriteString(strconv.Itoa(i + 1))
			b.WriteString(":\n")
			for j := max(0, i-3); j < i; j++ {
				b.WriteString("    " + string(g[j]) + "\n")
			}
			b.WriteString("  - golden: " + string(wl) + "\n")
			b.WriteString("  + served: " + string(gl))
			return b.String()
		}
	}
	return "(no line differs)"
}

type openAPIOperation struct {
	Security    *[]map[string][]string `json:"security"`
	RequestBody struct {
		Content map[string]struct {
			Example json.RawMessage `json:"example"`
		} `json:"content"`
	} `json:"requestBody"`
	Responses map[string]any `json:"responses"`
}

type openAPIDocument struct {
	Servers []struct {
		URL string `json:"url"`
	} `json:"servers"`
	Paths map[string]map[string]openAPIOperation `json:"paths"`
}

// TestOpenAPISecurityAndResponses: every operation states its security
// (bearer for the key's operations, an explicit empty list for public
// ones), the document names a relative server, and no operation
// advertises 422, which the service never answers (validation is 400).
func TestOpenAPISecurityAndResponses(t *testing.T) {
	f := newFixture(t, 0, 0)
	var doc openAPIDocument
	f.do(t, "GET", "/api/assistant/openapi.json", "").json(t, &doc)
	if len(doc.Servers) != 1 || doc.Servers[0].URL != "/" {
		t.Errorf("servers = %+v, want one relative server /", doc.Servers)
	}
	authenticated := map[string]bool{"GET /api/v1/key": true, "POST /api/v1/chat": true, "POST /api/v1/verify": true,
		"POST /api/v1/openai/chat/completions": true, "POST /api/v1/openai/responses": true, "GET /api/v1/openai/models": true, "GET /api/v1/openai/models/{model}": true,
		"GET /api/v1/chat/turns/{id}": true}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			name := strings.ToUpper(method) + " " + path
			switch {
			case op.Security == nil:
				t.Errorf("%s declares no security", name)
			case authenticated[name]:
				if len(*op.Security) != 1 || (*op.Security)[0]["bearer"] == nil {
					t.Errorf("%s: security %v, want bearer", name, *op.Security)
				}
			case len(*op.Security) != 0:
				t.Errorf("%s: security %v, want [] (public)", name, *op.Security)
			}
			if op.Responses["422"] != nil {
				t.Errorf("%s documents 422, which the service never answers", name)
			}
		}
	}
}

// TestOpenAPIRequestExamplesWork sends the documented request examples of
// chat and verify (what the docs page's "try it out" sends) and expects
// 200.
func TestOpenAPIRequestExamplesWork(t *testing.T) {
	f := newFixture(t, 0, 0)
	var doc openAPIDocument
	f.do(t, "GET", "/api/assistant/openapi.json", "").json(t, &doc)
	key := f.newKey(t, "ws_examples")
	for _, path := range []string{"/api/v1/chat", "/api/v1/verify"} {
		example := doc.Paths[path]["post"].RequestBody.Content["application/json"].Example
		if len(example) == 0 {
			t.Errorf("POST %s: no request example", path)
			continue
		}
		r := f.do(t, "POST", path, string(example), "Authorization", "Bearer "+key)
		if r.Code != 200 {
			t.Errorf("POST %s with its documented example %s: %d %s", path, example, r.Code, r.Body)
		}
	}
}
