package retrieval_test

import (
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/knowledge/synthetic"
	"github.com/constraintlab/assistant/internal/retrieval"
)

// Search cost by corpus size: the embedded corpus plus n synthetic
// entities. Run with
//
//	go test ./internal/retrieval -run '^$' -bench Search -benchtime 2000x
//
// Each reports p50 and p99 latency per search, the time to build the
// snapshot, and peak RSS.

func BenchmarkSearch1k(b *testing.B)   { benchmarkSearch(b, 1_000) }
func BenchmarkSearch10k(b *testing.B)  { benchmarkSearch(b, 10_000) }
func BenchmarkSearch100k(b *testing.B) { benchmarkSearch(b, 100_000) }

func benchmarkSearch(b *testing.B, n int) {
	extra, err := synthetic.Corpus(n)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	s := retrieval.Build(1, append(embedded(b), extra...))
	build := time.Since(start)
	var latencies []time.Duration
	i := 0
	for b.Loop() {
		t0 := time.Now()
		s.Search(assistant.SearchQuery{Text: synthetic.OwnerQuestions[i%len(synthetic.OwnerQuestions)], Limit: 10})
		latencies = append(latencies, time.Since(t0))
		i++
	}
	slices.Sort(latencies)
	pct := func(p float64) float64 {
		return float64(latencies[int(p*float64(len(latencies)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(build.Seconds(), "build-s")
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MB")
	}
}
