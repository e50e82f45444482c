package llm_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/constraintlab/assistant/internal/llm"
)

func TestBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := llm.NewBreaker("test", nil)
		calls := 0
		fail := func() (llm.Response, error) {
			calls++
			return llm.Response{}, fmt.Errorf("%w: boom", llm.ErrUnavailable)
		}
		ok := func() (llm.Response, error) {
			calls++
			return llm.Response{Content: "ok"}, nil
		}
		other := func(err error) func() (llm.Response, error) {
			return func() (llm.Response, error) { calls++; return llm.Response{}, err }
		}

		// Cancellations, misconfigurations and rejected requests are not failures.
		for i := range llm.BreakerFailures - 1 {
			if _, err := b.Do(fail); !errors.Is(err, llm.ErrUnavailable) {
				t.Fatalf("call %d: %v", i, err)
			}
			b.Do(other(fmt.Errorf("call abandoned: %w", context.Canceled)))
		}
		b.Do(other(fmt.Errorf("%w: bad key", llm.ErrMisconfigured))) // the upstream answered: resets
		for range llm.BreakerFailures - 1 {
			b.Do(fail)
		}
		if b.Open() {
			t.Fatal("open before 5 consecutive failures")
		}
		b.Do(fail)
		if !b.Open() {
			t.Fatal("closed after 5 consecutive failures")
		}

		before := calls
		_, err := b.Do(ok)
		if !errors.Is(err, llm.ErrUnavailable) || !strings.Contains(err.Error(), "circuit breaker open") {
			t.Fatalf("open breaker: %v", err)
		}
		if calls != before {
			t.Fatal("open breaker ran the call")
		}

		time.Sleep(llm.BreakerOpenFor - time.Second)
		if _, err := b.Do(ok); !errors.Is(err, llm.ErrUnavailable) || calls != before {
			t.Fatalf("still open before %s: %v", llm.BreakerOpenFor, err)
		}

		// Half-open: one failed probe opens it again for another period.
		time.Sleep(2 * time.Second)
		if _, err := b.Do(fail); !errors.Is(err, llm.ErrUnavailable) || calls != before+1 {
			t.Fatalf("probe: %v, calls %d", err, calls-before)
		}
		if !b.Open() {
			t.Fatal("failed probe did not reopen the breaker")
		}

		// A cancelled probe frees the half-open slot; a good one closes it.
		time.Sleep(llm.BreakerOpenFor + time.Second)
		b.Do(other(context.Canceled))
		resp, err := b.Do(ok)
		if err != nil || resp.Content != "ok" || b.Open() {
			t.Fatalf("after a good probe: %v %+v open=%v", err, resp, b.Open())
		}
	})
}

func TestStatusError(t *testing.T) {
	tests := []struct {
		status  int
		detail  string
		wantIs  error
		wantMsg string
	}{
		{401, "invalid key", llm.ErrMisconfigured, "ASSISTANT_LLM_API_KEY"},
		{403, "", llm.ErrMisconfigured, "ASSISTANT_LLM_API_KEY"},
		{404, "model: m", llm.ErrMisconfigured, "ASSISTANT_LLM_MODEL"},
		{400, "The model `m` does not exist.", llm.ErrMisconfigured, "ASSISTANT_LLM_MODEL"},
		{422, "unknown model m", llm.ErrMisconfigured, "ASSISTANT_LLM_MODEL"},
		{400, "messages: field required", nil, "400 Bad Request: messages: field required"},
		{413, "too large", nil, "413"},
		{408, "", llm.ErrUnavailable, "408"},
		{409, "", llm.ErrUnavailable, "409"},
		{429, "slow down", llm.ErrUnavailable, "429 Too Many Requests: slow down"},
		{500, "", llm.ErrUnavailable, "500"},
		{529, "Overloaded", llm.ErrUnavailable, "529: Overloaded"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status, tt.detail), func(t *testing.T) {
			err := llm.StatusError("p", "m", tt.status, tt.detail)
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("%v does not wrap %v", err, tt.wantIs)
			}
			if tt.wantIs == nil && (errors.Is(err, llm.ErrUnavailable) || errors.Is(err, llm.ErrMisconfigured)) {
				t.Errorf("%v wraps a sentinel", err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("%v does not mention %q", err, tt.wantMsg)
			}
		})
	}
}

func TestTransportError(t *testing.T) {
	live := t.Context()
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	err := llm.TransportError(live, "p", time.Second, context.DeadlineExceeded)
	if !errors.Is(err, llm.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("attempt timeout: %v", err)
	}
	err = llm.TransportError(cancelled, "p", time.Second, errors.New("read: connection reset"))
	if !errors.Is(err, context.Canceled) || errors.Is(err, llm.ErrUnavailable) {
		t.Errorf("cancelled: %v", err)
	}
}
