//go:build !race

package testrace

// Enabled is whether the race detector is on.
const Enabled = false

// Slowdown is how many times longer a timed bound should be; 1 without
// the race detector.
const Slowdown = 1
