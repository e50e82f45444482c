package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/constraintlab/assistant/internal/chat"
	"github.com/constraintlab/assistant/internal/llm"
	"github.com/constraintlab/assistant/internal/verify"
)

// The OpenAI-compatible facade: POST /api/v1/openai/chat/completions and
// GET /api/v1/openai/models, so that chat UIs and SDKs made for OpenAI's
// chat completions (Open WebUI, LibreChat, the openai packages) talk to
// the assistant with nothing but a base URL, an API key and a model name.
//
// A completion is one chat turn, run by the same code as POST
// /api/v1/chat (prepareTurn, runTurn): `model` selects the persona
// (assistant-<mode>), the last message is the user's message and the
// user and assistant messages before it are the history. The answer keeps
// its citation tokens; the rest of the turn (reasoning_trace, rag_hits,
// confidence) rides in the extension field x_assistant, which ordinary
// clients ignore. It shares the key's per-minute budget with chat.
//
// Errors on this surface, and only here, take OpenAI's shape
// {"error": {message, type, param, code}} instead of a problem document,
// because that is what the clients of this surface parse: every layer of
// the surface writes its errors with writeOpenAIProblem, huma's own errors
// (validation, body size) are built in this shape for its operations
// (useProblemErrors), and openAIErrors replaces what the standard library
// writes as text.

const (
	openAIPrefix = "/api/v1/openai"
	// openAIModelPrefix + mode is a model id.
	openAIModelPrefix = "assistant-"
	// openAIExtension names the field that carries the rest of the turn.
	openAIExtension = "x_assistant"
)

// modeOfModel maps a model id to a chat mode.
func modeOfModel(model string) (string, bool) {
	mode, ok := strings.CutPrefix(model, openAIModelPrefix)
	return mode, ok && slices.Contains(chat.Modes, mode)
}

func modelIDs() []string {
	var ids []string
	for _, m := range chat.Modes {
		ids = append(ids, openAIModelPrefix+m)
	}
	return ids
}

// --- errors ---

// openAIError is an error of this surface, in OpenAI's shape. huma writes
// it as it is (a StatusError with its own content type and headers).
type openAIError struct {
	Detail openAIErrorDetail `json:"error"`

	status  int
	headers http.Header
}

type openAIErrorDetail struct {
	Message string  `json:"message" doc:"What went wrong, and how to fix it."`
	Type    string  `json:"type" doc:"invalid_request_error, requests (rate limited) or server_error."`
	Param   *string `json:"param" doc:"The request field at fault, or null."`
	Code    *string `json:"code" doc:"A machine-readable code (invalid_api_key, model_not_found, rate_limit_exceeded, ...), or null."`
}

func (e *openAIError) Error() string           { return e.Detail.Message }
func (e *openAIError) GetStatus() int          { return e.status }
func (e *openAIError) GetHeaders() http.Header { return e.headers }
func (e *openAIError) ContentType(string) string {
	return "application/json"
}

// modelNotFound is the 404 of a model id that names no persona; the id
// is quoted cut at 200 characters.
func modelNotFound(model string) *openAIError {
	return newOpenAIError(http.StatusNotFound, fmt.Sprintf("The model %q does not exist. Use one of: %s.", model, strings.Join(modelIDs(), ", ")),
		"model", "model_not_found")
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func newOpenAIError(status int, message, param, code string) *openAIError {
	typ := "invalid_request_error"
	switch {
	case status == http.StatusTooManyRequests:
		typ = "requests"
	case status >= 500:
		typ = "server_error"
	}
	return &openAIError{status: status, Detail: openAIErrorDetail{Message: cutQuotedEchoes(message), Type: typ, Param: strPtr(cutEcho(param)), Code: strPtr(code)}}
}

var missingProperty = regexp.MustCompile(`^expected required property (\S+) to be present`)

// openAIErrorFromProblem renders a problem document of the rest of the
// API (authentication, limits, validation, the chat turn) in OpenAI's
// shape, keeping its status and headers (Retry-After, WWW-Authenticate).
func openAIErrorFromProblem(p *Problem) *openAIError {
	code := ""
	switch p.Status {
	case http.StatusUnauthorized:
		code = "invalid_api_key"
	case http.StatusNotFound:
		code = "not_found"
	case http.StatusMethodNotAllowed:
		code = "method_not_allowed"
	case http.StatusRequestEntityTooLarge:
		code = "request_too_large"
	case http.StatusTooManyRequests:
		code = "rate_limit_exceeded"
	case http.StatusBadGateway:
		code = "upstream_unavailable"
	}
	param := ""
	if len(p.Errors) > 0 {
		loc := p.Errors[0].Location
		// huma reports a missing property at its parent.
		if m := missingProperty.FindStringSubmatch(p.Errors[0].Message); m != nil {
			loc += "." + m[1]
		}
		param = strings.TrimPrefix(strings.TrimPrefix(loc, "body"), ".")
	}
	e := newOpenAIError(p.Status, p.Detail, param, code)
	e.headers = p.headers
	return e
}

// openAIErrors is the error writer of the facade: errors the standard
// library writes as text (the mux's 404 and 405) are replaced by OpenAI's
// shape; the errors of this package's layers and handlers, written in
// that shape already (application/json), pass as they are, marked
// no-store.
func openAIErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ow := &openAIErrorWriter{ResponseWriter: w, r: r}
		next.ServeHTTP(ow, r)
		ow.finish()
	})
}

