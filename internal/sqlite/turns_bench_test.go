package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/sqlite"
)

// BenchmarkRecordTurn records a chat turn's usage row and 3 citation
// events, 4 callers at a time, as bench/load's chat-builtin row does:
//
//	go test ./internal/sqlite -run '^$' -bench RecordTurn -benchtime 4000x -benchmem
func BenchmarkRecordTurn(b *testing.B) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), time.Now)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	at := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	var n atomic.Int64
	b.SetParallelism(2) // 2 x GOMAXPROCS(2) = 4 callers
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id := fmt.Sprintf("resp_%d", n.Add(1))
			cites := []assistant.CitationEvent{
				{ResponseID: id, Workspace: "default", Source: "chat", Token: assistant.Token{Type: assistant.Framework, Slug: "theory-of-constraints"}, At: at},
				{ResponseID: id, Workspace: "default", Source: "chat", Token: assistant.Token{Type: assistant.Framework, Slug: "okrs"}, At: at},
				{ResponseID: id, Workspace: "default", Source: "chat", Token: assistant.Token{Type: assistant.Paper, Slug: "goal"}, At: at},
			}
			if err := db.RecordTurn(ctx, assistant.UsageRecord{At: at, Workspace: "default", KeyID: "key000000001",
				Endpoint: "POST /api/v1/chat", Mode: "operator", Source: "builtin", Status: 200, Latency: time.Millisecond}, cites); err != nil {
				b.Fatal(err)
			}
		}
	})
}
