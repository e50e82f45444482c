package main

import (
	"errors"
	"log/slog"
	"math"
	"runtime/debug"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// memoryLimitRatio is the share of the container's memory limit given to
// the Go heap and runtime (GOMEMLIMIT): the rest is for what the Go
// runtime does not count (SQLite's page cache is Go memory here, being
// modernc's; thread stacks, the binary's text) and for headroom.
const memoryLimitRatio = 0.9

// applyMemoryLimit sets the Go memory limit to memoryLimitRatio of the
// memory limit provider reports (the cgroup's, in serve: a container's
// limit), so that the garbage collector works harder as the container
// fills instead of the kernel killing the process. GOMEMLIMIT, when set,
// wins: the runtime applied it at start and it is left alone. Without
// a limit (none set, or not in a cgroup) nothing changes. It returns the
// limit in force.
func applyMemoryLimit(e env, logger *slog.Logger, provider memlimit.Provider) int64 {
	if v := e.getenv("GOMEMLIMIT"); v != "" {
		logger.Info("memory limit from GOMEMLIMIT", "GOMEMLIMIT", v)
		return debug.SetMemoryLimit(-1)
	}
	quiet := slog.New(slog.DiscardHandler)
	limit, err := memlimit.Set(memlimit.WithProvider(provider), memlimit.WithRatio(memoryLimitRatio), memlimit.WithLogger(quiet))
	switch {
	case errors.Is(err, memlimit.ErrNoCgroup):
		// Not in a container: nothing to follow.
	case err != nil:
		logger.Warn("the container's memory limit could not be read; no Go memory limit set", "error", err)
	case limit != math.MaxInt64:
		logger.Info("memory limit set from the container's", "GOMEMLIMIT", limit, "ratio", memoryLimitRatio)
	}
	return limit
}