type openAIErrorWriter struct {
	http.ResponseWriter
	r         *http.Request
	committed bool
	status    int // of a text error being replaced
}

func (w *openAIErrorWriter) WriteHeader(code int) {
	if w.committed {
		return
	}
	w.committed = true
	if code >= 400 && !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
		w.status = code
		return
	}
	if code >= 400 {
		w.Header().Set("Cache-Control", cacheNoStore)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *openAIErrorWriter) Write(b []byte) (int, error) {
	if !w.committed {
		w.WriteHeader(http.StatusOK)
	}
	if w.status != 0 {
		return len(b), nil // a text error body is replaced
	}
	return w.ResponseWriter.Write(b)
}

func (w *openAIErrorWriter) Flush() {
	if !w.committed {
		w.WriteHeader(http.StatusOK)
	}
	if w.status == 0 {
		http.NewResponseController(w.ResponseWriter).Flush()
	}
}

func (w *openAIErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes the replacement of a text error, if there is one.
func (w *openAIErrorWriter) finish() {
	if w.status == 0 {
		return
	}
	p := newProblem(w.r.Context(), w.status, defaultDetail(w.r, w.status, w.Header().Get("Allow")))
	writeOpenAIError(w.ResponseWriter, openAIErrorFromProblem(p))
}

// writeOpenAIProblem is the facade's errorWriter: a problem of a layer
// shared with the rest of the API (authentication, limits, a panic),
// written once in OpenAI's shape with the headers writeProblem sets.
func writeOpenAIProblem(w http.ResponseWriter, p *Problem) {
	w.Header().Del("ETag")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	writeOpenAIError(w, openAIErrorFromProblem(p))
}

func writeOpenAIError(w http.ResponseWriter, e *openAIError) {
	h := w.Header()
	for k, v := range e.headers {
		h[k] = v
	}
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", cacheNoStore)
	h.Del("Content-Length")
	w.WriteHeader(e.status)
	json.NewEncoder(w).Encode(e)
}

// --- the request ---

type openAIChatRequest struct {
	Model    string          `json:"model" example:"assistant-operator" doc:"The persona: assistant-operator, assistant-customer, assistant-support or assistant-success (GET /api/v1/openai/models). Any other is 404 model_not_found."`
	Messages []openAIMessage `json:"messages" minItems:"1" doc:"The conversation, oldest first. The last user or assistant message must be the user's: it is the message; the user and assistant messages before it are the history (at most 50). System and developer messages are ignored: the persona sets the assistant's instructions. Tool messages are ignored."`
	Stream   bool            `json:"stream,omitempty" doc:"true: server-sent events in OpenAI's chunk format, ending with data: [DONE]."`
	N        *int            `json:"n,omitempty" minimum:"1" maximum:"1" doc:"Only 1: a turn has one answer."`
	Vertical string          `json:"vertical,omitempty" example:"ecommerce" doc:"Extension: the business's industry, a vertical id of GET /api/assistant/v1/catalog, as in POST /api/v1/chat."`
	Source   string          `json:"source,omitempty" maxLength:"200" doc:"Extension: a label of the calling integration, recorded with usage (default openai); never changes the answer."`

	StreamOptions *openAIStreamOptions `json:"stream_options,omitempty" doc:"include_usage: true sends the usage in one more chunk, with no choices, before data: [DONE]; otherwise the closing chunk carries it."`
	openAIUnsupported
}

type openAIStreamOptions struct {
	IncludeUsage bool `json:"include_usage,omitempty"`
}

// openAIUnsupported are the parameters of chat completions that the
// service cannot honour: sent with a value that asks for something (tools
// to call, a JSON answer, log probabilities, audio), each is refused with
// a 400 naming it, rather than ignored, so that a client never takes an
// answer for what it did not ask. The other parameters (temperature,
// max_tokens, seed, user, ...) are accepted and ignored: the turn is the
// assistant's.
type openAIUnsupported struct {
	Tools          any   `json:"tools,omitempty" doc:"Refused (400, param tools) unless empty: the assistant calls its own tools only."`
	ToolChoice     any   `json:"tool_choice,omitempty" doc:"Only none or auto; anything else is refused (400)."`
	Functions      any   `json:"functions,omitempty" doc:"Refused (400) unless empty."`
	FunctionCall   any   `json:"function_call,omitempty" doc:"Only none or auto; anything else is refused (400)."`
	ResponseFormat any   `json:"response_format,omitempty" doc:"Only {type: text}: the answer is Markdown with citation tokens; json_object and json_schema are refused (400, param response_format)."`
	Logprobs       *bool `json:"logprobs,omitempty" doc:"Only false: true is refused (400)."`
	TopLogprobs    *int  `json:"top_logprobs,omitempty" doc:"Only 0 or absent."`
	Modalities     any   `json:"modalities,omitempty" doc:"Only [\"text\"]."`
	Audio          any   `json:"audio,omitempty" doc:"Refused (400): the answer is text."`
}

// emptyList reports whether v (decoded JSON) is absent, null or [].
func emptyList(v any) bool {
	l, ok := v.([]any)
	return v == nil || (ok && len(l) == 0)
}

// noneOrAuto reports whether a tool_choice value asks for nothing.
func noneOrAuto(v any) bool {
	return v == nil || v == "none" || v == "auto"
}

// textFormat reports whether a response format (response_format of chat
// completions, text.format of responses) asks for plain text.
func textFormat(v any) bool {
	if v == nil {
		return true
	}
	m, ok := v.(map[string]any)
	return ok && (m["type"] == nil || m["type"] == "text")
}

func unsupportedParam(param, what string) *openAIError {
	return newOpenAIError(http.StatusBadRequest, fmt.Sprintf("The parameter %s is not supported: %s Remove it and send the request again.", param, what),
		param, "unsupported_parameter")
}

// Why the facade refuses tools and structured output, for both the Chat
// Completions and the Responses API.
const (
	refusedTools  = "the assistant calls its own tools (knowledge search, diagnosis) and returns no tool calls."
	refusedFormat = "the assistant answers in Markdown text with citation tokens such as [framework:theory-of-constraints], never in JSON or to a schema; only {\"type\": \"text\"} is accepted."
)

// check refuses the parameters the service cannot honour.
func (u *openAIUnsupported) check() error {
	switch {
	case !emptyList(u.Tools):
		return unsupportedParam("tools", refusedTools)
	case !noneOrAuto(u.ToolChoice):
		return unsupportedParam("tool_choice", refusedTools)
	case !emptyList(u.Functions):
		return unsupportedParam("functions", refusedTools)
	case !noneOrAuto(u.FunctionCall):
		return unsupportedParam("function_call", refusedTools)
	case !textFormat(u.ResponseFormat):
		return unsupportedParam("response_format", refusedFormat)
	case u.Logprobs != nil && *u.Logprobs:
		return unsupportedParam("logprobs", "the service does not expose token probabilities.")
	case u.TopLogprobs != nil && *u.TopLogprobs > 0:
		return unsupportedParam("top_logprobs", "the service does not expose token probabilities.")
	case u.Audio != nil:
		return unsupportedParam("audio", "the answer is text only.")
	}
	if u.Modalities != nil {
		l, ok := u.Modalities.([]any)
		if !ok {
			return unsupportedParam("modalities", "the answer is text only.")
		}
		for _, m := range l {
			if m != "text" {
				return unsupportedParam("modalities", "the answer is text only.")
			}
		}
	}
	return nil
}

type openAIMessage struct {
	Role    string        `json:"role" enum:"system,developer,user,assistant,tool,function" doc:"Who wrote the message."`
	Content openAIContent `json:"content,omitempty" doc:"The text: a string, or an array of content parts of which only text parts ({type: text, text}) are accepted."`
	Name    string        `json:"name,omitempty"`
}

// openAIContent is a message's content: a string, an array of parts, or
// null.
type openAIContent struct {
	text    string
	nonText bool // a part other than text was sent
}

func (c *openAIContent) UnmarshalJSON(b []byte) error {
	*c = openAIContent{}
	switch {
	case bytes.Equal(bytes.TrimSpace(b), []byte("null")):
		return nil
	case len(b) > 0 && b[0] == '"':
		return json.Unmarshal(b, &c.text)
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(b, &parts); err != nil {
		return err
	}
	var texts []string
	for _, p := range parts {
		if p.Type != "text" && p.Type != "input_text" && p.Type != "output_text" {
			c.nonText = true
			continue
		}
		texts = append(texts, p.Text)
	}
	c.text = strings.Join(texts, "\n")
	return nil
}

func (c openAIContent) MarshalJSON() ([]byte, error) { return json.Marshal(c.text) }

// Schema documents the three forms.
func (openAIContent) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{
		Description: "A string, an array of content parts (only text parts: {type: text, text}), or null.",
		AnyOf: []*huma.Schema{
			{Type: huma.TypeString},
			{Type: huma.TypeArray, Items: &huma.Schema{Type: huma.TypeObject,
				Properties: map[string]*huma.Schema{"type": {Type: huma.TypeString}, "text": {Type: huma.TypeString}},
				Required:   []string{"type"}}},
			{Type: "null"},
		},
	}
}

type openAIChatInput struct {
	Body openAIChatRequest
}

// chatRequest maps the completion request onto POST /api/v1/chat's
// request, then checks it with that endpoint's schema and rules.
func (f *openAIFacade) chatRequest(in *openAIChatRequest) (chatRequest, error) {
	if err := in.check(); err != nil {
		return chatRequest{}, err
	}
	mode, ok := modeOfModel(in.Model)
	if !ok {
		return chatRequest{}, modelNotFound(in.Model)
	}
	var turns []chat.HistoryItem
	var roles []int // index in Messages of each turn
	for i, m := range in.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			continue
		}
		if m.Content.nonText {
			return chatRequest{}, newOpenAIError(http.StatusBadRequest,
				"Only text content is supported: send a string or text parts.", fmt.Sprintf("messages[%d].content", i), "")
		}
		if m.Role == "assistant" && strings.TrimSpace(m.Content.text) == "" {
			continue // an assistant message with tool calls only
		}
		turns = append(turns, chat.HistoryItem{Role: m.Role, Content: m.Content.text})
		roles = append(roles, i)
	}
	if len(turns) == 0 || turns[len(turns)-1].Role != "user" {
		return chatRequest{}, newOpenAIError(http.StatusBadRequest,
			"The last user or assistant message must be the user's: it is the question the assistant answers.", "messages", "")
	}
	last := len(turns) - 1
	body := chatRequest{Message: turns[last].Content, History: turns[:last], Mode: mode,
		Vertical: in.Vertical, Source: in.Source}
	if body.Source == "" {
		body.Source = "openai"
	}
	if len(body.History) == 0 {
		body.History = nil
	}
	details := checkValue(f.reg, f.chatSchema, body, "body")
	if len(details) == 0 {
		cin := chatInput{Body: body}
		for _, e := range cin.Resolve(nil) {
			if d, ok := e.(*huma.ErrorDetail); ok {
				details = append(details, d)
			}
		}
	}
	if len(details) > 0 {
		// Name the message at fault in the caller's terms.
		d := details[0]
		param := "messages"
		if strings.HasPrefix(d.Location, "body.message") {
			param = fmt.Sprintf("messages[%d].content", roles[last])
		} else if i, ok := historyIndex(d.Location); ok && i < len(roles) {
			param = fmt.Sprintf("messages[%d]", roles[i])
		}
		msg := strings.TrimPrefix(d.Location, "body.") + ": " + d.Message
		if strings.HasPrefix(d.Location, "body.history") && !strings.HasPrefix(d.Location, "body.history[") {
			msg = fmt.Sprintf("At most %d user and assistant messages may come before the last one: %s", MaxHistoryItems, d.Message)
		}
		return chatRequest{}, newOpenAIError(http.StatusBadRequest, msg, param, "")
	}
	return body, nil
}

