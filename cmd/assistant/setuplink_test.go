package main

import (
	"context"
	"io"
	"net"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/access"
	"github.com/constraintlab/assistant/internal/sqlite"
)

// A start that fails (its profile address is in use) leaves the setup
// link of the previous start valid: the link is replaced only by a start
// that serves.
func TestFailedStartKeepsTheSetupLink(t *testing.T) {
	dir := t.TempDir()
	_, stdout, stop := startServerOutput(t, map[string]string{"ASSISTANT_DATA_DIR": dir})
	var link []string
	for deadline := time.Now().Add(30 * time.Second); link == nil && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		link = regexp.MustCompile(`/admin/setup\?token=([A-Za-z0-9_-]+)\n`).FindStringSubmatch(stdout.String())
	}
	if link == nil {
		t.Fatalf("no setup link printed:\n%s", stdout)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	env := map[string]string{"ASSISTANT_ADDR": "127.0.0.1:0", "ASSISTANT_DATA_DIR": dir, "ASSISTANT_PROFILE_ADDR": busy.Addr().String()}
	var out strings.Builder
	err = run(context.Background(), []string{"serve"}, func(k string) string { return env[k] }, strings.NewReader(""), &out, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "ASSISTANT_PROFILE_ADDR") {
		t.Fatalf("start with the profile address in use: %v", err)
	}
	if strings.Contains(out.String(), "/admin/setup?token=") {
		t.Errorf("the failed start printed a setup link:\n%s", out.String())
	}

	db, err := sqlite.Open(context.Background(), filepath.Join(dir, "assistant.db"), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ok, err := db.CheckSetupToken(context.Background(), access.HashSetupToken(link[1]), time.Now())
	if err != nil || !ok {
		t.Errorf("the first start's setup link after a failed start: valid %v, %v", ok, err)
	}
}
