package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/constraintlab/assistant/internal/chat"
	"github.com/constraintlab/assistant/internal/llm"
)

// POST /api/v1/openai/responses: OpenAI's Responses API over the chat
// turn, for clients that use it by default (the AI SDK's openai provider,
// openai.responses.create). The request maps onto a chat completion's
// (input is the messages), so the turn, its checks and its errors are the
// completions'. The service keeps no conversation state: previous_response_id
// is refused, and the conversation is sent in input.

type openAIResponsesRequest struct {
	Model        string                    `json:"model" example:"assistant-operator" doc:"The persona: assistant-operator, assistant-customer, assistant-support or assistant-success. Any other is 404 model_not_found."`
	Input        openAIResponsesInputValue `json:"input" doc:"The user's message as a string, or the conversation as an array of messages ({role, content}, content a string or input_text/output_text parts), oldest first; the last user or assistant message must be the user's."`
	Instructions *string                   `json:"instructions,omitempty" doc:"Accepted and ignored, like system messages: the persona sets the assistant's instructions."`
	Stream       bool                      `json:"stream,omitempty" doc:"true: server-sent events of the Responses API (response.created ... response.completed)."`
	PreviousID   *string                   `json:"previous_response_id,omitempty" doc:"Refused (400): the service keeps no conversation state; send the earlier turns in input."`
	Conversation any                       `json:"conversation,omitempty" doc:"Refused (400), as previous_response_id."`
	Text         *openAIResponseTextParam  `json:"text,omitempty" doc:"Only format {type: text}; json_object and json_schema are refused (400, param text.format)."`
	Tools        any                       `json:"tools,omitempty" doc:"Refused (400) unless empty: the assistant calls its own tools only."`
	ToolChoice   any                       `json:"tool_choice,omitempty" doc:"Only none or auto."`
	Store        *bool                     `json:"store,omitempty" doc:"Accepted; nothing is stored whatever its value (GET of a response is not offered)."`
	Background   *bool                     `json:"background,omitempty" doc:"Only false."`
	Vertical     string                    `json:"vertical,omitempty" example:"ecommerce" doc:"Extension: the business's industry, a vertical id of GET /api/assistant/v1/catalog."`
	Source       string                    `json:"source,omitempty" maxLength:"200" doc:"Extension: a label recorded with usage (default openai)."`
	Metadata     map[string]any            `json:"metadata,omitempty" doc:"Echoed in the response."`
	Include      []string                  `json:"include,omitempty" doc:"Accepted and ignored."`
}

type openAIResponseTextParam struct {
	Format any `json:"format,omitempty"`
}

// openAIResponsesInputValue is a string or an array of input items.
type openAIResponsesInputValue struct {
	text  *string
	items []openAIResponsesInputItem
}

type openAIResponsesInputItem struct {
	Type    string        `json:"type,omitempty"`
	Role    string        `json:"role,omitempty"`
	Content openAIContent `json:"content,omitempty"`
}

func (in *openAIResponsesInputValue) UnmarshalJSON(b []byte) error {
	*in = openAIResponsesInputValue{}
	b = []byte(strings.TrimSpace(string(b)))
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		in.text = &s
		return nil
	}
	return json.Unmarshal(b, &in.items)
}

func (in openAIResponsesInputValue) MarshalJSON() ([]byte, error) {
	if in.text != nil {
		return json.Marshal(*in.text)
	}
	return json.Marshal(in.items)
}

// Schema documents the two forms.
func (openAIResponsesInputValue) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{
		Description: "A string (the user's message), or an array of messages {type?: message, role, content}.",
		AnyOf: []*huma.Schema{
			{Type: huma.TypeString},
			{Type: huma.TypeArray, MinItems: ptr(1), Items: &huma.Schema{Type: huma.TypeObject,
				Properties: map[string]*huma.Schema{
					"type":    {Type: huma.TypeString, Description: "message (other item types, such as function_call_output, are ignored)."},
					"role":    {Type: huma.TypeString, Enum: []any{"user", "assistant", "system", "developer"}},
					"content": openAIContent{}.Schema(nil),
				}}},
		},
	}
}

type openAIResponsesInput struct {
	Body openAIResponsesRequest
}

