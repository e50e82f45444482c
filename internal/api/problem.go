package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"

	"github.com/constraintlab/assistant/internal/assistant"
)

// Problem is the RFC 9457 problem document every /api/ error is (D1).
type Problem struct {
	Type      string `json:"type" doc:"A URI reference naming the kind of problem; about:blank when the status says it all."`
	Title     string `json:"title" doc:"A short summary of the kind of problem."`
	Status    int    `json:"status" doc:"The HTTP status code."`
	Detail    string `json:"detail" doc:"What went wrong with this request, and how to fix it."`
	RequestID string `json:"request_id" doc:"The id of this request (also in the X-Request-Id header); quote it when asking for help."`
	// Errors lists each invalid field of a 400 validation problem.
	Errors []*huma.ErrorDetail `json:"errors,omitempty" doc:"The invalid parts of the request, one per problem."`
	// RetryAfterSeconds is set on 429 (D2) and on 503 (unavailable).
	RetryAfterSeconds int `json:"retry_after_seconds,omitempty" doc:"On 429: seconds to wait before the next request is admitted."`

	headers http.Header
}

func (p *Problem) Error() string  { return p.Detail }
func (p *Problem) GetStatus() int { return p.Status }

// ContentType makes huma send application/problem+json.
func (p *Problem) ContentType(ct string) string {
	if ct == "application/json" {
		return "application/problem+json"
	}
	return ct
}

// GetHeaders lets huma send the problem's extra headers (Retry-After).
func (p *Problem) GetHeaders() http.Header { return p.headers }

// Problem type URIs (docs/api.md lists them).
const (
	typeValidation   = "urn:assistant:problem:validation"
	typeRateLimited  = "urn:assistant:problem:rate-limited"
	typeUnauthorized = "urn:assistant:problem:unauthorized"
	typeUnavailable  = "urn:assistant:problem:unavailable"
	typeTooLarge     = "urn:assistant:problem:too-large"
)

// statusByCode is the one table from domain error codes to HTTP statuses.
var statusByCode = map[string]int{
	assistant.EInvalid:      http.StatusBadRequest,
	assistant.ENotFound:     http.StatusNotFound,
	assistant.EConflict:     http.StatusConflict,
	assistant.EUnauthorized: http.StatusUnauthorized,
	assistant.ERateLimited:  http.StatusTooManyRequests,
	assistant.ETooLarge:     http.StatusRequestEntityTooLarge,
	assistant.EUnavailable:  http.StatusServiceUnavailable,
	assistant.EInternal:     http.StatusInternalServerError,
}

// newProblem builds a problem document for status with a client-safe detail.
func newProblem(ctx context.Context, status int, detail string) *Problem {
	p := &Problem{
		Type:      "about:blank",
		Title:     http.StatusText(status),
		Status:    status,
		Detail:    detail,
		RequestID: RequestIDFrom(ctx),
	}
	switch status {
	case http.StatusBadRequest:
		p.Type = typeValidation
	case http.StatusTooManyRequests:
		p.Type = typeRateLimited
	case http.StatusUnauthorized:
		p.Type = typeUnauthorized
	case http.StatusRequestEntityTooLarge:
		p.Type = typeTooLarge
	case http.StatusBadGateway, http.StatusServiceUnavailable:
		p.Type = typeUnavailable
	}
	if detail == "" {
		p.Detail = http.StatusText(status) + "."
	}
	p.Detail = cutQuotedEchoes(p.Detail)
	return p
}

// rateLimited is the 429 problem of D2: retry_after_seconds in the body and
// the same number in Retry-After.
func rateLimited(ctx context.Context, retryAfterSeconds int, detail string) *Problem {
	p := newProblem(ctx, http.StatusTooManyRequests, detail)
	p.RetryAfterSeconds = max(1, retryAfterSeconds)
	p.headers = http.Header{"Retry-After": {strconv.Itoa(p.RetryAfterSeconds)}}
	return p
}

// problemFromError turns a handler's error into a problem document, logging
// the cause of internal errors with the request id.
func problemFromError(ctx context.Context, logger *slog.Logger, err error) *Problem {
	var p *Problem
	if errors.As(err, &p) {
		return p
	}
	code := assistant.ErrorCode(err)
	status, ok := statusByCode[code]
	if !ok {
		status = http.StatusInternalServerError
	}
	switch {
	case status == http.StatusServiceUnavailable:
		logger.WarnContext(ctx, "dependency unavailable", "request_id", RequestIDFrom(ctx), "err", err)
		return unavailable(ctx, assistant.ErrorMessage(err))
	case status >= 500:
		logger.ErrorContext(ctx, "request failed", "request_id", RequestIDFrom(ctx), "err", err)
	}
	return newProblem(ctx, status, assistant.ErrorMessage(err))
}

// unavailableRetryAfter is the Retry-After of a 503: a database that went
// away (a restart, a failover) is usually back within seconds.
const unavailableRetryAfter = 2

// unavailable is the 503 problem of a dependency that cannot be reached
// (urn:assistant:problem:unavailable): retry_after_seconds in the body,
// which a stream's error event carries too, and Retry-After.
func unavailable(ctx context.Context, detail string) *Problem {
	p := newProblem(ctx, http.StatusServiceUnavailable, detail)
	p.RetryAfterSeconds = unavailableRetryAfter
	p.headers = http.Header{"Retry-After": {strconv.Itoa(unavailableRetryAfter)}}
	return p
}

