package main

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestMetricsListener starts serve with ASSISTANT_METRICS_ADDR: /metrics
// answers there, with the families of the model provider and the
// database pool, and not on the API's address; promtool check metrics
// finds nothing to report (CI installs promtool: Debian's prometheus
// package).
func TestMetricsListener(t *testing.T) {
	base, stdout, _ := startServerOutput(t, map[string]string{"ASSISTANT_METRICS_ADDR": "127.0.0.1:0"})
	announced := regexp.MustCompile(`metrics on (http://[0-9.:]+)/metrics`)
	var metrics string
	for deadline := time.Now().Add(30 * time.Second); metrics == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := announced.FindStringSubmatch(stdout.String()); m != nil {
			metrics = m[1]
		}
	}
	if metrics == "" {
		t.Fatalf("no metrics address printed:\n%s", stdout)
	}
	if resp, err := http.Get(base + "/metrics"); err != nil {
		t.Fatal(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusNotFound {
		t.Errorf("the API address serves /metrics: %d", resp.StatusCode)
	}
	resp, err := http.Get(metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics: %d", resp.StatusCode)
	}
	for _, want := range []string{`assistant_build_info{goversion=`, `go_sql_open_connections{db_name="sqlite"}`, `assistant_knowledge_version `} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool is not installed (apt-get install prometheus)")
		}
		t.Skip("promtool is not installed")
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}
