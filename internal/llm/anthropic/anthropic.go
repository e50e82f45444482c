// Package anthropic is an llm.Provider for the Anthropic Messages API,
// through the official SDK github.com/anthropics/anthropic-sdk-go.
//
// System messages become the system parameter; assistant tool calls become
// tool_use content blocks and tool-role messages tool_result blocks
// (consecutive results grouped into one user message, as the API wants);
// the model's tool_use blocks come back as llm.ToolCall values. max_tokens
// is required by the API: DefaultMaxTokens when the request leaves it 0.
// Stream uses the SDK's server-sent-events stream and Message.Accumulate.
//
// Every SDK option is passed explicitly, and the client is built from the
// message service alone (never anthropic.NewClient), so neither the
// ANTHROPIC_* environment variables (base URL, API key, auth token,
// profile, federation, custom headers) nor the SDK's profile files can
// leak into a request. Retries are the SDK's own (jittered backoff,
// Retry-After honoured up to llm.MaxRetryWait); an llm.Breaker fails fast once
// the upstream keeps failing.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/constraintlab/assistant/internal/llm"
)

// Defaults applied by New and Complete.
const (
	// DefaultBaseURL is the public API, used when no base URL is configured.
	DefaultBaseURL = "https://api.anthropic.com"
	// DefaultMaxTokens is max_tokens when a request sets none (the
	// Messages API requires it).
	DefaultMaxTokens = 1024
)

// Config configures a Provider: the shared remote-provider settings.
type Config = llm.RemoteConfig

// Provider is an llm.Provider and llm.Streamer for the Anthropic Messages
// API. It is safe for concurrent use.
type Provider struct {
	model   string
	timeout time.Duration
	svc     anthropic.MessageService
	breaker *llm.Breaker
}

var (
	_ llm.Provider = (*Provider)(nil)
	_ llm.Streamer = (*Provider)(nil)
)

// New validates cfg and returns a Provider. Errors wrap llm.ErrMisconfigured
// and name the ASSISTANT_LLM_* setting at fault.
func New(cfg Config) (*Provider, error) {
	cfg, err := cfg.Settle("anthropic", DefaultBaseURL)
	if err != nil {
		return nil, err
	}
	if cfg.APIKey == "" {
		return nil, fmt.Errorf("%w: anthropic: %s is required", llm.ErrMisconfigured, llm.SettingAPIKey)
	}
	// anthropic.NewClient would first apply DefaultClientOptions, which
	// read ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN,
	// ANTHROPIC_PROFILE, the federation variables, profile files under the
	// user's config directory and ANTHROPIC_CUSTOM_HEADERS; the service
	// constructor reads none of them, so every option is the one given
	// here. WithRequestTimeout also replaces the SDK's max_tokens-derived
	// non-streaming timeout.
	svc := anthropic.NewMessageService(
		option.WithBaseURL(cfg.BaseURL),
		option.WithAPIKey(cfg.APIKey),
		option.WithHTTPClient(cfg.HTTPClient),
		option.WithMaxRetries(cfg.MaxRetries),
		option.WithRequestTimeout(cfg.Timeout),
		option.WithMiddleware(capRetryAfter),
	)
	return &Provider{
		model:   cfg.Model,
		timeout: cfg.Timeout,
		svc:     svc,
		breaker: cfg.Metrics.WatchBreaker("anthropic", llm.NewBreaker("anthropic", cfg.Logger)),
	}, nil
}

// capRetryAfter stops the SDK's retry loop, which honours any Retry-After
// however long, from sleeping longer than llm.MaxRetryWait: such a response is
// marked x-should-retry: false, so it ends the call with its status.
func capRetryAfter(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if err != nil || res == nil || res.Header.Get("x-should-retry") != "" {
		return res, err
	}
	if wait, ok := retryAfter(res.Header); ok && wait > llm.MaxRetryWait {
		res.Header.Set("x-should-retry", "false")
	}
	return res, err
}

func retryAfter(h http.Header) (time.Duration, bool) {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	if v := h.Get("Retry-After"); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil {
			return time.Duration(s * float64(time.Second)), true
		}
		if t, err := http.ParseTime(v); err == nil {
			return time.Until(t), true
		}
	}
	return 0, false
}