// writeProblem writes p as application/problem+json with no-store (D1).
func writeProblem(w http.ResponseWriter, p *Problem) {
	h := w.Header()
	for k, v := range p.headers {
		h[k] = v
	}
	h.Set("Content-Type", "application/problem+json")
	h.Set("Cache-Control", "no-store")
	h.Del("ETag")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(p.Status)
	json.NewEncoder(w).Encode(p)
}

var installHumaErrors sync.Once

// errorShapeKey, in an operation's Metadata, names the shape of its
// errors when it is not a problem document: errorShapeOpenAI for the
// OpenAI-compatible facade.
const (
	errorShapeKey    = "assistant.errorShape"
	errorShapeOpenAI = "openai"
)

// useProblemErrors makes huma build its errors (validation, parsing, body
// size) as our Problem: 400 instead of 422 for validation (D1), with the
// request id; for an operation of the OpenAI-compatible facade, the same
// error in OpenAI's shape (errorShapeKey); and arrays that are not
// nullable. huma keeps these in package variables, so they are set once
// per process; the function it installs holds no state.
func useProblemErrors() {
	installHumaErrors.Do(func() {
		// An array is never sent as null, and null is not an array: a
		// request with {"tokens": null} is 400.
		huma.DefaultArrayNullable = false
		build := func(ctx context.Context, status int, msg string, errs ...error) *Problem {
			if status == http.StatusUnprocessableEntity {
				status = http.StatusBadRequest
			}
			p := newProblem(ctx, status, msg)
			for _, err := range errs {
				if err == nil {
					continue
				}
				var d huma.ErrorDetailer
				if errors.As(err, &d) {
					p.Errors = append(p.Errors, d.ErrorDetail())
				} else {
					p.Errors = append(p.Errors, &huma.ErrorDetail{Message: err.Error()})
				}
			}
			cutDetailEchoes(p.Errors)
			if status == http.StatusBadRequest && len(p.Errors) > 0 {
				p.Detail = validationDetail(p.Errors)
			}
			if status == http.StatusRequestEntityTooLarge {
				p.Detail = fmt.Sprintf("The request body is larger than %d bytes (256 KiB).", maxBodyBytes)
				p.Errors = nil
			}
			return p
		}
		huma.NewError = func(status int, msg string, errs ...error) huma.StatusError {
			return build(context.Background(), status, msg, errs...)
		}
		huma.NewErrorWithContext = func(hctx huma.Context, status int, msg string, errs ...error) huma.StatusError {
			ctx := context.Background()
			if hctx != nil {
				ctx = hctx.Context()
			}
			p := build(ctx, status, msg, errs...)
			if hctx != nil && hctx.Operation() != nil && hctx.Operation().Metadata[errorShapeKey] == errorShapeOpenAI {
				return openAIErrorFromProblem(p)
			}
			return p
		}
	})
}

// MaxErrorValueChars bounds errors[].value in a 400 problem: a longer
// string is cut to this many characters followed by "…"; any other value
// whose JSON is longer is replaced by its JSON, cut the same way. A
// problem never echoes a whole large body back.
const MaxErrorValueChars = 200

// cutEcho cuts caller input quoted in an error message to
// MaxErrorValueChars characters, followed by "…" when cut.
func cutEcho(s string) string {
	s, _ = cutChars(s)
	return s
}

// cutQuotedEchoes cuts every double-quoted string of msg, which is how
// error messages quote caller input (%q), to MaxErrorValueChars
// characters. Messages built from caller input go through it on every
// surface: problem documents, the OpenAI facade's errors, MCP's errors.
func cutQuotedEchoes(msg string) string {
	if utf8.RuneCountInString(msg) <= MaxErrorValueChars {
		return msg
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(msg, '"')
		if i < 0 {
			b.WriteString(msg)
			return b.String()
		}
		b.WriteString(msg[:i])
		quoted, err := strconv.QuotedPrefix(msg[i:])
		if err != nil { // an unbalanced quote: the rest is cut as one echo
			b.WriteString(cutEcho(msg[i:]))
			return b.String()
		}
		msg = msg[i+len(quoted):]
		if s, err := strconv.Unquote(quoted); err == nil {
			if cut, wasCut := cutChars(s); wasCut {
				quoted = strconv.Quote(cut)
			}
		}
		b.WriteString(quoted)
	}
}

func cutChars(s string) (string, bool) {
	if utf8.RuneCountInString(s) <= MaxErrorValueChars {
		return s, false
	}
	r := []rune(s)
	return string(r[:MaxErrorValueChars]) + "…", true
}

func truncateValue(v any) any {
	cut := cutChars
	switch x := v.(type) {
	case nil, bool, int, int64, float64:
		return v
	case string:
		s, _ := cut(x)
		return s
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	if s, cutShort := cut(string(data)); cutShort {
		return s
	}
	return v
}

// cutDetailEchoes cuts the caller's input each detail quotes: its value,
// its location and anything quoted in its message.
func cutDetailEchoes(details []*huma.ErrorDetail) {
	for _, d := range details {
		d.Value = truncateValue(d.Value)
		d.Location, d.Message = cutEcho(d.Location), cutQuotedEchoes(d.Message)
	}
}

// validationDetail summarises validation errors in one sentence that names
// the fields.
func validationDetail(details []*huma.ErrorDetail) string {
	parts := make([]string, 0, len(details))
	for _, d := range details {
		loc := d.Location
		if loc == "" {
			loc = "request"
		}
		parts = append(parts, fmt.Sprintf("%s: %s", loc, d.Message))
	}
	return "The request is invalid. " + strings.Join(parts, "; ") + "."
}
