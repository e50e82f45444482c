package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// browserPrerequisites skips the test where Chromium, Node or the browser
// test's npm packages are missing, except under CI=true, where browser
// tests must run (.ci/run installs them).
func browserPrerequisites(t *testing.T, scriptName string) (node, script string) {
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
	return node, filepath.Join(dir, scriptName)
}

// TestBrowserDocsTryItNow loads the interactive docs in headless Chromium
// with no network beyond the service and runs a try-it call (D15).
func TestBrowserDocsTryItNow(t *testing.T) {
	node, script := browserPrerequisites(t, "docs.spec.mjs")
	base, _ := startServer(t, nil)
	cmd := exec.Command(node, script, base, screenshotPath(t, "docs.png"))
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("browser test failed: %v", err)
	}
}

// screenshotPath is where a browser test saves its screenshot: the
// ASSISTANT_TEST_ARTIFACTS directory (CI keeps it) or the test's temp dir.
func screenshotPath(t *testing.T, name string) string {
	if dir := os.Getenv("ASSISTANT_TEST_ARTIFACTS"); dir != "" {
		os.MkdirAll(dir, 0o755)
		return filepath.Join(dir, name)
	}
	return filepath.Join(t.TempDir(), name)
}

// TestBrowserAdminKeys drives the admin area in headless Chromium: first
// admin through the setup link, a key created and shown once, a turn of it
// kept for conversation review, read and deleted, the key revoked and
// refused by the API.
func TestBrowserAdminKeys(t *testing.T) {
	node, script := browserPrerequisites(t, "admin.spec.mjs")
	base, stdout, _ := startServerOutput(t, nil)
	link := setupLink(t, stdout)
	out, err := exec.Command(node, script, base, link, screenshotPath(t, "admin.png")).CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("browser test failed: %v", err)
	}
}

// setupLink waits for the one-time admin setup link that serve prints.
func setupLink(t *testing.T, stdout fmt.Stringer) string {
	t.Helper()
	setup := regexp.MustCompile(`http://\S+/admin/setup\?token=[0-9A-Za-z]+`)
	var link string
	for deadline := time.Now().Add(10 * time.Second); link == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		link = setup.FindString(stdout.String())
	}
	if link == "" {
		t.Fatalf("serve printed no setup link:\n%s", stdout)
	}
	return link
}

// TestBrowserCitationsComponent loads the <assistant-citations> web
// component from the service into a page of another origin in headless
// Chromium: one batched /resolve request, a card on hover and on keyboard
// focus, Escape, and an unknown token left as plain text.
func TestBrowserCitationsComponent(t *testing.T) {
	node, script := browserPrerequisites(t, "citations.spec.mjs")
	base, _ := startServer(t, nil)
	out, err := exec.Command(node, script, base, screenshotPath(t, "citations.png")).CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("browser test failed: %v", err)
	}
}

// TestBrowserAdminPlayground drives the admin playground in headless
// Chromium: log in through the setup link, send a business question, and
// see the answer with a hover card, the claim verdicts and the trace.
func TestBrowserAdminPlayground(t *testing.T) {
	node, script := browserPrerequisites(t, "playground.spec.mjs")
	base, stdout, _ := startServerOutput(t, nil)
	link := setupLink(t, stdout)
	out, err := exec.Command(node, script, base, link, screenshotPath(t, "playground.png")).CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("browser test failed: %v", err)
	}
}
