//go:build !linux

package main

import "time"

// cpuTime is not measured here: only Linux has /proc.
func cpuTime(int) (time.Duration, bool) { return 0, false }