// messages maps the input onto a chat completion's messages, and the
// extra parameters onto refusals.
func (r *openAIResponsesRequest) completion() (*openAIChatRequest, error) {
	switch {
	case r.PreviousID != nil && *r.PreviousID != "":
		return nil, unsupportedParam("previous_response_id",
			"the service keeps no conversation state. Send the earlier turns in input, as an array of {role, content} messages, oldest first.")
	case r.Conversation != nil:
		return nil, unsupportedParam("conversation", "the service keeps no conversation state. Send the earlier turns in input.")
	case r.Text != nil && !textFormat(r.Text.Format):
		return nil, unsupportedParam("text.format", refusedFormat)
	case !emptyList(r.Tools):
		return nil, unsupportedParam("tools", refusedTools)
	case !noneOrAuto(r.ToolChoice):
		return nil, unsupportedParam("tool_choice", "the assistant calls its own tools and returns no tool calls.")
	case r.Background != nil && *r.Background:
		return nil, unsupportedParam("background", "a turn is answered in the request (or streamed); nothing is kept to poll.")
	}
	out := &openAIChatRequest{Model: r.Model, Vertical: r.Vertical, Source: r.Source}
	if r.Input.text != nil {
		out.Messages = []openAIMessage{{Role: "user", Content: openAIContent{text: *r.Input.text}}}
		return out, nil
	}
	for i, it := range r.Input.items {
		switch it.Type {
		case "", "message":
		case "item_reference":
			return nil, newOpenAIError(http.StatusBadRequest, "Item references are not supported: the service keeps no state. Send the message itself.",
				fmt.Sprintf("input[%d]", i), "unsupported_parameter")
		default:
			continue // tool calls and their outputs, reasoning: ignored, as tool messages are
		}
		out.Messages = append(out.Messages, openAIMessage{Role: it.Role, Content: it.Content})
	}
	if len(out.Messages) == 0 {
		return nil, newOpenAIError(http.StatusBadRequest, "input must hold the user's message: a string, or messages with the user's last.", "input", "")
	}
	return out, nil
}

// --- the response ---

type openAIResponseContent struct {
	Type        string `json:"type" enum:"output_text"`
	Text        string `json:"text" doc:"The answer, Markdown, with citation tokens such as [framework:theory-of-constraints]."`
	Annotations []any  `json:"annotations" doc:"Always empty: citations are the tokens in the text (resolve them with POST /api/assistant/v1/resolve)."`
	Logprobs    []any  `json:"logprobs" doc:"Always empty."`
}

type openAIResponseMessage struct {
	Type    string                  `json:"type" enum:"message"`
	ID      string                  `json:"id"`
	Status  string                  `json:"status" enum:"in_progress,completed"`
	Role    string                  `json:"role" enum:"assistant"`
	Content []openAIResponseContent `json:"content"`
}

type openAIResponseUsage struct {
	InputTokens         int                         `json:"input_tokens" minimum:"0"`
	InputTokensDetails  openAIResponseInputDetails  `json:"input_tokens_details"`
	OutputTokens        int                         `json:"output_tokens" minimum:"0"`
	OutputTokensDetails openAIResponseOutputDetails `json:"output_tokens_details"`
	TotalTokens         int                         `json:"total_tokens" minimum:"0"`
}

type openAIResponseInputDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

type openAIResponseOutputDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

type openAIResponseText struct {
	Format map[string]string `json:"format"`
}

type openAIResponse struct {
	ID                 string                    `json:"id" doc:"resp_ and the request id (X-Request-Id)."`
	Object             string                    `json:"object" enum:"response"`
	CreatedAt          int64                     `json:"created_at" doc:"Unix time of the request."`
	Status             string                    `json:"status" enum:"in_progress,completed,failed"`
	Error              *openAIErrorDetail        `json:"error" doc:"null, or the error of a failed stream."`
	IncompleteDetails  any                       `json:"incomplete_details" doc:"Always null."`
	Instructions       *string                   `json:"instructions" doc:"The instructions sent (ignored), or null."`
	Model              string                    `json:"model"`
	Output             []openAIResponseMessage   `json:"output" doc:"One assistant message once completed; empty while in progress."`
	ParallelToolCalls  bool                      `json:"parallel_tool_calls"`
	PreviousResponseID *string                   `json:"previous_response_id" doc:"Always null."`
	Store              bool                      `json:"store" doc:"Always false: nothing is stored."`
	Text               openAIResponseText        `json:"text"`
	ToolChoice         string                    `json:"tool_choice" enum:"none"`
	Tools              []any                     `json:"tools" doc:"Always empty."`
	Metadata           map[string]any            `json:"metadata"`
	Usage              *openAIResponseUsage      `json:"usage" doc:"The tokens of the turn, once completed (as in chat completions); null while in progress."`
	Assistant          *openAIAssistantExtension `json:"x_assistant" doc:"Extension: reasoning_trace, rag_hits and confidence of the turn, once completed; null while in progress."`
}

