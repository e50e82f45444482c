// Package testrace tells tests whether they run under the race detector
// (go test -race), so that a check can skip itself there or widen a timed
// bound by Slowdown. It is imported by tests only.
package testrace