// historyIndex reads i from a location body.history[i]...
func historyIndex(loc string) (int, bool) {
	rest, ok := strings.CutPrefix(loc, "body.history[")
	if !ok {
		return 0, false
	}
	var i int
	if _, err := fmt.Sscanf(rest, "%d]", &i); err != nil {
		return 0, false
	}
	return i, true
}

// --- the responses ---

// openAIAssistantExtension is the rest of the turn: what POST
// /api/v1/chat answers besides the text.
type openAIAssistantExtension struct {
	ReasoningTrace []chat.TraceItem  `json:"reasoning_trace" doc:"The tool calls the assistant made, in order (as in POST /api/v1/chat)."`
	RagHits        []chat.RagHit     `json:"rag_hits" doc:"The knowledge the answer used."`
	Confidence     verify.Confidence `json:"confidence" doc:"The confidence verdict, one verdict per claim."`
}

func extensionOf(r chat.Response) *openAIAssistantExtension {
	return &openAIAssistantExtension{ReasoningTrace: r.ReasoningTrace, RagHits: r.RagHits, Confidence: r.Confidence}
}

type openAIChoiceMessage struct {
	Role    string  `json:"role" enum:"assistant"`
	Content string  `json:"content" doc:"The answer, Markdown, with citation tokens such as [framework:theory-of-constraints] (resolve them with POST /api/assistant/v1/resolve)."`
	Refusal *string `json:"refusal"`
}

