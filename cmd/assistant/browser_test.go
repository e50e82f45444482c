package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// browserPrerequisites skips the test where Chromium, Node or the browser
// test's npm packages are missing, except under CI=true, where browser
// tests must run (.ci/run installs them).
func browserPrerequisites(t *testing.T) (node, script string) {
	t.Helper()
	chromium := os.Getenv("CHROMIUM_PATH")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	missing := func(what string) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("browser test prerequisite missing under CI: %s", what)
		}
		t.Skipf("skipping browser test: %s is missing", what)
	}
	if _, err := os.Stat(chromium); err != nil {
		missing(chromium)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node")
	}
	dir, _ := filepath.Abs("../../browser")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "playwright-core")); err != nil {
		missing("browser/node_modules (run: cd browser && npm ci)")
	}
	return node, filepath.Join(dir, "docs.spec.mjs")
}

// TestBrowserDocsTryItNow loads the interactive docs in headless Chromium
// with no network beyond the service and runs a try-it call (D15).
func TestBrowserDocsTryItNow(t *testing.T) {
	node, script := browserPrerequisites(t)
	base, _ := startServer(t, nil)
	shot := filepath.Join(t.TempDir(), "docs.png")
	if dir := os.Getenv("ASSISTANT_TEST_ARTIFACTS"); dir != "" {
		os.MkdirAll(dir, 0o755)
		shot = filepath.Join(dir, "docs.png")
	}
	cmd := exec.Command(node, script, base, shot)
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("browser test failed: %v", err)
	}
}
