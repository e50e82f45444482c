package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/chat"
)

// Chat limits (D4).
const (
	MaxMessageLength = 8000
	MaxHistoryItems  = 50
)

type chatRequest struct {
	Message string             `json:"message" example:"Our packing station cannot keep up and orders ship late" doc:"The user's message, 1 to 8000 characters after trimming."`
	History []chat.HistoryItem `json:"history,omitempty" maxItems:"50" doc:"Earlier turns, oldest first, at most 50."`
	Mode    string             `json:"mode,omitempty" enum:"operator,customer,support,success" default:"operator" example:"operator" doc:"The persona: operator (default), customer, support or success."`
	Source  string             `json:"source,omitempty" maxLength:"200" doc:"A label of the calling integration; recorded with usage, never changes the answer."`
	// Vertical is D28: the caller's industry.
	Vertical string `json:"vertical,omitempty" example:"ecommerce" doc:"Optional: the business's industry, a vertical id from GET /api/assistant/v1/catalog (saas, ecommerce, agency, marketplace, professional-services, manufacturing, healthcare, hospitality, retail, logistics, fintech, education, construction). The answer then uses that industry's words. Absent, the assistant infers the industry only on clear evidence and otherwise answers in neutral words. An unknown id is a 400 whose detail lists the allowed ids (decision D28)."`
}

type chatInput struct {
	Accept string `header:"Accept" doc:"text/event-stream streams the turn as server-sent events (D9); anything else gets JSON."`
	Prefer string `header:"Prefer" doc:"respond-async submits the turn to run in the background: the answer is 202 with the turn's id and a Location to poll (GET /api/v1/chat/turns/{id}), and the chat.turn.completed webhook event carries the result."`
	Body   chatRequest
}

// Resolve adds the checks the schema cannot express: the message is
// trimmed before its length is checked (D4).
func (in *chatInput) Resolve(huma.Context) []error {
	m := strings.TrimSpace(in.Body.Message)
	switch {
	case m == "":
		return []error{&huma.ErrorDetail{Location: "body.message", Message: "must not be empty", Value: in.Body.Message}}
	case utf8.RuneCountInString(m) > MaxMessageLength:
		return []error{&huma.ErrorDetail{Location: "body.message", Message: fmt.Sprintf("must be at most %d characters", MaxMessageLength),
			Value: fmt.Sprintf("(%d characters)", utf8.RuneCountInString(m))}}
	}
	return nil
}

func wantsStream(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		if mt, _, _ := strings.Cut(strings.TrimSpace(part), ";"); strings.EqualFold(mt, "text/event-stream") {
			return true
		}
	}
	return false
}

func (s *Server) chatTurn(ctx context.Context, in *chatInput) (*huma.StreamResponse, error) {
	// Checked before any streaming starts, so a bad vertical is an
	// ordinary 400.
	req, err := s.prepareTurn(ctx, in.Body)
	if err != nil {
		return nil, s.chatProblem(ctx, err)
	}
	if s.Async != nil && prefersAsync(in.Prefer) {
		return s.submitAsync(ctx, req)
	}

	if !wantsStream(in.Accept) {
		resp, err := s.runTurn(ctx, req, nil)
		if err != nil {
			return nil, s.chatProblem(ctx, err)
		}
		return jsonAnswer(resp), nil
	}

	return &huma.StreamResponse{Body: func(hctx huma.Context) {
		stream := &eventStream{w: startEventStream(hctx)}
		resp, err := s.runTurn(ctx, req, stream)
		if err != nil {
			p := s.chatProblem(ctx, err)
			usageFrom(ctx).failedWith(p.Status)
			stream.send("error", p)
			return
		}
		stream.send("final", resp)
	}}, nil
}

// prepareTurn turns a validated chat request into the turn to run, for
// every surface that runs one (POST /api/v1/chat, the OpenAI-compatible
// facade, MCP's ask_assistant): the default mode, the mode and source on
// the request's usage row, and the vertical checked (D28) before anything
// is streamed. The workspace comes from the request's key.
func (s *Server) prepareTurn(ctx context.Context, body chatRequest) (chat.Request, error) {
	key, _ := KeyFrom(ctx)
	u := usageFrom(ctx)
	mode := body.Mode
	if mode == "" {
		mode = "operator"
	}
	u.setMode(mode)
	u.setSource(body.Source)
	if body.Vertical != "" {
		if err := assistant.CheckVertical(body.Vertical); err != nil {
			return chat.Request{}, err
		}
	}
	return chat.Request{Message: strings.TrimSpace(body.Message), History: body.History, Mode: mode,
		Vertical: body.Vertical, Source: body.Source, Workspace: key.Workspace}, nil
}

// runTurn runs a prepared turn and, when it succeeds, records its usage
// row with its citation events in one transaction (D5) and keeps it for
// review when its workspace has review on, before the caller shows the
// answer. events may be nil.
func (s *Server) runTurn(ctx context.Context, req chat.Request, events chat.Events) (chat.Response, error) {
	if events != nil && s.metrics != nil {
		events = &timedEvents{Events: events, start: s.Now(), now: s.Now, obs: s.metrics.firstText.WithLabelValues(req.Mode)}
	}
	resp, citations, err := s.Chat.Run(ctx, req, events)
	if err == nil {
		err = usageFrom(ctx).recordTurn(ctx, citations)
	}
	if err == nil {
		key, _ := KeyFrom(ctx)
		s.keepForReview(ctx, req, resp, key.ID, reviewSurface(ctx))
	}
	s.metrics.turn(req.Mode, resp, err)
	if err != nil {
		return chat.Response{}, err
	}
	return resp, nil
}

