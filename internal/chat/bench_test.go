package chat_test

import (
	"context"
	"testing"

	"github.com/constraintlab/assistant/internal/chat"
	"github.com/constraintlab/assistant/internal/retrieval"
)

// benchService is the full service wired as serve wires it: knowledge
// read through the retrieval snapshot, not the database.
func benchService(b *testing.B) *chat.Service {
	s, db := fullServiceTB(b)
	ix := retrieval.NewIndex(db)
	s.Retriever, s.Knowledge = ix, ix.Reader(db)
	return s
}

// BenchmarkTurnBuiltin is one whole chat turn with the builtin model:
// scope, diagnosis, searches, composition and claim verification. Run
// with
//
//	go test ./internal/chat -run '^$' -bench TurnBuiltin
func BenchmarkTurnBuiltin(b *testing.B) {
	s := benchService(b)
	ctx := context.Background()
	i := 0
	for b.Loop() {
		c := rubricCases[i%len(rubricCases)]
		if _, _, err := s.Run(ctx, chat.Request{Message: c.question, Mode: c.mode}, nil); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkTurnHistory is a turn after n earlier turns (each a question
// and the assistant's real answer to it), for how cost grows with the
// conversation.
func BenchmarkTurnHistory0(b *testing.B)  { benchmarkTurnHistory(b, 0) }
func BenchmarkTurnHistory4(b *testing.B)  { benchmarkTurnHistory(b, 4) }
func BenchmarkTurnHistory16(b *testing.B) { benchmarkTurnHistory(b, 16) }

func benchmarkTurnHistory(b *testing.B, n int) {
	s := benchService(b)
	ctx := context.Background()
	var history []chat.HistoryItem
	for i := range n {
		q := rubricCases[i%len(rubricCases)].question
		r, _, err := s.Run(ctx, chat.Request{Message: q, Mode: "operator", History: history}, nil)
		if err != nil {
			b.Fatal(err)
		}
		history = append(history, chat.HistoryItem{Role: "user", Content: q}, chat.HistoryItem{Role: "assistant", Content: r.Response})
	}
	for b.Loop() {
		if _, _, err := s.Run(ctx, chat.Request{Message: "What should we measure first?", Mode: "operator", History: history}, nil); err != nil {
			b.Fatal(err)
		}
	}
}