// Name returns "anthropic".
func (p *Provider) Name() string { return "anthropic" }

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
		msg, err := p.svc.New(ctx, params, option.WithResponseInto(&raw))
		if err != nil {
			return llm.Response{}, p.callError(ctx, raw, err)
		}
		reportUsage(ctx, msg)
		return p.response(msg)
	})
}

// Stream is Complete over a streamed answer: onText gets each text_delta
// as it arrives (never the input_json_delta of a tool call).
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
		stream := p.svc.NewStreaming(ctx, params, option.WithResponseInto(&raw))
		defer stream.Close()
		var msg anthropic.Message
		stopped := false
		for stream.Next() {
			ev := stream.Current()
			if err := msg.Accumulate(ev); err != nil {
				return llm.Response{}, llm.Malformed(p.Name(), "%v", err)
			}
			switch ev.Type {
			case "content_block_delta":
				if ev.Delta.Type == "text_delta" && ev.Delta.Text != "" && onText != nil {
					onText(ev.Delta.Text)
				}
			case "message_stop":
				stopped = true
			}
		}
		if err := stream.Err(); err != nil {
			return llm.Response{}, p.callError(ctx, raw, err)
		}
		if !stopped {
			if ctx.Err() != nil {
				return llm.Response{}, llm.TransportError(ctx, p.Name(), p.timeout, ctx.Err())
			}
			return llm.Response{}, llm.Malformed(p.Name(), "stream ended before message_stop")
		}
		reportUsage(ctx, &msg)
		return p.response(&msg)
	})
}

// reportUsage passes the upstream's token counts on (llm.ReportUsage).
func reportUsage(ctx context.Context, msg *anthropic.Message) {
	if msg != nil && (msg.Usage.InputTokens > 0 || msg.Usage.OutputTokens > 0) {
		llm.ReportUsage(ctx, llm.Usage{InputTokens: int(msg.Usage.InputTokens), OutputTokens: int(msg.Usage.OutputTokens)})
	}
}

// params maps an llm.Request to the Messages request body.
func (p *Provider) params(req llm.Request) (anthropic.MessageNewParams, error) {
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(p.model),
		MaxTokens: DefaultMaxTokens,
	}
	if req.MaxTokens > 0 {
		params.MaxTokens = int64(req.MaxTokens)
	}
	for i, m := range req.Messages {
		var (
			role   anthropic.MessageParamRole
			blocks []anthropic.ContentBlockParamUnion
		)
		switch m.Role {
		case llm.RoleSystem:
			if m.Content != "" {
				params.System = append(params.System, anthropic.TextBlockParam{Text: m.Content})
			}
			continue
		case llm.RoleUser:
			role = anthropic.MessageParamRoleUser
			if m.Content != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Content))
			}
		case llm.RoleAssistant:
			role = anthropic.MessageParamRoleAssistant
			if m.Content != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Content))
			}
			for _, tc := range m.ToolCalls {
				input := tc.Arguments
				if len(input) == 0 {
					input = json.RawMessage("{}")
				}
				if !json.Valid(input) {
					return params, fmt.Errorf("anthropic: message %d: tool call %q: arguments are not JSON", i, tc.ID)
				}
				blocks = append(blocks, anthropic.NewToolUseBlock(tc.ID, input, tc.Name))
			}
		case llm.RoleTool:
			if m.ToolCallID == "" {
				return params, fmt.Errorf("anthropic: message %d: tool message without a tool call id", i)
			}
			role = anthropic.MessageParamRoleUser
			result := anthropic.ToolResultBlockParam{ToolUseID: m.ToolCallID}
			if m.Content != "" {
				result.Content = []anthropic.ToolResultBlockParamContentUnion{
					{OfText: &anthropic.TextBlockParam{Text: m.Content}},
				}
			}
			blocks = append(blocks, anthropic.ContentBlockParamUnion{OfToolResult: &result})
		default:
			return params, fmt.Errorf("anthropic: message %d: unknown role %q", i, m.Role)
		}
		if len(blocks) == 0 {
			continue // the API refuses empty content
		}
		// Consecutive turns of one role are one message: this groups the
		// results of parallel tool calls, and a user turn after them.
		if n := len(params.Messages); n > 0 && params.Messages[n-1].Role == role {
			params.Messages[n-1].Content = append(params.Messages[n-1].Content, blocks...)
			continue
		}
		params.Messages = append(params.Messages, anthropic.MessageParam{Role: role, Content: blocks})
	}
	for _, t := range req.Tools {
		tool, err := toolParam(t)
		if err != nil {
			return params, err
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &tool})
	}
	return params, nil
}