// chatProblem maps a failed turn: an unavailable upstream is 502 with a
// Retry-After hint (D3); anything else goes through the usual table.
func (s *Server) chatProblem(ctx context.Context, err error) *Problem {
	if errors.Is(err, chat.ErrUpstream) {
		s.Logger.WarnContext(ctx, "model provider unavailable", "request_id", RequestIDFrom(ctx), "err", err)
		p := newProblem(ctx, http.StatusBadGateway, "The model provider is unavailable. Retry with backoff.")
		p.headers = http.Header{"Retry-After": {"5"}}
		return p
	}
	if errors.Is(err, context.Canceled) {
		return newProblem(ctx, 499, "The client closed the request.")
	}
	return problemFromError(ctx, s.Logger, err)
}

// eventStream writes server-sent events (D9). huma's sse package registers
// an operation that only streams; this endpoint answers JSON or a stream
// from one operation, so the three-line framing is written here.
type eventStream struct {
	w http.ResponseWriter
}

func (e *eventStream) send(event string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		b = []byte(`{"error":"encoding failed"}`)
	}
	fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", event, b)
	http.NewResponseController(e.w).Flush()
}

// Hop implements chat.Events.
func (e *eventStream) Hop(item chat.TraceItem) { e.send("hop", item) }

// Delta implements chat.Events.
func (e *eventStream) Delta(text string) { e.send("delta", chatStreamDelta{Text: text}) }

// chatStreamDelta is the data of a delta event.
type chatStreamDelta struct {
	Text string `json:"text" doc:"The next piece of the answer, its citation tokens already checked."`
}

// keyRateLimit applies the per-key limit of D2b (the key's own limit, or
// limit by default; keyLimit) to the routes it wraps
// (routes.go: chat, verify and the OpenAI-compatible completions, which
// share one budget and policy name, D22; MCP's tool calls count in the
// same window, mcp.go): every response carries RateLimit-Policy and
// RateLimit; past the limit the answer is 429 with retry_after_seconds and
// Retry-After (D2), written by the surface's writeErr. It runs after
// authentication, so failed authentication counts against no key.
func keyRateLimit(lim assistant.Limiter, limit int, window time.Duration, logger interface {
	WarnContext(context.Context, string, ...any)
}, m *metrics, writeErr errorWriter) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if lim == nil {
			return next
		}
		if window <= 0 {
			window = time.Minute
		}
		windowSecs := max(1, ceilSeconds(window))
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			key, ok := KeyFrom(r.Context())
			limit := keyLimit(key, limit)
			if !ok || limit <= 0 {
				next.ServeHTTP(w, r)
				return
			}
			v, err := allowKey(r.Context(), lim, key, limit)
			m.limit("key", v, err)
			if err != nil {
				// A limiter that cannot answer must not take the API down.
				logger.WarnContext(r.Context(), "rate limiter failed; admitting", "err", err)
				next.ServeHTTP(w, r)
				return
			}
			reset := max(1, ceilSeconds(v.Reset))
			h := w.Header()
			h.Set("RateLimit-Policy", fmt.Sprintf(`"chat";q=%d;w=%d`, limit, windowSecs))
			h.Set("RateLimit", fmt.Sprintf(`"chat";r=%d;t=%d`, v.Remaining, reset))
			if !v.Allowed {
				secs := max(1, ceilSeconds(v.RetryAfter))
				writeErr(w, rateLimited(r.Context(), secs,
					"This key made "+strconv.Itoa(limit)+" requests in the last "+strconv.Itoa(windowSecs)+" seconds. Retry after "+strconv.Itoa(secs)+" seconds."))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// keyLimit is the limit that applies to key: its own, or the service's
// default (0: none).
func keyLimit(key assistant.APIKey, byDefault int) int {
	if key.RateLimit > 0 {
		return key.RateLimit
	}
	return byDefault
}

// allowKey counts one request of key in lim under limit: a key with its
// own limit is decided under it, every other key under the limiter's.
func allowKey(ctx context.Context, lim assistant.Limiter, key assistant.APIKey, limit int) (assistant.Decision, error) {
	if key.RateLimit > 0 {
		return lim.AllowLimit(ctx, key.ID, limit)
	}
	return lim.Allow(ctx, key.ID)
}

// jsonAnswer writes v as a 200 JSON answer: the chat operations answer
// through huma.StreamResponse (they stream when asked), so their plain
// answers are written the same way.
func jsonAnswer(v any) *huma.StreamResponse {
	return &huma.StreamResponse{Body: func(hctx huma.Context) {
		// Encoded whole into a pooled buffer, then written at once with its
		// length: a turn's answer is tens of kilobytes, which the response
		// writer would otherwise send in chunks.
		writeAssembled(hctx, func(b []byte) []byte {
			buf := bytes.NewBuffer(b)
			json.NewEncoder(buf).Encode(v)
			return buf.Bytes()
		})
	}}
}

// startEventStream starts a 200 text/event-stream answer that proxies must
// not buffer, and returns the writer its events go to.
func startEventStream(hctx huma.Context) http.ResponseWriter {
	hctx.SetHeader("Content-Type", "text/event-stream")
	hctx.SetHeader("X-Accel-Buffering", "no")
	hctx.SetStatus(http.StatusOK)
	w, _ := hctx.BodyWriter().(http.ResponseWriter)
	return w
}
