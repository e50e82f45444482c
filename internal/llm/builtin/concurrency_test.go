package builtin_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/constraintlab/assistant/internal/llm"
	"github.com/constraintlab/assistant/internal/llm/builtin"
	"github.com/constraintlab/assistant/internal/tooling"
)

// Decoded tool results and sentence analyses are remembered and shared
// by concurrent turns: composing an answer must never modify them (run
// with -race), and the answers must not depend on what other turns did.
func TestConcurrentTurnsShareMemos(t *testing.T) {
	result := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	search := result(tooling.SearchResult{
		Query: "export invoices to CSV", Coverage: 0.9,
		Scope: tooling.Scope{InScope: true, Language: "en", Business: []string{"invoices"}, Workspace: true},
		Hits: []tooling.SearchHit{{Token: "article:export-invoices", Title: "Exporting invoices", Score: 0.9, Imported: true},
			{Token: "framework:jobs-to-be-done", Title: "Jobs to be done", Score: 0.3}},
	})
	article := result(tooling.EntityResult{
		Token: "article:export-invoices", Found: true, Title: "Exporting invoices",
		Summary:  "How to export invoices. The file arrives by email within minutes of the export.",
		KeyIdeas: []string{"Open Billing, then Invoices, and choose the period to export.", "Press Export and pick CSV as the format of the file."},
		Pitfalls: []string{"Large periods are split into several files of ten thousand rows each.", "Only administrators of the workspace can export invoices at all.",
			"Invoices in draft are left out of the export until they are issued."},
	})
	question := "How do I export our invoices to CSV for the accountant?"
	reading := &tooling.Reading{Question: question, Search: question, HowTo: true,
		Scope: tooling.Scope{InScope: true, Language: "en", Workspace: true}}
	req := llm.Request{Mode: "support", Reading: reading, Tools: []llm.Tool{{Name: tooling.ToolSearch}, {Name: tooling.ToolEntity}}, Messages: []llm.Message{
		{Role: llm.RoleUser, Content: "How do I export our invoices to CSV for the accountant?"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: tooling.ToolSearch}}},
		{Role: llm.RoleTool, Name: tooling.ToolSearch, ToolCallID: "call_1", Content: search},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_2", Name: tooling.ToolEntity}}},
		{Role: llm.RoleTool, Name: tooling.ToolEntity, ToolCallID: "call_2", Content: article},
	}}
	p := builtin.New()
	want, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(want.Content, "Invoices in draft are left out") || !strings.Contains(want.Content, "The file arrives by email") {
		t.Fatalf("the answer does not follow the article:\n%s", want.Content)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				got, err := p.Complete(context.Background(), req)
				if err != nil || got.Content != want.Content {
					t.Errorf("concurrent answer differs (err %v):\n%s\nwant\n%s", err, got.Content, want.Content)
					return
				}
			}
		})
	}
	wg.Wait()
}
