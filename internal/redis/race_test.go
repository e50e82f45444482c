//go:build race

package redis_test

// raceFactor is how much longer timed bounds are under the race
// detector, which slows every goroutine down.
const raceFactor = 4
