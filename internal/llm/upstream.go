package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// Names of the settings an upstream error can blame (D24).
const (
	SettingBaseURL = "ASSISTANT_LLM_BASE_URL"
	SettingAPIKey  = "ASSISTANT_LLM_API_KEY"
	SettingModel   = "ASSISTANT_LLM_MODEL"
)

// StatusError maps an HTTP error status from an upstream model API, after
// the SDK's own retries, to the error vocabulary of this package:
//
//   - 401, 403: ErrMisconfigured, naming ASSISTANT_LLM_API_KEY;
//   - 404, or a 400/422 whose message says the model is unknown:
//     ErrMisconfigured, naming ASSISTANT_LLM_MODEL (and the base URL);
//   - 408, 409, 429 and 5xx: ErrUnavailable;
//   - any other status: a plain error (the request was wrong: a bug here).
//
// provider prefixes the message; model is the configured model; detail is
// the upstream's own message, if any.
func StatusError(provider, model string, status int, detail string) error {
	msg := fmt.Sprintf("%s: upstream answered %d", provider, status)
	if text := http.StatusText(status); text != "" {
		msg += " " + text
	}
	if detail = strings.TrimSpace(detail); detail != "" {
		msg += ": " + truncate(detail, 300)
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return fmt.Errorf("%w: %s; check %s", ErrMisconfigured, msg, SettingAPIKey)
	case status == http.StatusNotFound:
		return fmt.Errorf("%w: %s; check %s (model %q) and %s", ErrMisconfigured, msg, SettingModel, model, SettingBaseURL)
	case (status == http.StatusBadRequest || status == http.StatusUnprocessableEntity) && unknownModel(detail):
		return fmt.Errorf("%w: %s; check %s (model %q)", ErrMisconfigured, msg, SettingModel, model)
	case status == http.StatusRequestTimeout || status == http.StatusConflict ||
		status == http.StatusTooManyRequests || status >= 500:
		return fmt.Errorf("%w: %s", ErrUnavailable, msg)
	default:
		return errors.New(msg + " (the request was rejected)")
	}
}

// unknownModel reports whether an upstream message says the model does not
// exist, as OpenAI-compatible servers phrase it on a 400.
func unknownModel(detail string) bool {
	d := strings.ToLower(detail)
	if !strings.Contains(d, "model") {
		return false
	}
	for _, s := range []string{"not found", "does not exist", "unknown model", "invalid model", "not available", "no such model"} {
		if strings.Contains(d, s) {
			return true
		}
	}
	return false
}

// TransportError maps an error that is not an HTTP error status: a call
// ended by ctx (the caller cancelled or its deadline passed) returns
// ctx.Err() wrapped, never ErrUnavailable; anything else (connection
// refused, the per-attempt timeout, a reset or malformed response) wraps
// ErrUnavailable. The cause is kept in the message, not the chain.
func TransportError(ctx context.Context, provider string, timeout time.Duration, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("%s: call abandoned: %w", provider, ctxErr)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %s: no answer within the %s per-attempt timeout", ErrUnavailable, provider, timeout)
	}
	return fmt.Errorf("%w: %s: %v", ErrUnavailable, provider, err)
}

// Malformed returns the error for an upstream answer that cannot be used
// (no choices, invalid tool arguments, a truncated stream): it wraps
// ErrUnavailable.
func Malformed(provider, format string, args ...any) error {
	return fmt.Errorf("%w: %s: malformed upstream response: %s", ErrUnavailable, provider, fmt.Sprintf(format, args...))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

// BaseURL validates a configured base URL (ASSISTANT_LLM_BASE_URL) and
// returns it, or def when raw is empty. It must be an absolute http or
// https URL.
func BaseURL(raw, def string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return def, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%w: %s is not a valid URL: %v", ErrMisconfigured, SettingBaseURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%w: %s %q is not an absolute http(s) URL", ErrMisconfigured, SettingBaseURL, u.Redacted())
	}
	if u.User != nil {
		return "", fmt.Errorf("%w: %s must not carry credentials; use %s", ErrMisconfigured, SettingBaseURL, SettingAPIKey)
	}
	return raw, nil
}
