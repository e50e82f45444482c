package sqlite_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/knowledge"
	"github.com/constraintlab/assistant/internal/sqlite"
)

// The knowledge base at scale: 100,000 synthetic entities, written in the
// words of the real corpus (sampled by their frequency there), imported in
// one transaction and then searched with owners' questions. Run with
//
//	go test ./internal/sqlite -run '^$' -bench 100k -benchtime 1x
//
// BenchmarkImport100k reports the import time (sec/op) and peak RSS;
// BenchmarkSearch100k reports search latency p50 and p99 and peak RSS.

const syntheticEntities = 100_000

// syntheticCorpus generates n entities deterministically.
func syntheticCorpus(tb testing.TB, n int) []assistant.Entity {
	tb.Helper()
	files, err := knowledge.Embedded()
	if err != nil {
		tb.Fatal(err)
	}
	var pool []string // every word of the corpus, as often as it occurs
	for _, f := range files {
		e := f.Entity
		text := strings.Join(slices.Concat([]string{e.Title, e.Summary}, e.Tags, e.KeyIdeas, e.WhenToUse, e.Pitfalls), " ")
		pool = append(pool, strings.Fields(strings.ToLower(text))...)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	words := func(k int) string {
		w := make([]string, k)
		for i := range w {
			w[i] = strings.Trim(pool[rng.IntN(len(pool))], ".,;:()\"'")
		}
		return strings.Join(w, " ")
	}
	sentences := func(count, length int) []string {
		out := make([]string, count)
		for i := range out {
			out[i] = words(length) + "."
		}
		return out
	}
	types := assistant.EntityTypes
	out := make([]assistant.Entity, n)
	for i := range out {
		year := 1900 + rng.IntN(125)
		out[i] = assistant.Entity{
			Type: types[i%len(types)], Slug: fmt.Sprintf("synthetic-%06d", i), Title: words(3 + rng.IntN(4)),
			Authors: []string{"Synthetic Author"}, Year: &year, URL: fmt.Sprintf("https://example.org/%d", i),
			Tags:       strings.Fields(words(5)),
			Archetypes: []string{assistant.ArchetypeIDs[rng.IntN(len(assistant.ArchetypeIDs))]},
			Summary:    strings.Join(sentences(5, 18), " "),
			KeyIdeas:   sentences(4, 16), WhenToUse: sentences(3, 14), Pitfalls: sentences(2, 12),
		}
	}
	return out
}

// ownerQuestions are searched in turn by BenchmarkSearch100k.
var ownerQuestions = []string{
	"orders pile up in front of one machine while others sit idle",
	"customers cancel after the first month",
	"we cannot tell which marketing channel brings paying customers",
	"our prices are lower than rivals and margins are thin",
	"the founder approves every decision and the team waits",
	"cash runs out before clients pay their invoices",
	"new hires take months before they are productive",
	"people sign up for the free plan and never pay",
	"pricing churn bottleneck",
	"how should we choose which market to enter next",
}

func peakRSSMB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) / 1024 // Linux reports KiB
}

func BenchmarkImport100k(b *testing.B) {
	entities := syntheticCorpus(b, syntheticEntities)
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), time.Now)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := db.ImportEntities(ctx, entities); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		db.Close()
		b.StartTimer()
	}
	b.ReportMetric(peakRSSMB(), "peak-RSS-MB")
}

func BenchmarkSearch100k(b *testing.B) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), time.Now)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := knowledge.LoadEmbedded(ctx, db); err != nil {
		b.Fatal(err)
	}
	if _, err := db.ImportEntities(ctx, syntheticCorpus(b, syntheticEntities)); err != nil {
		b.Fatal(err)
	}
	var latencies []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		if _, err := db.Search(ctx, assistant.SearchQuery{Text: ownerQuestions[i%len(ownerQuestions)], Limit: 10}); err != nil {
			b.Fatal(err)
		}
		latencies = append(latencies, time.Since(start))
		i++
	}
	slices.Sort(latencies)
	pct := func(p float64) float64 {
		return float64(latencies[int(p*float64(len(latencies)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(peakRSSMB(), "peak-RSS-MB")
}
