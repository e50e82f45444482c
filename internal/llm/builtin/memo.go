package builtin

import "github.com/constraintlab/assistant/internal/memo"

// texts returns a memo of values worked out from a text (a question, a
// sentence, a tool result), remembering up to max texts of up to maxLen
// bytes: every turn reads the knowledge base's sentences again, and a
// question is read by several sections of one answer.
func texts[V any](max int64, maxLen int) *memo.Bounded[string, V] {
	return &memo.Bounded[string, V]{Max: max, Remember: func(text string) bool { return len(text) <= maxLen }}
}
