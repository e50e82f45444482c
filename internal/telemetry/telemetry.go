// Package telemetry is the service's tracing (docs/operations.md,
// "Tracing"): the OpenTelemetry tracer provider serve installs when an OTLP
// endpoint is configured (Setup), the W3C trace-context and baggage
// propagation of incoming and outgoing HTTP requests (Propagator,
// Propagating), and Start, which every layer below the HTTP surface uses to
// open a child span of the span its context carries.
//
// Tracing is off unless OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set. Off, no server span is
// started, so the context of a request carries no recording span and Start
// returns at once: no span, no allocation. On, the spans of a request are
// found from its context, so the layers that open them (chat, the model
// providers, the stores) are given no tracer: a span exists only inside a
// traced request.
//
// Spans carry names, counts, models, routes and statuses; never a message,
// an answer, tool arguments, an API key or its id, or any header.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// InstrumentationName names the tracer of every span the service opens.
const InstrumentationName = "github.com/constraintlab/assistant"

// DefaultServiceName is service.name when neither OTEL_SERVICE_NAME nor
// OTEL_RESOURCE_ATTRIBUTES names the service.
const DefaultServiceName = "assistant"

// Setup returns the tracer provider the OTEL_* variables ask for, and the
// function that flushes and stops it (call it once, at shutdown). It
// returns a nil provider, tracing off, when getenv gives neither
// OTEL_EXPORTER_OTLP_ENDPOINT nor OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, when
// OTEL_SDK_DISABLED is true or when OTEL_TRACES_EXPORTER is none.
//
// The provider exports OTLP over HTTP (protobuf) in batches; a protocol
// other than http/protobuf, or an exporter other than otlp, is an error
// rather than traces silently lost. The SDK reads the rest of the standard
// variables itself from the process environment: endpoints, headers,
// timeout, compression and certificates of the exporter
// (OTEL_EXPORTER_OTLP_*), the sampler (OTEL_TRACES_SAMPLER, _ARG; default
// parentbased_always_on), the batching (OTEL_BSP_*), the span limits and
// the resource (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES).
func Setup(ctx context.Context, getenv func(string) string, version string) (trace.TracerProvider, func(context.Context) error, error) {
	off := func(context.Context) error { return nil }
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return nil, off, nil
	}
	if strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")) == "" && strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) == "" {
		return nil, off, nil
	}
	switch exporter := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exporter {
	case "", "otlp":
	case "none":
		return nil, off, nil
	default:
		return nil, off, fmt.Errorf("OTEL_TRACES_EXPORTER=%s is not supported: use otlp (OTLP over HTTP) or none", exporter)
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := strings.TrimSpace(getenv(name)); p != "" {
			if p != "http/protobuf" {
				return nil, off, fmt.Errorf("%s=%s is not supported: traces are exported as http/protobuf", name, p)
			}
			break // the traces' own setting wins over the general one
		}
	}
	exporter, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, off, fmt.Errorf("the OTLP trace exporter: %w", err)
	}
	// Later sources win: the defaults, then the variables.
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName(DefaultServiceName), semconv.ServiceVersion(version)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(),
	)
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, off, fmt.Errorf("the trace resource (OTEL_RESOURCE_ATTRIBUTES): %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
	return tp, tp.Shutdown, nil
}

// Propagator reads and writes the W3C headers traceparent, tracestate and
// baggage.
func Propagator() propagation.TextMapPropagator {
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}

// Start opens a span named name, of the given kind, as a child of the span
// ctx carries, with that span's tracer provider. When ctx carries no
// recording span (tracing off, or the request not sampled) it returns ctx
// and that non-recording span unchanged, allocating nothing: ending it, or
// setting attributes on it, does nothing. Callers check IsRecording before
// building attributes.
func Start(ctx context.Context, name string, kind trace.SpanKind) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, parent
	}
	return parent.TracerProvider().Tracer(InstrumentationName).Start(ctx, name, trace.WithSpanKind(kind))
}

// Fail marks span as failed by err (a nil err does nothing): status Error
// with the error's message, and error.type set to kind (a class such as
// "unavailable"; the error's Go type when kind is empty).
func Fail(span trace.Span, err error, kind string) {
	if err == nil || !span.IsRecording() {
		return
	}
	if kind == "" {
		kind = fmt.Sprintf("%T", err)
	}
	span.SetAttributes(semconv.ErrorTypeKey.String(kind))
	span.SetStatus(codes.Error, err.Error())
}

// Propagating returns rt (http.DefaultTransport when nil) wrapped so that
// every request carries the trace context and baggage of its context
// (W3C traceparent, tracestate, baggage). A request whose context has
// neither is sent as it is.
func Propagating(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	if _, ok := rt.(propagating); ok {
		return rt
	}
	return propagating{next: rt, prop: Propagator()}
}

type propagating struct {
	next http.RoundTripper
	prop propagation.TextMapPropagator
}

func (p propagating) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx := r.Context()
	if !trace.SpanContextFromContext(ctx).IsValid() && baggage.FromContext(ctx).Len() == 0 {
		return p.next.RoundTrip(r)
	}
	// A RoundTripper must not change the request it is given.
	r = r.Clone(ctx)
	p.prop.Inject(ctx, propagation.HeaderCarrier(r.Header))
	return p.next.RoundTrip(r)
}

// Tracing reports whether ctx carries a recording span: whether a span
// Start opens in ctx would be recorded. Callers check it before building
// a span's name or attributes.
func Tracing(ctx context.Context) bool {
	return trace.SpanFromContext(ctx).IsRecording()
}

// RouteErrors sends the errors of the OpenTelemetry SDK (an export that
// failed, a span dropped from a full queue) to logger as warnings, instead
// of the standard library's log. It sets the SDK's global error handler:
// call it once, from serve, when tracing is on.
func RouteErrors(logger *slog.Logger) {
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		logger.Warn("tracing", "err", err)
	}))
}
