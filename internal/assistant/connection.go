package assistant

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
)

// ConnectionLost reports whether err says that the connection to a
// dependency (the database) could not be made or died: a network error,
// an end of stream from the peer, a driver error that says the request
// never reached the server (a SafeToRetry method returning true, as pgx's
// errors of a closed connection have), or a server error whose SQLSTATE
// says the connection or the server went away: class 08 (connection
// exception), 57P01 (terminated by an administrator), 57P02 (crash
// shutdown), 57P03 (cannot connect now) or 53300 (too many connections).
// Such errors are EUnavailable: 503 with Retry-After for the client, and
// a write may be tried again on another connection.
//
// The check reads errors through the standard library and methods of the
// error values, so the domain names no driver.
func ConnectionLost(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false // the caller's own deadline or cancellation, not the dependency's failure
	}
	var state interface{ SQLState() string }
	if errors.As(err, &state) {
		code := state.SQLState()
		switch {
		case strings.HasPrefix(code, "08"), code == "57P01", code == "57P02", code == "57P03", code == "53300":
			return true
		}
		return false // the server answered: any other SQLSTATE is not about the connection
	}
	var retry interface{ SafeToRetry() bool }
	if errors.As(err, &retry) && retry.SafeToRetry() {
		return true
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
