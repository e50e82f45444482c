package api_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/constraintlab/assistant/internal/assistant"
)

// brokenLimiter cannot decide, as a shared limiter whose store is down.
type brokenLimiter struct{ policy assistant.TieredPolicy }

var errLimiterDown = errors.New("limiter store unreachable")

func (brokenLimiter) Admit(context.Context, string) (assistant.Decision, error) {
	return assistant.Decision{}, errLimiterDown
}

func (brokenLimiter) Check(context.Context, string) (assistant.Decision, error) {
	return assistant.Decision{}, errLimiterDown
}

func (b brokenLimiter) Policy() assistant.TieredPolicy { return b.policy }

// A tiered limiter that fails admits the request (fail open): the public
// limit and the failed-authentication limit.
func TestLimitersFailOpen(t *testing.T) {
	f := newFixture(t, 1, 1)
	f.srv.PublicLimiter = brokenLimiter{assistant.TieredPolicy{Soft: 1, Hard: 1, Window: time.Minute}}
	f.srv.AuthFailures = brokenLimiter{assistant.TieredPolicy{Hard: 1, Window: time.Minute}}
	f.srv.Metrics = prometheus.NewRegistry()
	f.h, f.routes = f.srv.HandlerAndRoutes()
	for range 3 {
		if r := f.do(t, "GET", "/api/assistant/v1/knowledge-stats", ""); r.Code != http.StatusOK {
			t.Fatalf("public request: status %d, want 200", r.Code)
		}
		if r := f.do(t, "POST", "/api/v1/chat", `{"message":"hi","mode":"operator"}`); r.Code != http.StatusUnauthorized {
			t.Fatalf("unauthenticated request: status %d, want 401", r.Code)
		}
	}
}
