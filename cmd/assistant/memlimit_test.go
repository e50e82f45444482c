package main

import (
	"bytes"
	"log/slog"
	"runtime/debug"
	"testing"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// TestMemoryLimitFollowsTheContainer: serve's Go memory limit is 90% of
// the container's limit, unless GOMEMLIMIT is set.
func TestMemoryLimitFollowsTheContainer(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	noEnv := env{getenv: func(string) string { return "" }}

	got := applyMemoryLimit(noEnv, logger, memlimit.Limit(256<<20))
	container := float64(256 << 20)
	if want := int64(0.9 * container); got != want || debug.SetMemoryLimit(-1) != want {
		t.Fatalf("limit %d (runtime %d), want %d", got, debug.SetMemoryLimit(-1), want)
	}

	debug.SetMemoryLimit(300 << 20) // as GOMEMLIMIT=300MiB sets it at start
	withEnv := env{getenv: func(k string) string {
		if k == "GOMEMLIMIT" {
			return "300MiB"
		}
		return ""
	}}
	if got := applyMemoryLimit(withEnv, logger, memlimit.Limit(256<<20)); got != 300<<20 || debug.SetMemoryLimit(-1) != 300<<20 {
		t.Fatalf("with GOMEMLIMIT the limit became %d, want it left at 300 MiB", got)
	}
}
