//go:build !race

package redis_test

// raceFactor is how much longer timed bounds are under the race
// detector; without it, 1.
const raceFactor = 1
