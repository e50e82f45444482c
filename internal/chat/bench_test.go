package chat_test

import (
	"context"
	"testing"

	"github.com/constraintlab/assistant/internal/chat"
)

// BenchmarkTurnBuiltin is one whole chat turn with the builtin model:
// scope, diagnosis, searches, composition and claim verification. Run
// with
//
//	go test ./internal/chat -run '^$' -bench TurnBuiltin
func BenchmarkTurnBuiltin(b *testing.B) {
	s, _ := fullServiceTB(b)
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
