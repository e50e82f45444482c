package main

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestImportIsServedWithinASecond: entities imported by another process
// (`assistant kb import` while serve runs on the same database) show in
// stats, resolve and search within a second, without a restart.
func TestImportIsServedWithinASecond(t *testing.T) {
	dataDir := t.TempDir()
	base, _ := startServer(t, map[string]string{"ASSISTANT_DATA_DIR": dataDir})
	get := func(method, path, body string) string {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	total := func() int {
		var st struct{ Total int }
		json.Unmarshal([]byte(get("GET", "/api/assistant/v1/knowledge-stats", "")), &st)
		return st.Total
	}
	before := total()

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "blog", "fresh-zanzibar-notes.md"), entityMarkdown("blog", "fresh-zanzibar-notes", "zanzibar"))
	mustRun(t, envOf(map[string]string{"ASSISTANT_DATA_DIR": dataDir}), "", "kb", "import", dir)
	imported := time.Now()

	for _, check := range []struct {
		name string
		ok   func() bool
	}{
		{"stats", func() bool { return total() == before+1 }},
		{"resolve", func() bool {
			return strings.Contains(get("POST", "/api/assistant/v1/resolve", `{"tokens":[{"type":"blog","slug":"fresh-zanzibar-notes"}]}`), `"resolved":[{`)
		}},
		{"search", func() bool {
			return strings.Contains(get("GET", "/api/assistant/v1/search?q=zanzibar", ""), "blog:fresh-zanzibar-notes")
		}},
	} {
		for !check.ok() {
			if time.Since(imported) > time.Second {
				t.Fatalf("%s does not show the import a second after it", check.name)
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Logf("%s shows the import %v after it", check.name, time.Since(imported).Round(time.Millisecond))
	}
}