type openAIChoice struct {
	Index        int                 `json:"index"`
	Message      openAIChoiceMessage `json:"message"`
	Logprobs     any                 `json:"logprobs" doc:"Always null."`
	FinishReason string              `json:"finish_reason" enum:"stop"`
}

type openAIChatCompletion struct {
	ID        string                    `json:"id" doc:"chatcmpl- and the request id (X-Request-Id)."`
	Object    string                    `json:"object" enum:"chat.completion"`
	Created   int64                     `json:"created" doc:"Unix time of the answer."`
	Model     string                    `json:"model"`
	Choices   []openAIChoice            `json:"choices"`
	Usage     openAIUsage               `json:"usage" doc:"The tokens of the turn (see openAIUsage)."`
	Assistant *openAIAssistantExtension `json:"x_assistant" doc:"Extension: reasoning_trace, rag_hits and confidence of the turn, as POST /api/v1/chat returns them."`
}

type openAIDelta struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

type openAIChunkChoice struct {
	Index        int         `json:"index"`
	Delta        openAIDelta `json:"delta"`
	Logprobs     any         `json:"logprobs"`
	FinishReason *string     `json:"finish_reason"`
}

type openAIChunk struct {
	ID        string                    `json:"id"`
	Object    string                    `json:"object"`
	Created   int64                     `json:"created"`
	Model     string                    `json:"model"`
	Choices   []openAIChunkChoice       `json:"choices" doc:"One choice; empty in the usage chunk that stream_options.include_usage asks for."`
	Usage     *openAIUsage              `json:"usage,omitempty" doc:"On the closing chunk (finish_reason stop), or on the extra last chunk when stream_options.include_usage is true."`
	Assistant *openAIAssistantExtension `json:"x_assistant,omitempty" doc:"On the closing chunk: reasoning_trace, rag_hits and confidence of the turn."`
}

