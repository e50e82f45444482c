package api

import (
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/constraintlab/assistant/internal/telemetry"
)

// traceRequests opens the server span of every request, the root of its
// trace or, when the caller sent a W3C traceparent, a child of the
// caller's span; the caller's baggage is kept in the context, for the
// outgoing calls to the model provider (telemetry.Propagating). The span
// is named by the pattern of the route that serves the request (routeOf),
// never by its path, which can hold ids: "POST /api/v1/chat", or the
// method alone when no route matches. Its attributes are the method, the
// route, the status and the request id; a 5xx marks it failed. Serve
// installs it only when tracing is on (Server.Tracing).
func traceRequests(tp trace.TracerProvider, routeOf func(*http.Request) string) func(http.Handler) http.Handler {
	tracer := tp.Tracer(telemetry.InstrumentationName)
	prop := telemetry.Propagator()
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
			name, route := spanName(r.Method, routeOf(r))
			attrs := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
				semconv.HTTPRequestMethodKey.String(r.Method),
				attributeRequestID.String(RequestIDFrom(r.Context())),
			)}
			if route != "" {
				attrs = append(attrs, trace.WithAttributes(semconv.HTTPRoute(route)))
			}
			ctx, span := tracer.Start(ctx, name, attrs...)
			defer span.End()
			sw := &statusWriter{ResponseWriter: w}
			next.ServeHTTP(sw, r.WithContext(ctx))
			status := sw.status
			if status == 0 {
				status = http.StatusOK
			}
			span.SetAttributes(semconv.HTTPResponseStatusCode(status))
			if status >= 500 {
				span.SetStatus(codes.Error, http.StatusText(status))
			}
		})
	}
}

// attributeRequestID is the request's id (X-Request-Id), as in its log line.
const attributeRequestID = attribute.Key("assistant.request_id")

// spanName returns a server span's name and http.route from a mux
// pattern: "POST /api/v1/chat" and "/api/v1/chat"; a pattern without a
// method gets the request's ("GET /admin/"); no pattern, the method alone.
func spanName(method, pattern string) (name, route string) {
	if pattern == "" {
		return method, ""
	}
	if m, path, ok := strings.Cut(pattern, " "); ok {
		return m + " " + path, path
	}
	return method + " " + pattern, pattern
}