// toolParam maps a tool's JSON Schema to input_schema: properties and
// required in their own fields, any other keyword kept as is.
func toolParam(t llm.Tool) (anthropic.ToolParam, error) {
	tool := anthropic.ToolParam{Name: t.Name}
	if t.Description != "" {
		tool.Description = anthropic.String(t.Description)
	}
	if len(t.Parameters) == 0 {
		return tool, nil
	}
	var schema map[string]json.RawMessage
	if err := json.Unmarshal(t.Parameters, &schema); err != nil || schema == nil {
		return tool, fmt.Errorf("anthropic: tool %q: parameters are not a JSON object", t.Name)
	}
	for k, v := range schema {
		switch k {
		case "type":
			// always "object", which the SDK sends
		case "properties":
			tool.InputSchema.Properties = v
		case "required":
			if err := json.Unmarshal(v, &tool.InputSchema.Required); err != nil {
				return tool, fmt.Errorf("anthropic: tool %q: required is not a list of names", t.Name)
			}
		default:
			if tool.InputSchema.ExtraFields == nil {
				tool.InputSchema.ExtraFields = map[string]any{}
			}
			tool.InputSchema.ExtraFields[k] = v
		}
	}
	return tool, nil
}

// response maps a message's content blocks to an llm.Response: text blocks
// joined, tool_use blocks as tool calls.
func (p *Provider) response(msg *anthropic.Message) (llm.Response, error) {
	if msg == nil || (msg.Type != "" && msg.Type != "message") {
		return llm.Response{}, llm.Malformed(p.Name(), "not a message")
	}
	resp := llm.Response{Usage: llm.Usage{Model: string(msg.Model), InputTokens: int(msg.Usage.InputTokens),
		OutputTokens: int(msg.Usage.OutputTokens), FinishReason: string(msg.StopReason)}}
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			resp.Content += b.Text
		case "tool_use":
			args := b.Input
			if len(args) == 0 {
				args = json.RawMessage("{}")
			}
			var obj map[string]json.RawMessage
			if b.Name == "" || json.Unmarshal(args, &obj) != nil || obj == nil {
				return llm.Response{}, llm.Malformed(p.Name(), "tool_use block %q (%s) without a name or an object input", b.ID, b.Name)
			}
			resp.ToolCalls = append(resp.ToolCalls, llm.ToolCall{ID: b.ID, Name: b.Name, Arguments: append(json.RawMessage(nil), args...)})
		}
		// thinking and other blocks carry nothing for the caller
	}
	return resp, nil
}

// callError maps an SDK error to the llm error vocabulary.
func (p *Provider) callError(ctx context.Context, raw *http.Response, err error) error {
	if ctx.Err() != nil {
		return llm.TransportError(ctx, p.Name(), p.timeout, err)
	}
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) {
		status := apiErr.StatusCode
		if status < 400 {
			// An error event in a stream that began 200 (overloaded_error,
			// api_error): the upstream could not finish.
			return fmt.Errorf("%w: anthropic: error event in the stream: %s %s",
				llm.ErrUnavailable, apiErr.Type(), errorMessage(apiErr.RawJSON()))
		}
		return llm.StatusError(p.Name(), p.model, status, errorMessage(apiErr.RawJSON()))
	}
	if raw != nil && raw.StatusCode >= 400 {
		return llm.StatusError(p.Name(), p.model, raw.StatusCode, "")
	}
	return llm.TransportError(ctx, p.Name(), p.timeout, err)
}

// errorMessage extracts error.message from an Anthropic error body.
func errorMessage(body string) string {
	var e struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(body), &e) != nil {
		return ""
	}
	return e.Error.Message
}
