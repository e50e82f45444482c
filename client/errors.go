package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Problem types the service sends (docs/api.md lists them).
const (
	ProblemValidation   = "urn:assistant:problem:validation"
	ProblemTooLarge     = "urn:assistant:problem:too-large"
	ProblemRateLimited  = "urn:assistant:problem:rate-limited"
	ProblemUnauthorized = "urn:assistant:problem:unauthorized"
	ProblemUnavailable  = "urn:assistant:problem:unavailable"
)

// Error is an answer of the service other than 2xx: the RFC 9457 problem
// document it carried, plus the status and the headers a caller acts on.
// Every method of Client returns it (possibly wrapped) for such answers;
// get it with errors.As.
type Error struct {
	// StatusCode is the HTTP status of the response.
	StatusCode int `json:"-"`

	// The problem document.
	Type              string        `json:"type"`
	Title             string        `json:"title"`
	Status            int           `json:"status"`
	Detail            string        `json:"detail"`
	RequestID         string        `json:"request_id"`
	Errors            []ErrorDetail `json:"errors,omitempty"`
	RetryAfterSeconds int           `json:"retry_after_seconds,omitempty"`

	// RetryAfter is the Retry-After header (0 when absent).
	RetryAfter time.Duration `json:"-"`
	// RateLimit and RateLimitPolicy are the RateLimit and RateLimit-Policy
	// headers as sent (empty when absent); ParseRateLimit reads the first.
	RateLimit       string `json:"-"`
	RateLimitPolicy string `json:"-"`
	// Header holds all the response headers.
	Header http.Header `json:"-"`
	// Body is the raw body when it was not a problem document.
	Body []byte `json:"-"`
}

// ErrorDetail is one invalid part of a request in a 400 problem.
type ErrorDetail struct {
	Message  string `json:"message,omitempty"`
	Location string `json:"location,omitempty"`
	Value    any    `json:"value,omitempty"`
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "assistant: %d", e.StatusCode)
	if e.Title != "" {
		b.WriteString(" " + e.Title)
	} else if t := http.StatusText(e.StatusCode); t != "" {
		b.WriteString(" " + t)
	}
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	if e.RequestID != "" {
		b.WriteString(" (request " + e.RequestID + ")")
	}
	return b.String()
}

// errorFrom reads a non-2xx response into an *Error and closes its body.
func errorFrom(resp *http.Response) *Error {
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	e := &Error{}
	if json.Unmarshal(body, e) != nil || e.Status == 0 {
		*e = Error{Body: body, Title: http.StatusText(resp.StatusCode)}
	}
	e.StatusCode = resp.StatusCode
	e.Header = resp.Header
	if e.RequestID == "" {
		e.RequestID = resp.Header.Get("X-Request-Id")
	}
	e.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	e.RateLimit = resp.Header.Get("RateLimit")
	e.RateLimitPolicy = resp.Header.Get("RateLimit-Policy")
	return e
}

// parseRetryAfter reads delay-seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil {
		return time.Duration(max(n, 0)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}

// RateLimitState is a parsed RateLimit header, such as "chat";r=59;t=1.
type RateLimitState struct {
	Policy    string // the policy name: chat, soft or hard
	Remaining int    // r: requests left in the window
	Reset     int    // t: seconds until one more is admitted
}

// ParseRateLimit reads a RateLimit header value; ok is false when it is
// empty or malformed.
func ParseRateLimit(v string) (s RateLimitState, ok bool) {
	parts := strings.Split(strings.TrimSpace(v), ";")
	if len(parts) < 2 {
		return s, false
	}
	s.Policy = strings.Trim(strings.TrimSpace(parts[0]), `"`)
	var seenR, seenT bool
	for _, p := range parts[1:] {
		k, val, _ := strings.Cut(strings.TrimSpace(p), "=")
		n, err := strconv.Atoi(val)
		if err != nil {
			return RateLimitState{}, false
		}
		switch k {
		case "r":
			s.Remaining, seenR = n, true
		case "t":
			s.Reset, seenT = n, true
		}
	}
	return s, s.Policy != "" && seenR && seenT
}

// AsError returns the *Error in err's chain, if any.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

func hasStatus(err error, status int) bool {
	e, ok := AsError(err)
	return ok && e.StatusCode == status
}

// IsRateLimited reports whether err is a 429 answer.
func IsRateLimited(err error) bool { return hasStatus(err, http.StatusTooManyRequests) }

// IsUnauthorized reports whether err is a 401 answer: a missing, invalid,
// revoked or expired API key.
func IsUnauthorized(err error) bool { return hasStatus(err, http.StatusUnauthorized) }

// IsValidation reports whether err is a 400 answer; its Errors name the
// invalid fields.
func IsValidation(err error) bool { return hasStatus(err, http.StatusBadRequest) }

// IsTooLarge reports whether err is a 413 answer (a body over 256 KiB).
func IsTooLarge(err error) bool { return hasStatus(err, http.StatusRequestEntityTooLarge) }

// IsUnavailable reports whether err is a 502 or 503 answer: the model
// provider or another dependency is down.
func IsUnavailable(err error) bool {
	return hasStatus(err, http.StatusBadGateway) || hasStatus(err, http.StatusServiceUnavailable)
}
