package api

import (
	"unicode"

	"github.com/constraintlab/assistant/internal/llm"
)

// openAIUsage is the facade's usage object, in the names of chat
// completions; the responses API renames its fields (responsesUsage).
//
// With a remote model provider the counts are the provider's own, added
// up over every call the turn made (the tool loop, and the model judge
// that checks the claims). The builtin model has no tokens of its own, so
// its turns are counted with countTokens: the input is the message and
// the history the turn reads, the output the answer.
type openAIUsage struct {
	PromptTokens     int `json:"prompt_tokens" minimum:"0"`
	CompletionTokens int `json:"completion_tokens" minimum:"0"`
	TotalTokens      int `json:"total_tokens" minimum:"0"`
}

func turnUsage(meter *llm.UsageMeter, req chatRequest, answer string) openAIUsage {
	u, reported := meter.Total()
	if !reported {
		u.InputTokens = countTokens(req.Message)
		for _, h := range req.History {
			u.InputTokens += countTokens(h.Content)
		}
		u.OutputTokens = countTokens(answer)
	}
	return openAIUsage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, TotalTokens: u.InputTokens + u.OutputTokens}
}

// countTokens is the builtin model's tokenizer, documented in
// docs/integrations.md: every maximal run of letters and digits is one
// token, and so is every other character that is not white space (a
// punctuation mark, a bracket of a citation token, a symbol). "Orders
// ship late [framework:theory-of-constraints]." is 13 tokens. It is the
// pre-tokenization step of the common BPE tokenizers without the merges:
// for English it gives somewhat fewer tokens than OpenAI's tokenizers.
func countTokens(s string) int {
	n := 0
	inWord := false
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if !inWord {
				n++
			}
			inWord = true
		case unicode.IsSpace(r):
			inWord = false
		default:
			n++
			inWord = false
		}
	}
	return n
}
