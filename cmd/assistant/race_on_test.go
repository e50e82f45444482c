//go:build race

package main

// raceDetector is whether the tests run under the race detector: a few
// long sequential checks that hold no concurrency skip themselves there,
// since `make test` has already run them.
const raceDetector = true