// openAIStream writes a turn as chat completion chunks: the role first,
// then each checked delta of the answer (chat.Events), then the closing
// chunk with finish_reason stop and the extension, then [DONE].
type openAIStream struct {
	w         http.ResponseWriter
	id, model string
	created   int64
}

func (st *openAIStream) data(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{"error":{"message":"encoding failed","type":"server_error","param":null,"code":null}}`)
	}
	fmt.Fprintf(st.w, "data: %s\n\n", b)
	http.NewResponseController(st.w).Flush()
}

func (st *openAIStream) chunk(delta openAIDelta, finish *string, ext *openAIAssistantExtension, usage *openAIUsage) {
	st.data(openAIChunk{ID: st.id, Object: "chat.completion.chunk", Created: st.created, Model: st.model,
		Choices: []openAIChunkChoice{{Delta: delta, FinishReason: finish}}, Usage: usage, Assistant: ext})
}

// Hop implements chat.Events: the trace goes out with the closing chunk.
func (st *openAIStream) Hop(chat.TraceItem) {}

// Delta implements chat.Events.
func (st *openAIStream) Delta(text string) { st.chunk(openAIDelta{Content: &text}, nil, nil, nil) }

// --- the handlers ---

// openAIFacade holds what the facade's handlers need beyond the Server:
// the schema of POST /api/v1/chat's request, to check mapped requests.
type openAIFacade struct {
	s          *Server
	reg        huma.Registry
	chatSchema *huma.Schema
	created    int64
}

func (f *openAIFacade) completions(ctx context.Context, in *openAIChatInput) (*huma.StreamResponse, error) {
	s := f.s
	body, err := f.chatRequest(&in.Body)
	if err != nil {
		return nil, err
	}
	req, err := s.prepareTurn(ctx, body)
	if err != nil {
		return nil, openAIErrorFromProblem(s.chatProblem(ctx, err))
	}
	id := "chatcmpl-" + RequestIDFrom(ctx)
	created := s.Now().Unix()
	ctx, meter := llm.WithUsageMeter(ctx)
	if !in.Body.Stream {
		resp, err := s.runTurn(ctx, req, nil)
		if err != nil {
			return nil, openAIErrorFromProblem(s.chatProblem(ctx, err))
		}
		out := openAIChatCompletion{ID: id, Object: "chat.completion", Created: created, Model: in.Body.Model,
			Choices:   []openAIChoice{{Message: openAIChoiceMessage{Role: "assistant", Content: resp.Response}, FinishReason: "stop"}},
			Usage:     turnUsage(meter, body, resp.Response),
			Assistant: extensionOf(resp)}
		return jsonAnswer(out), nil
	}
	return &huma.StreamResponse{Body: func(hctx huma.Context) {
		st := &openAIStream{w: startEventStream(hctx), id: id, model: in.Body.Model, created: created}
		empty := ""
		st.chunk(openAIDelta{Role: "assistant", Content: &empty}, nil, nil, nil)
		resp, err := s.runTurn(ctx, req, st)
		if err != nil {
			// After the 200 went out, an error is a data line the
			// OpenAI clients raise as an APIError; no [DONE] follows.
			p := s.chatProblem(ctx, err)
			usageFrom(ctx).failedWith(p.Status)
			st.data(openAIErrorFromProblem(p))
			return
		}
		stop := "stop"
		usage := turnUsage(meter, body, resp.Response)
		if in.Body.StreamOptions != nil && in.Body.StreamOptions.IncludeUsage {
			// As OpenAI does: one more chunk, with no choice, carries it.
			st.chunk(openAIDelta{}, &stop, extensionOf(resp), nil)
			st.data(openAIChunk{ID: st.id, Object: "chat.completion.chunk", Created: st.created, Model: st.model,
				Choices: []openAIChunkChoice{}, Usage: &usage})
		} else {
			st.chunk(openAIDelta{}, &stop, extensionOf(resp), &usage)
		}
		fmt.Fprint(st.w, "data: [DONE]\n\n")
		http.NewResponseController(st.w).Flush()
	}}, nil
}

type openAIModel struct {
	ID      string `json:"id" example:"assistant-operator"`
	Object  string `json:"object" enum:"model"`
	Created int64  `json:"created" doc:"Unix time the service started."`
	OwnedBy string `json:"owned_by"`
}

type openAIModelsOutput struct {
	Body struct {
		Object string        `json:"object" enum:"list"`
		Data   []openAIModel `json:"data"`
	}
}

func (f *openAIFacade) model(id string) openAIModel {
	return openAIModel{ID: id, Object: "model", Created: f.created, OwnedBy: "assistant"}
}

func (f *openAIFacade) models(context.Context, *struct{}) (*openAIModelsOutput, error) {
	out := &openAIModelsOutput{}
	out.Body.Object = "list"
	for _, id := range modelIDs() {
		out.Body.Data = append(out.Body.Data, f.model(id))
	}
	return out, nil
}

type openAIModelInput struct {
	Model string `path:"model" example:"assistant-operator" doc:"A model id."`
}

type openAIModelOutput struct {
	Body openAIModel
}

func (f *openAIFacade) getModel(_ context.Context, in *openAIModelInput) (*openAIModelOutput, error) {
	if _, ok := modeOfModel(in.Model); !ok {
		return nil, modelNotFound(in.Model)
	}
	return &openAIModelOutput{Body: f.model(in.Model)}, nil
}

// registerOpenAI registers the facade's operations. authenticated is
// routes.go's helper; the operations document OpenAI's error shape
// instead of problem documents.
func (s *Server) registerOpenAI(api huma.API, authenticated func(huma.Operation) huma.Operation) {
	reg := api.OpenAPI().Components.Schemas
	f := &openAIFacade{s: s, reg: reg, created: s.Now().Unix(),
		chatSchema: reg.Schema(reflect.TypeFor[chatRequest](), true, "ChatRequest")}
	errSchema := reg.Schema(reflect.TypeFor[openAIError](), true, "OpenAIError")
	withErrors := func(op huma.Operation, codes ...int) huma.Operation {
		op = authenticated(op)
		op.Errors = nil
		op.Metadata = map[string]any{errorShapeKey: errorShapeOpenAI}
		op.Tags = []string{"OpenAI-compatible"}
		if op.Responses == nil {
			op.Responses = map[string]*huma.Response{}
		}
		for _, c := range append(codes, http.StatusUnauthorized, http.StatusTooManyRequests) {
			op.Responses[fmt.Sprint(c)] = &huma.Response{Description: http.StatusText(c) + " (OpenAI's error shape)",
				Content: map[string]*huma.MediaType{"application/json": {Schema: errSchema}}}
		}
		return op
	}
	op := withErrors(huma.Operation{
		OperationID: "openaiChatCompletions", Method: http.MethodPost, Path: openAIPrefix + "/chat/completions",
		Summary: "One assistant turn as an OpenAI chat completion",
		Description: "OpenAI's chat completions over the assistant: `model` picks the persona (assistant-operator, assistant-customer, assistant-support, assistant-success), " +
			"the last message is the user's message and the user and assistant messages before it the history; the answer keeps its [type:slug] citation tokens. " +
			"`" + openAIExtension + "` carries reasoning_trace, rag_hits and confidence (on the last chunk when streaming). `stream: true` answers server-sent events in OpenAI's chunk format ending with `data: [DONE]`. " +
			"Errors use OpenAI's shape {error: {message, type, param, code}}. Shares the per-key limit of POST /api/v1/chat (60 requests per rolling minute).",
		RequestBody: jsonExample(map[string]any{
			"model": "assistant-operator", "messages": []map[string]string{{"role": "user", "content": "Our packing station cannot keep up and orders ship late"}},
		}),
	}, http.StatusBadRequest, http.StatusNotFound, http.StatusRequestEntityTooLarge, http.StatusBadGateway)
	op.Responses["200"] = &huma.Response{
		Description: "The completion (JSON), or chunks as server-sent events when stream is true.",
		Content: map[string]*huma.MediaType{
			"application/json":  {Schema: reg.Schema(reflect.TypeFor[openAIChatCompletion](), true, "OpenAIChatCompletion")},
			"text/event-stream": {Schema: &huma.Schema{Type: huma.TypeString, Description: "data: lines, each a chat.completion.chunk (the last with finish_reason stop and " + openAIExtension + "), then data: [DONE]."}},
		},
	}
	huma.Register(api, op, f.completions)
	f.registerResponses(api, withErrors)
	huma.Register(api, withErrors(huma.Operation{
		OperationID: "openaiListModels", Method: http.MethodGet, Path: openAIPrefix + "/models",
		Summary:     "The assistant's personas as OpenAI models",
		Description: "One model per persona: assistant-operator, assistant-customer, assistant-support, assistant-success.",
	}), f.models)
	huma.Register(api, withErrors(huma.Operation{
		OperationID: "openaiGetModel", Method: http.MethodGet, Path: openAIPrefix + "/models/{model}",
		Summary:     "One persona as an OpenAI model",
		Description: "The model, or 404 model_not_found.",
	}, http.StatusNotFound), f.getModel)
}
