// Package llm is the seam between the chat turn and a language model. A
// Provider takes the conversation so far (system prompt, user and
// assistant turns, tool calls and their results) plus the tools it may
// call, and returns either tool calls to run or the final answer text.
//
// Implementations: builtin (offline, deterministic, the default), openai
// (any OpenAI-compatible Chat Completions server, internal/llm/openai) and
// anthropic (the Messages API, internal/llm/anthropic). Tests fake a
// provider at the HTTP level with httptest servers that speak each API's
// wire format.
package llm

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/constraintlab/assistant/internal/tooling"
)

// Roles of a Message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one item of the conversation sent to a provider.
type Message struct {
	Role    string
	Content string
	// ToolCalls are the calls an assistant message asked for.
	ToolCalls []ToolCall
	// ToolCallID and Name identify the call a tool message answers.
	ToolCallID string
	Name       string
	// Result is a tool message's result as a value, a pointer to one of
	// tooling's result types, given instead of Content (its JSON) to a
	// provider in this process that reads it (ReadsResults); nil otherwise.
	Result any
}

// ResultReader is a Provider that reads a tool message's Result when it
// has one, so that its caller need not encode the result as JSON for it
// to decode (the builtin model).
type ResultReader interface {
	ReadsResults() bool
}

// ReadsResults reports whether p, or the provider it wraps (Wrapper),
// reads tool results as values (ResultReader).
func ReadsResults(p Provider) bool { return answers(p, ResultReader.ReadsResults) }

// Quoter is a Provider whose answers only quote the knowledge the turn
// read, in the order it finds best, and never work the asker's own
// figures into them (the builtin model). The chat turn holds such an
// answer to `medium` at most: `high` promises an answer fitted to the
// asker's situation, and quotations can be on the question and still
// generic (docs/api.md).
type Quoter interface {
	QuotesOnly() bool
}

// QuotesOnly reports whether p's answers, or those of the provider it
// wraps (Wrapper), only quote the knowledge read (Quoter).
func QuotesOnly(p Provider) bool { return answers(p, Quoter.QuotesOnly) }

// Wrapper is a Provider that passes requests through to another (Traced,
// Metrics.Instrument): what the provider it wraps can do, it can do, so
// the questions above are asked of the wrapped one.
type Wrapper interface {
	Unwrap() Provider
}

// answers asks a question of p (ResultReader.ReadsResults, say), or of
// the provider it wraps when p does not answer it itself; false when no
// provider in the chain does.
func answers[C any](p Provider, ask func(C) bool) bool {
	for p != nil {
		if c, ok := p.(C); ok {
			return ask(c)
		}
		w, ok := p.(Wrapper)
		if !ok {
			return false
		}
		p = w.Unwrap()
	}
	return false
}

// ToolCall is a request by the model to run one tool.
type ToolCall struct {
	ID        string
	Name      string
	Arguments json.RawMessage // a JSON object
}

// Tool describes a tool the model may call. Parameters is a JSON Schema
// object.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// Request is one call to a provider.
type Request struct {
	Messages  []Message
	Tools     []Tool
	MaxTokens int
	// Mode is the persona answering the turn (operator, customer,
	// success, support), "" when the caller is not a chat turn. Hosted
	// models read the persona from the system prompt; the builtin model
	// plans by this field.
	Mode string
	// Vertical is the caller's industry (a catalog vertical id), "" when
	// not given.
	Vertical string
	// Reading is the chat turn's reading of the question (nil when the
	// caller is not a chat turn). Hosted models read the question from
	// the messages; the builtin model plans and composes from this.
	Reading *tooling.Reading
}

// Response is the provider's answer: tool calls to run, or (when there are
// none) the final text.
type Response struct {
	Content   string
	ToolCalls []ToolCall
	// Usage is what the upstream reported about the call (zero when it
	// reported nothing), for metrics and traces.
	Usage Usage
}

// Usage is a model call's accounting as the upstream reported it.
type Usage struct {
	Model                     string // the model that answered
	InputTokens, OutputTokens int
	FinishReason              string // stop, tool_calls, length, end_turn, ...
}

// Provider is a language model. Complete must honour ctx cancellation (a
// client that disconnects cancels the upstream call) and return an error
// wrapping ErrUnavailable when the upstream cannot answer (down, 5xx,
// timeout, rate-limited past the retries): the chat maps it to 502 (D3).
// Any other error is a bug or a misconfiguration.
type Provider interface {
	Name() string
	Complete(ctx context.Context, req Request) (Response, error)
}

// ErrUnavailable marks an upstream that could not answer.
var ErrUnavailable = errors.New("the model provider is unavailable")

// ErrMisconfigured marks an upstream that refuses the service's own
// configuration (a wrong API key, an unknown model, a bad base URL). It is
// not a 502: the operator must fix a setting, and the error says which.
var ErrMisconfigured = errors.New("the model provider is misconfigured")

// Streamer is implemented by providers that can stream the final answer.
// Stream behaves like Complete, and also calls onText with each piece of
// answer text as it arrives (never with tool-call arguments).
type Streamer interface {
	Stream(ctx context.Context, req Request, onText func(string)) (Response, error)
}