func (f *openAIFacade) responseObject(ctx context.Context, in *openAIResponsesRequest, created int64) openAIResponse {
	md := in.Metadata
	if md == nil {
		md = map[string]any{}
	}
	return openAIResponse{ID: "resp_" + RequestIDFrom(ctx), Object: "response", CreatedAt: created, Status: "in_progress",
		Instructions: in.Instructions, Model: in.Model, Output: []openAIResponseMessage{}, Text: openAIResponseText{Format: map[string]string{"type": "text"}},
		ToolChoice: "none", Tools: []any{}, Metadata: md}
}

func completeResponse(o *openAIResponse, msgID string, resp chat.Response, u openAIUsage) {
	o.Status = "completed"
	o.Output = []openAIResponseMessage{{Type: "message", ID: msgID, Status: "completed", Role: "assistant",
		Content: []openAIResponseContent{{Type: "output_text", Text: resp.Response, Annotations: []any{}, Logprobs: []any{}}}}}
	o.Usage = &openAIResponseUsage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	o.Assistant = extensionOf(resp)
}

// openAIResponseEvent is the data of every event of a streamed response; its
// type is also the event's name.
type openAIResponseEvent struct {
	Type           string                 `json:"type" enum:"response.created,response.in_progress,response.output_item.added,response.content_part.added,response.output_text.delta,response.output_text.done,response.content_part.done,response.output_item.done,response.completed,error"`
	SequenceNumber int                    `json:"sequence_number"`
	Response       *openAIResponse        `json:"response,omitempty" doc:"response.created, response.in_progress, response.completed."`
	OutputIndex    *int                   `json:"output_index,omitempty"`
	ContentIndex   *int                   `json:"content_index,omitempty"`
	ItemID         string                 `json:"item_id,omitempty"`
	Item           *openAIResponseMessage `json:"item,omitempty" doc:"response.output_item.added and .done."`
	Part           *openAIResponseContent `json:"part,omitempty" doc:"response.content_part.added and .done."`
	Delta          *string                `json:"delta,omitempty" doc:"response.output_text.delta: the next piece of the answer, its citation tokens checked."`
	Text           *string                `json:"text,omitempty" doc:"response.output_text.done: the whole answer."`
	Logprobs       []any                  `json:"logprobs,omitempty"`
	// error events
	Code    *string `json:"code,omitempty" doc:"error: a machine-readable code, such as upstream_unavailable."`
	Message string  `json:"message,omitempty" doc:"error: what went wrong."`
	Param   *string `json:"param,omitempty"`
}

type responsesStream struct {
	w     http.ResponseWriter
	seq   int
	msgID string
	text  strings.Builder
}

func (st *responsesStream) send(ev openAIResponseEvent) {
	ev.SequenceNumber = st.seq
	st.seq++
	b, err := json.Marshal(ev)
	if err != nil {
		b = []byte(`{"type":"error","sequence_number":0,"message":"encoding failed"}`)
		ev.Type = "error"
	}
	fmt.Fprintf(st.w, "event: %s\ndata: %s\n\n", ev.Type, b)
	http.NewResponseController(st.w).Flush()
}

// Hop implements chat.Events: the trace goes out with response.completed.
func (st *responsesStream) Hop(chat.TraceItem) {}

// Delta implements chat.Events.
func (st *responsesStream) Delta(text string) {
	st.text.WriteString(text)
	st.send(openAIResponseEvent{Type: "response.output_text.delta", ItemID: st.msgID, OutputIndex: ptr(0), ContentIndex: ptr(0), Delta: &text, Logprobs: []any{}})
}

