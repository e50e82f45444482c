//go:build race

package testrace

// Enabled is whether the race detector is on.
const Enabled = true

// Slowdown is how many times longer a timed bound should be: the race
// detector slows every goroutine down.
const Slowdown = 4
