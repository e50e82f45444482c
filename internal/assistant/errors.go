package assistant

import (
	"errors"
	"fmt"
)

// Error codes: one vocabulary for every surface. The API adapter maps each
// code to an HTTP status (internal/api/problem.go); the command line maps them
// to messages on stderr.
const (
	EInvalid      = "invalid"      // the caller sent something malformed
	ENotFound     = "not_found"    // the thing asked for does not exist
	EConflict     = "conflict"     // the request clashes with current state
	EUnauthorized = "unauthorized" // missing, invalid or revoked credentials
	ERateLimited  = "rate_limited" // too many requests
	ETooLarge     = "too_large"    // the request body is larger than allowed
	EUnavailable  = "unavailable"  // a dependency (database, upstream model) is down
	EInternal     = "internal"     // a bug or an unexpected failure
)

// Error is an error with a code from the vocabulary above, a message that is
// safe to show to a client, and an optional cause that is only logged.
type Error struct {
	Code    string
	Message string
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain,
// EUnavailable for an error that says a connection to a dependency failed
// (ConnectionLost), EInternal for any other non-nil error, and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if ConnectionLost(err) {
		return EUnavailable
	}
	return EInternal
}

// ErrorMessage returns the client-safe message of err: the message of the
// first *Error in its chain, or a generic text for any other error so that
// internal details never leak.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	if ConnectionLost(err) {
		return "The service cannot reach its database right now. Retry in a moment."
	}
	return "An internal error occurred."
}
