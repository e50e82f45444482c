package assistant_test

import (
	"testing"

	"github.com/constraintlab/assistant/internal/assistant"
)

// BenchmarkParseToken parses a citation token as written in an answer
// ("type:slug"). Run with
//
//	go test ./internal/assistant -run '^$' -bench ParseToken
func BenchmarkParseToken(b *testing.B) {
	for b.Loop() {
		if _, err := assistant.ParseToken("framework:theory-of-constraints"); err != nil {
			b.Fatal(err)
		}
	}
}
