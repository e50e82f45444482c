package sqlite_test

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/knowledge/synthetic"
	"github.com/constraintlab/assistant/internal/sqlite"
)

// The knowledge base at scale: 100,000 synthetic entities imported in one
// transaction. Run with
//
//	go test ./internal/sqlite -run '^$' -bench 100k -benchtime 1x
//
// BenchmarkImport100k reports the import time (sec/op) and peak RSS.
// Searching at that scale is measured in internal/retrieval.

const syntheticEntities = 100_000

func peakRSSMB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) / 1024 // Linux reports KiB
}

func BenchmarkImport100k(b *testing.B) {
	entities, err := synthetic.Corpus(syntheticEntities)
	if err != nil {
		b.Fatal(err)
	}
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
