package assistant_test

import (
	"context"
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/constraintlab/assistant/internal/assistant"
)

var errLostConnection = fmt.Errorf("failed to receive message: %w",
	&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET})

func TestConnectionLost(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{errLostConnection, true},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), true},
		{sqlState("57P01"), true},
		{sqlState("08006"), true},
		{sqlState("23505"), false},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), false},
		{context.Canceled, false},
		{fmt.Errorf("disk full"), false},
	} {
		if got := assistant.ConnectionLost(c.err); got != c.want {
			t.Errorf("ConnectionLost(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

type sqlState string

func (s sqlState) Error() string    { return "server error " + string(s) }
func (s sqlState) SQLState() string { return string(s) }
