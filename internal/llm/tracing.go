package llm

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/constraintlab/assistant/internal/telemetry"
)

// attributeGenAISystem is gen_ai.provider.name under its earlier name,
// which tracing backends of the GenAI conventions before 1.37 still read.
const attributeGenAISystem = attribute.Key("gen_ai.system")

// Traced returns p with a client span around each call, in the traced
// request that makes it (telemetry.Start: nothing when the call is not
// traced), following the OpenTelemetry GenAI conventions: named
// "chat <model>", with gen_ai.operation.name, gen_ai.provider.name (and
// gen_ai.system), gen_ai.request.model and gen_ai.request.max_tokens, and
// from the answer gen_ai.response.model, gen_ai.usage.input_tokens and
// output_tokens, gen_ai.response.finish_reasons. A failed call has status
// Error and error.type the outcome Metrics counts (unavailable,
// misconfigured, canceled, error). Never the messages, the tools' schemas
// or the answer. A Streamer stays a Streamer. model is the configured
// model.
func Traced(p Provider, model string) Provider {
	tp := &traced{Provider: p, model: model, name: "chat " + model}
	if s, ok := p.(Streamer); ok {
		return &tracedStreamer{traced: tp, s: s}
	}
	return tp
}

type traced struct {
	Provider
	model, name string
}

// Unwrap implements Wrapper.
func (p *traced) Unwrap() Provider { return p.Provider }

func (p *traced) Complete(ctx context.Context, req Request) (Response, error) {
	ctx, span := p.start(ctx, req)
	resp, err := p.Provider.Complete(ctx, req)
	p.end(span, resp, err)
	return resp, err
}

type tracedStreamer struct {
	*traced
	s Streamer
}

func (p *tracedStreamer) Stream(ctx context.Context, req Request, onText func(string)) (Response, error) {
	ctx, span := p.start(ctx, req)
	resp, err := p.s.Stream(ctx, req, onText)
	p.end(span, resp, err)
	return resp, err
}

func (p *traced) start(ctx context.Context, req Request) (context.Context, trace.Span) {
	ctx, span := telemetry.Start(ctx, p.name, trace.SpanKindClient)
	if span.IsRecording() {
		provider := p.Name()
		span.SetAttributes(
			semconv.GenAIOperationNameChat,
			semconv.GenAIProviderNameKey.String(provider),
			attributeGenAISystem.String(provider),
			semconv.GenAIRequestModel(p.model),
		)
		if req.MaxTokens > 0 {
			span.SetAttributes(semconv.GenAIRequestMaxTokens(req.MaxTokens))
		}
	}
	return ctx, span
}

func (p *traced) end(span trace.Span, resp Response, err error) {
	if !span.IsRecording() {
		return
	}
	defer span.End()
	if err != nil {
		telemetry.Fail(span, err, outcome(err))
		return
	}
	u := resp.Usage
	if u.Model != "" {
		span.SetAttributes(semconv.GenAIResponseModel(u.Model))
	}
	if u.InputTokens > 0 || u.OutputTokens > 0 {
		span.SetAttributes(semconv.GenAIUsageInputTokens(u.InputTokens), semconv.GenAIUsageOutputTokens(u.OutputTokens))
	}
	if u.FinishReason != "" {
		span.SetAttributes(semconv.GenAIResponseFinishReasons(u.FinishReason))
	}
}
