package api_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
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
			b.WriteString(itoa(i + 1))
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

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
