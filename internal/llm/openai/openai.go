// Package openai is an llm.Provider for any server that speaks the OpenAI
// Chat Completions API (OpenAI itself, vLLM, llama.cpp, Ollama, LiteLLM,
// ...), through the official SDK github.com/openai/openai-go/v3.
//
// Tools are sent as function definitions and the model's tool_calls come
// back as llm.ToolCall values; assistant tool calls and tool-role results
// in the conversation are sent back in the same shape. Stream uses the
// SDK's server-sent-events stream and its ChatCompletionAccumulator.
//
// Every SDK option is passed explicitly, and the client is built from the
// chat completion service alone (never openai.NewClient), so no
// OPENAI_* environment variable (base URL, API key, organization, project,
// custom headers) can leak into a request. Retries are the SDK's own
// (jittered backoff, Retry-After honoured up to llm.MaxRetryWait); an
// llm.Breaker fails fast once the upstream keeps failing.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/constraintlab/assistant/internal/llm"
)

// DefaultBaseURL is the public API, used when no base URL is configured.
const DefaultBaseURL = "https://api.openai.com/v1"

// Config configures a Provider: the shared remote-provider settings.
type Config = llm.RemoteConfig

// Provider is an llm.Provider and llm.Streamer for an OpenAI-compatible
// Chat Completions server. It is safe for concurrent use.
type Provider struct {
	model   string
	timeout time.Duration
	svc     openai.ChatCompletionService
	breaker *llm.Breaker
}

var (
	_ llm.Provider = (*Provider)(nil)
	_ llm.Streamer = (*Provider)(nil)
)

// New validates cfg and returns a Provider. Errors wrap llm.ErrMisconfigured
// and name the ASSISTANT_LLM_* setting at fault.
func New(cfg Config) (*Provider, error) {
	cfg, err := cfg.Settle("openai", DefaultBaseURL)
	if err != nil {
		return nil, err
	}
	// openai.NewClient would first apply DefaultClientOptions, which read
	// OPENAI_BASE_URL, OPENAI_API_KEY, OPENAI_ORG_ID, OPENAI_PROJECT_ID,
	// OPENAI_CUSTOM_HEADERS and more; the service constructor reads nothing
	// from the environment, so every option is the one given here.
	opts := []option.RequestOption{
		option.WithBaseURL(cfg.BaseURL),
		option.WithHTTPClient(cfg.HTTPClient),
		option.WithMaxRetries(cfg.MaxRetries),
		option.WithMaxRetryDelay(llm.MaxRetryWait),
		option.WithRequestTimeout(cfg.Timeout),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	return &Provider{
		model:   cfg.Model,
		timeout: cfg.Timeout,
		svc:     openai.NewChatCompletionService(opts...),
		breaker: cfg.Metrics.WatchBreaker("openai", llm.NewBreaker("openai", cfg.Logger)),
	}, nil
}

// Name returns "openai".
func (p *Provider) Name() string { return "openai" }

// Complete sends the conversation and returns the model's tool calls or
// final text.
func (p *Provider) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	params, err := p.params(req)
	if err != nil {
		return llm.Response{}, err
	}
	if ctx.Err() != nil {
		return llm.Response{}, llm.TransportError(ctx, p.Name(), p.timeout, ctx.Err())
	}
	return p.breaker.Do(func() (llm.Response, error) {
		var raw *http.Response
		completion, err := p.svc.New(ctx, params, option.WithResponseInto(&raw))
		if err != nil {
			return llm.Response{}, p.callError(ctx, raw, err)
		}
		reportUsage(ctx, completion)
		return p.response(completion)
	})
}

// Stream is Complete over a streamed answer: onText gets each piece of
// answer text as it arrives (never tool-call arguments).
func (p *Provider) Stream(ctx context.Context, req llm.Request, onText func(string)) (llm.Response, error) {
	params, err := p.params(req)
	if err != nil {
		return llm.Response{}, err
	}
	if ctx.Err() != nil {
		return llm.Response{}, llm.TransportError(ctx, p.Name(), p.timeout, ctx.Err())
	}
	return p.breaker.Do(func() (llm.Response, error) {
		var raw *http.Response
		// The usage comes in a last chunk, only when asked for.
		params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		stream := p.svc.NewStreaming(ctx, params, option.WithResponseInto(&raw))
		defer stream.Close()
		var acc openai.ChatCompletionAccumulator
		for stream.Next() {
			chunk := stream.Current()
			if !acc.AddChunk(chunk) {
				return llm.Response{}, llm.Malformed(p.Name(), "stream chunk %q could not be accumulated", chunk.ID)
			}
			for _, c := range chunk.Choices {
				if c.Index == 0 && c.Delta.Content != "" && onText != nil {
					onText(c.Delta.Content)
				}
			}
		}
		if err := stream.Err(); err != nil {
			return llm.Response{}, p.callError(ctx, raw, err)
		}
		if len(acc.Choices) == 0 || acc.Choices[0].FinishReason == "" {
			// The body ended without a finish_reason: cut off mid-answer.
			if ctx.Err() != nil {
				return llm.Response{}, llm.TransportError(ctx, p.Name(), p.timeout, ctx.Err())
			}
			return llm.Response{}, llm.Malformed(p.Name(), "stream ended before a finish_reason")
		}
		reportUsage(ctx, &acc.ChatCompletion)
		return p.response(&acc.ChatCompletion)
	})
}

