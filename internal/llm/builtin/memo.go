package builtin

import "github.com/constraintlab/assistant/internal/memo"

// texts returns a memo of values worked out from a text (a question, a
// sentence, a tool result), remembering up to max texts of up to maxLen
// bytes and up to share of memo.Budget, a value counting perByte bytes
// for each byte of its text: every turn reads the knowledge base's
// sentences again, and a question is read by several sections of one
// answer.
func texts[V any](max int64, maxLen int, share float64, perByte int64) *memo.Bounded[string, V] {
	return &memo.Bounded[string, V]{Max: max, Remember: func(text string) bool { return len(text) <= maxLen },
		MaxBytes: memo.Share(share), Size: func(text string, _ V) int64 { return memo.EntryBytes + perByte*int64(len(text)) }}
}
