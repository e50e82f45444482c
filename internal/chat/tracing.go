package chat

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/llm"
	"github.com/constraintlab/assistant/internal/telemetry"
	"github.com/constraintlab/assistant/internal/verify"
)

// The turn's spans (docs/operations.md, "Tracing"), opened only inside a
// traced request (telemetry.Start): one per tool call and one for the
// verification of the answer. They carry the tool's name, the hop and the
// verdict's counts; never the message, the tool's arguments or results,
// or the answer.
const (
	spanVerify = "verify claims"

	attributeHop            = attribute.Key("assistant.hop")
	attributeClaims         = attribute.Key("assistant.verify.claims")
	attributeVerifiedClaims = attribute.Key("assistant.verify.verified_claims")
	attributeLevel          = attribute.Key("assistant.verify.level")
	attributeCited          = attribute.Key("assistant.verify.cited_entities")
	attributeRetrieved      = attribute.Key("assistant.verify.retrieved_entities")
)

// runTool is tb.run in a span "execute_tool <tool>" (the GenAI
// conventions' tool execution) with gen_ai.tool.name, gen_ai.tool.call.id
// and the hop; a tool that fails the turn marks it failed.
func (tb *toolbox) runTool(ctx context.Context, call llm.ToolCall, hop int) (result any, input, summary string, err error) {
	if !telemetry.Tracing(ctx) {
		return tb.run(ctx, call)
	}
	ctx, span := telemetry.Start(ctx, "execute_tool "+call.Name, trace.SpanKindInternal)
	defer span.End()
	span.SetAttributes(semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(call.Name),
		semconv.GenAIToolCallID(call.ID), attributeHop.Int(hop))
	result, input, summary, err = tb.run(ctx, call)
	telemetry.Fail(span, err, "")
	return result, input, summary, err
}

// verifyAnswer is s.Checker.Verify in a span "verify claims" with the
// number of claims, of verified claims, the level, and the number of
// entities the answer cites and the tools retrieved (the evidence). A model judge's call is its child.
func (s *Service) verifyAnswer(ctx context.Context, answer string, evidence map[assistant.Token]assistant.Entity, hits []assistant.Entity) verify.Confidence {
	if !telemetry.Tracing(ctx) {
		return s.Checker.Verify(ctx, answer, evidence, hits, verify.UseDefault)
	}
	ctx, span := telemetry.Start(ctx, spanVerify, trace.SpanKindInternal)
	defer span.End()
	conf := s.Checker.Verify(ctx, answer, evidence, hits, verify.UseDefault)
	span.SetAttributes(attributeClaims.Int(conf.TotalClaims), attributeVerifiedClaims.Int(conf.VerifiedClaims),
		attributeLevel.String(conf.Level), attributeCited.Int(len(evidence)), attributeRetrieved.Int(len(hits)))
	return conf
}