// reportUsage passes the upstream's token counts on (llm.ReportUsage);
// a server that sends none reports nothing.
func reportUsage(ctx context.Context, c *openai.ChatCompletion) {
	if c != nil && (c.Usage.PromptTokens > 0 || c.Usage.CompletionTokens > 0) {
		llm.ReportUsage(ctx, llm.Usage{InputTokens: int(c.Usage.PromptTokens), OutputTokens: int(c.Usage.CompletionTokens)})
	}
}

// params maps an llm.Request to the Chat Completions request body.
func (p *Provider) params(req llm.Request) (openai.ChatCompletionNewParams, error) {
	params := openai.ChatCompletionNewParams{Model: shared.ChatModel(p.model)}
	if req.MaxTokens > 0 {
		// max_tokens rather than max_completion_tokens: every
		// OpenAI-compatible server understands it.
		params.MaxTokens = openai.Int(int64(req.MaxTokens))
	}
	for i, m := range req.Messages {
		msg, err := message(m)
		if err != nil {
			return params, fmt.Errorf("openai: message %d: %w", i, err)
		}
		params.Messages = append(params.Messages, msg)
	}
	for _, t := range req.Tools {
		def := shared.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			def.Description = openai.String(t.Description)
		}
		if len(t.Parameters) > 0 {
			if err := json.Unmarshal(t.Parameters, &def.Parameters); err != nil {
				return params, fmt.Errorf("openai: tool %q: parameters are not a JSON object: %w", t.Name, err)
			}
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(def))
	}
	return params, nil
}

func message(m llm.Message) (openai.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case llm.RoleSystem:
		return openai.SystemMessage(m.Content), nil
	case llm.RoleUser:
		return openai.UserMessage(m.Content), nil
	case llm.RoleAssistant:
		var a openai.ChatCompletionAssistantMessageParam
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = openai.String(m.Content)
		}
		for _, tc := range m.ToolCalls {
			args := string(tc.Arguments)
			if args == "" {
				args = "{}"
			}
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: tc.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
						Name:      tc.Name,
						Arguments: args,
					},
				},
			})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	case llm.RoleTool:
		if m.ToolCallID == "" {
			return openai.ChatCompletionMessageParamUnion{}, errors.New("tool message without a tool call id")
		}
		return openai.ToolMessage(m.Content, m.ToolCallID), nil
	default:
		return openai.ChatCompletionMessageParamUnion{}, fmt.Errorf("unknown role %q", m.Role)
	}
}

// response maps the first choice of a completion to an llm.Response.
func (p *Provider) response(c *openai.ChatCompletion) (llm.Response, error) {
	if c == nil || len(c.Choices) == 0 {
		return llm.Response{}, llm.Malformed(p.Name(), "no choices")
	}
	msg := c.Choices[0].Message
	resp := llm.Response{Content: msg.Content, Usage: llm.Usage{Model: c.Model, InputTokens: int(c.Usage.PromptTokens),
		OutputTokens: int(c.Usage.CompletionTokens), FinishReason: c.Choices[0].FinishReason}}
	for _, tc := range msg.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			return llm.Response{}, llm.Malformed(p.Name(), "tool call %q of unsupported type %q", tc.ID, tc.Type)
		}
		if tc.Function.Name == "" {
			return llm.Response{}, llm.Malformed(p.Name(), "tool call %q without a function name", tc.ID)
		}
		args := json.RawMessage(tc.Function.Arguments)
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		if !isObject(args) {
			return llm.Response{}, llm.Malformed(p.Name(), "arguments of tool call %q (%s) are not a JSON object", tc.ID, tc.Function.Name)
		}
		resp.ToolCalls = append(resp.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: args})
	}
	return resp, nil
}

func isObject(raw json.RawMessage) bool {
	var v map[string]json.RawMessage
	return json.Unmarshal(raw, &v) == nil && v != nil
}

// callError maps an SDK error to the llm error vocabulary.
func (p *Provider) callError(ctx context.Context, raw *http.Response, err error) error {
	if ctx.Err() != nil {
		return llm.TransportError(ctx, p.Name(), p.timeout, err)
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) && apiErr.StatusCode >= 400 {
		return llm.StatusError(p.Name(), p.model, apiErr.StatusCode, apiErr.Message)
	}
	if raw != nil && raw.StatusCode >= 400 {
		// An error status whose body was not the usual {"error": {...}}.
		return llm.StatusError(p.Name(), p.model, raw.StatusCode, "")
	}
	return llm.TransportError(ctx, p.Name(), p.timeout, err)
}
