package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sony/gobreaker/v2"
)

// Circuit breaker policy shared by the HTTP providers.
const (
	// BreakerFailures is how many consecutive upstream failures (errors
	// wrapping ErrUnavailable) open the breaker.
	BreakerFailures = 5
	// BreakerOpenFor is how long an open breaker fails fast before it lets
	// one probe call through.
	BreakerOpenFor = 30 * time.Second
)

// Breaker is a circuit breaker around the calls of one provider. After
// BreakerFailures consecutive failures it opens for BreakerOpenFor and
// every call fails at once with an error wrapping ErrUnavailable, without
// reaching the upstream; then one probe call decides whether it closes
// again.
//
// Only errors wrapping ErrUnavailable count as failures. A call ended by
// its own context (the client went away) is not counted at all; any other
// error (ErrMisconfigured, a rejected request) shows that the upstream
// answered and counts as a success.
type Breaker struct {
	name string
	cb   *gobreaker.CircuitBreaker[Response]
}

// NewBreaker returns a closed Breaker for the provider called name, which
// logs its state changes to logger (nil discards them).
func NewBreaker(name string, logger *slog.Logger) *Breaker {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Breaker{
		name: name,
		cb: gobreaker.NewCircuitBreaker[Response](gobreaker.Settings{
			Name:        name,
			MaxRequests: 1,
			Timeout:     BreakerOpenFor,
			ReadyToTrip: func(c gobreaker.Counts) bool {
				return c.ConsecutiveFailures >= BreakerFailures
			},
			IsExcluded: func(err error) bool {
				return !errors.Is(err, ErrUnavailable) &&
					(errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
			},
			IsSuccessful: func(err error) bool {
				return !errors.Is(err, ErrUnavailable)
			},
			OnStateChange: func(name string, from, to gobreaker.State) {
				logger.Warn("llm circuit breaker state change",
					"provider", name, "from", from.String(), "to", to.String())
			},
		}),
	}
}

// Do runs call through the breaker. When the breaker is open (or half-open
// with its probe already in flight) Do returns an error wrapping
// ErrUnavailable without running call.
func (b *Breaker) Do(call func() (Response, error)) (Response, error) {
	resp, err := b.cb.Execute(call)
	if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
		return Response{}, fmt.Errorf("%w: %s: circuit breaker open after %d consecutive upstream failures; "+
			"not calling the upstream for up to %s", ErrUnavailable, b.name, BreakerFailures, BreakerOpenFor)
	}
	return resp, err
}

// Open reports whether the breaker is currently failing fast.
func (b *Breaker) Open() bool {
	return b.cb.State() == gobreaker.StateOpen
}
