// Package api is the HTTP surface of the assistant service: the public
// knowledge endpoints under /api/assistant/ (and, with later issues, the
// authenticated /api/v1/ endpoints), their OpenAPI document and interactive
// docs, and the operational endpoints /healthz, /readyz and /metrics.
//
// routes.go lists the whole surface; middleware.go holds the cross-cutting
// behaviour (request ids, logs and metrics, problem documents, CORS, rate
// limits, caching); problem.go maps domain errors to RFC 9457 documents.
// Handlers return errors and never write error responses themselves.
package api

import (
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/constraintlab/assistant/internal/access"
	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/chat"
	"github.com/constraintlab/assistant/internal/diagnose"
	"github.com/constraintlab/assistant/internal/verify"
)

// Server holds what the handlers need. Every field is required unless
// marked optional; cmd/assistant wires them.
type Server struct {
	Knowledge assistant.KnowledgeStore
	Retriever assistant.Retriever
	Citations assistant.CitationStore
	Ready     assistant.Pinger
	Catalog   *diagnose.Catalog
	// Diagnosis matches constraints and composes previews (POST preview).
	Diagnosis *diagnose.Diagnoser
	// Access holds keys, users, the audit log and usage rows; Keys
	// verifies presented API keys.
	Access assistant.AccessStore
	Keys   *access.Verifier

	Logger *slog.Logger
	Now    func() time.Time
	// Version is reported in the OpenAPI document.
	Version string

	// PublicLimiter limits the public endpoints per client (D13); nil
	// disables it.
	PublicLimiter assistant.TieredLimiter
	// TrustedProxies are the peers whose X-Forwarded-For is believed.
	TrustedProxies []netip.Prefix
	// CORSOrigins may call /api/v1/ from a browser (D27).
	CORSOrigins []string
	// Metrics receives the HTTP metrics and is served at /metrics.
	Metrics *prometheus.Registry
	// Chat answers POST /api/v1/chat; ChatLimiter limits it per key to
	// ChatRateLimit requests (0 disables) per rolling ChatRateWindow (0
	// means a minute, D2b). The limiter must count over the same window:
	// ChatRateLimit and ChatRateWindow are what the RateLimit-Policy
	// header and the 429's detail report.
	Chat           *chat.Service
	ChatLimiter    assistant.Limiter
	ChatRateLimit  int
	ChatRateWindow time.Duration
	// Verifier answers POST /api/v1/verify (nil: the route is not served);
	// it counts against the same per-key limit as Chat (D22).
	Verifier verify.Verifier
	// Admin, optional, is the admin area's handler, mounted at /admin/.
	Admin http.Handler
	// AuthFailures, optional, limits failed authentication on /api/v1/
	// per client address (AuthFailuresPerMinute a minute by default).
	AuthFailures assistant.TieredLimiter
	// MetricsToken, optional, is the bearer token GET /metrics requires;
	// MetricsElsewhere leaves /metrics out of Handler (it is served by
	// MetricsHandler on a listener of its own).
	MetricsToken     string
	MetricsElsewhere bool
	// Degradable, optional, are dependencies the service keeps working
	// without (Redis: limits fall back to per-instance ones), by name:
	// /readyz reports each as "ok" or "degraded" and stays 200 for them.
	Degradable map[string]assistant.Pinger
	// Async, optional, keeps asynchronous turns (Prefer: respond-async,
	// async.go): without it the header is ignored and turns are answered
	// at once. AsyncQueue bounds a workspace's waiting and running turns
	// (0: DefaultAsyncQueue); AsyncWake, optional, tells the runner that
	// a turn was submitted.
	Async      assistant.WebhookStore
	AsyncQueue int
	AsyncWake  func()
	// Reviews, optional, keeps the turns of workspaces that have
	// conversation review on (review.go); nil keeps none.
	Reviews assistant.ReviewStore
	// Tracing, optional, is the tracer provider of the requests' server
	// spans (tracing.go); nil, the default, traces nothing and costs
	// nothing.
	Tracing trace.TracerProvider

	// mcpResponseLimit, when set (tests), replaces mcpMaxResponseBytes;
	// authPenalty, when set, replaces authPenalty (a negative one is none).
	mcpResponseLimit int
	authPenalty      time.Duration

	metrics      *metrics // built with the handler
	leaderboards leaderboardCache
	cards        cardCache
	resolves     resolveMemo
	tokenCards   tokenCardMemo
	previews     previewMemo
}