func (f *openAIFacade) responses(ctx context.Context, in *openAIResponsesInput) (*huma.StreamResponse, error) {
	s := f.s
	creq, err := in.Body.completion()
	if err != nil {
		return nil, err
	}
	body, err := f.chatRequest(creq)
	if err != nil {
		if oe, ok := err.(*openAIError); ok && oe.Detail.Param != nil {
			p := strings.Replace(*oe.Detail.Param, "messages", "input", 1)
			oe.Detail.Param = &p
			oe.Detail.Message = strings.ReplaceAll(oe.Detail.Message, "messages", "input messages")
		}
		return nil, err
	}
	req, err := s.prepareTurn(ctx, body)
	if err != nil {
		return nil, openAIErrorFromProblem(s.chatProblem(ctx, err))
	}
	created := s.Now().Unix()
	msgID := "msg_" + RequestIDFrom(ctx)
	obj := f.responseObject(ctx, &in.Body, created)
	ctx, meter := llm.WithUsageMeter(ctx)
	if !in.Body.Stream {
		resp, err := s.runTurn(ctx, req, nil)
		if err != nil {
			return nil, openAIErrorFromProblem(s.chatProblem(ctx, err))
		}
		completeResponse(&obj, msgID, resp, turnUsage(meter, body, resp.Response))
		return jsonAnswer(obj), nil
	}
	return &huma.StreamResponse{Body: func(hctx huma.Context) {
		st := &responsesStream{w: startEventStream(hctx), msgID: msgID}
		started := obj
		st.send(openAIResponseEvent{Type: "response.created", Response: &started})
		st.send(openAIResponseEvent{Type: "response.in_progress", Response: &started})
		item := openAIResponseMessage{Type: "message", ID: msgID, Status: "in_progress", Role: "assistant", Content: []openAIResponseContent{}}
		st.send(openAIResponseEvent{Type: "response.output_item.added", OutputIndex: ptr(0), Item: &item})
		part := openAIResponseContent{Type: "output_text", Annotations: []any{}, Logprobs: []any{}}
		st.send(openAIResponseEvent{Type: "response.content_part.added", ItemID: msgID, OutputIndex: ptr(0), ContentIndex: ptr(0), Part: &part})
		resp, err := s.runTurn(ctx, req, st)
		if err != nil {
			// After the 200 went out, an error event (which the openai
			// packages raise as an APIError); the turn is not recorded.
			p := s.chatProblem(ctx, err)
			usageFrom(ctx).failedWith(p.Status)
			e := openAIErrorFromProblem(p)
			st.send(openAIResponseEvent{Type: "error", Code: e.Detail.Code, Message: e.Detail.Message, Param: e.Detail.Param})
			return
		}
		text := resp.Response
		st.send(openAIResponseEvent{Type: "response.output_text.done", ItemID: msgID, OutputIndex: ptr(0), ContentIndex: ptr(0), Text: &text, Logprobs: []any{}})
		done := openAIResponseContent{Type: "output_text", Text: text, Annotations: []any{}, Logprobs: []any{}}
		st.send(openAIResponseEvent{Type: "response.content_part.done", ItemID: msgID, OutputIndex: ptr(0), ContentIndex: ptr(0), Part: &done})
		completeResponse(&obj, msgID, resp, turnUsage(meter, body, resp.Response))
		st.send(openAIResponseEvent{Type: "response.output_item.done", OutputIndex: ptr(0), Item: &obj.Output[0]})
		st.send(openAIResponseEvent{Type: "response.completed", Response: &obj})
	}}, nil
}

// registerResponses registers POST /api/v1/openai/responses; withErrors is
// registerOpenAI's helper.
func (f *openAIFacade) registerResponses(api huma.API, withErrors func(huma.Operation, ...int) huma.Operation) {
	reg := api.OpenAPI().Components.Schemas
	op := withErrors(huma.Operation{
		OperationID: "openaiResponses", Method: http.MethodPost, Path: openAIPrefix + "/responses",
		Summary: "One assistant turn as an OpenAI response (Responses API)",
		Description: "OpenAI's Responses API over the assistant: `model` picks the persona, `input` is the user's message (a string) or the conversation " +
			"(messages, the user's last); `instructions` are ignored, as system messages are. The service keeps no state: `previous_response_id` is refused " +
			"(send the conversation in `input`) and nothing is stored. `stream: true` answers the Responses API's server-sent events, from " +
			"`response.created` to `response.completed`. Parameters the service cannot honour (`tools`, `text.format` other than text, ...) are refused " +
			"with a 400 naming them. `" + openAIExtension + "` carries reasoning_trace, rag_hits and confidence; `usage` counts the turn's tokens. " +
			"Shares the per-key limit of POST /api/v1/chat.",
		RequestBody: jsonExample(map[string]any{"model": "assistant-operator", "input": "Our packing station cannot keep up and orders ship late"}),
	}, http.StatusBadRequest, http.StatusNotFound, http.StatusRequestEntityTooLarge, http.StatusBadGateway)
	op.Responses["200"] = &huma.Response{
		Description: "The response (JSON), or its events as server-sent events when stream is true.",
		Content: map[string]*huma.MediaType{
			"application/json":  {Schema: reg.Schema(reflect.TypeFor[openAIResponse](), true, "")},
			"text/event-stream": {Schema: &huma.Schema{Type: huma.TypeString, Description: "event: <type> and data: the event object, for each of response.created, response.in_progress, response.output_item.added, response.content_part.added, response.output_text.delta (one per piece of the answer), response.output_text.done, response.content_part.done, response.output_item.done, response.completed; or an error event after the stream started."}},
		},
	}
	reg.Schema(reflect.TypeFor[openAIResponseEvent](), true, "")
	huma.Register(api, op, f.responses)
}
