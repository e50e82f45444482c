package builtin_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/constraintlab/assistant/internal/llm"
	"github.com/constraintlab/assistant/internal/llm/builtin"
	"github.com/constraintlab/assistant/internal/tooling"
)

// The builtin model plans by the request's Mode and Vertical, not by the
// lines of the system prompt (which are for hosted models).
func TestPlansByRequestModeAndVertical(t *testing.T) {
	tools := []llm.Tool{{Name: tooling.ToolSearch}, {Name: tooling.ToolEntity}, {Name: tooling.ToolDiagnose}}
	question := "Our agency's projects keep slipping because one senior designer reviews every deliverable."
	tests := []struct {
		name, mode, vertical, prompt string
		first                        string
		wantVertical                 string
	}{
		{name: "operator diagnoses first", mode: "operator", vertical: "agency", first: tooling.ToolDiagnose, wantVertical: "agency"},
		{name: "customer searches first", mode: "customer", first: tooling.ToolSearch},
		{name: "no mode is the operator", first: tooling.ToolDiagnose},
		{name: "prompt lines are not read", mode: "customer", prompt: "mode: operator\nvertical: saas\n", first: tooling.ToolSearch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := llm.Request{Tools: tools, Mode: tc.mode, Vertical: tc.vertical, Messages: []llm.Message{
				{Role: llm.RoleSystem, Content: tc.prompt + "You are an assistant."},
				{Role: llm.RoleUser, Content: question},
			}}
			resp, err := builtin.New().Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.ToolCalls) != 2 {
				t.Fatalf("got %d tool calls, want 2: %+v", len(resp.ToolCalls), resp.ToolCalls)
			}
			if got := resp.ToolCalls[0].Name; got != tc.first {
				t.Errorf("first call %s, want %s", got, tc.first)
			}
			for _, c := range resp.ToolCalls {
				if c.Name != tooling.ToolDiagnose {
					continue
				}
				var a tooling.DiagnoseArgs
				if err := json.Unmarshal(c.Arguments, &a); err != nil {
					t.Fatal(err)
				}
				if a.Vertical != tc.wantVertical {
					t.Errorf("diagnose vertical %q, want %q", a.Vertical, tc.wantVertical)
				}
			}
		})
	}
}
