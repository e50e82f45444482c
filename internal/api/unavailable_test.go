package api_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/constraintlab/assistant/internal/assistant"
)

// errLostConnection is what a database driver returns when its connection
// died: here a reset, wrapped as drivers wrap it.
var errLostConnection = fmt.Errorf("failed to receive message: %w",
	&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET})

// failingTurns refuses to record turns with err.
type failingTurns struct {
	assistant.AccessStore
	err error
}

func (f failingTurns) RecordTurn(context.Context, assistant.UsageRecord, []assistant.CitationEvent) error {
	return f.err
}

func (f failingTurns) RecordUsage(context.Context, assistant.UsageRecord) error { return f.err }

// A database that cannot be reached is 503 urn:assistant:problem:unavailable
// with Retry-After, for a JSON answer and as a stream's error event, never
// a generic 500.
func TestUnreachableDatabaseIs503(t *testing.T) {
	f := newFixture(t, 0, 0)
	key := f.newKey(t, "acme")
	f.srv.Access = failingTurns{AccessStore: f.srv.Access, err: errLostConnection}
	body := `{"message":"Our packing station cannot keep up and orders ship late"}`
	r := f.chat(t, key, body)
	p := assertProblem(t, r, 503)
	if p["type"] != "urn:assistant:problem:unavailable" || r.Header().Get("Retry-After") == "" || p["retry_after_seconds"] == nil {
		t.Errorf("503: %v, Retry-After %q", p, r.Header().Get("Retry-After"))
	}
	if strings.Contains(r.Body.String(), "reset") {
		t.Errorf("the cause leaks: %s", r.Body)
	}
	r = f.chat(t, key, body, "Accept", "text/event-stream")
	if !strings.Contains(r.Body.String(), "event: error") || !strings.Contains(r.Body.String(), `"status":503`) ||
		!strings.Contains(r.Body.String(), `"retry_after_seconds":`) || !strings.Contains(r.Body.String(), "urn:assistant:problem:unavailable") {
		t.Errorf("streamed turn: %s", r.Body)
	}
	// Any other failure stays a 500.
	f.srv.Access = failingTurns{AccessStore: f.srv.Access, err: fmt.Errorf("disk full")}
	assertProblem(t, f.chat(t, key, body), 500)
}
