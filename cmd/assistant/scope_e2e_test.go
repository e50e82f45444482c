package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// obedientModel plays a hosted model that follows the system prompt: it
// searches first, then declines when the search result says the question
// is out of scope, and otherwise answers from the first hit with its
// token. It records the system prompts it was sent. speak turns its
// decision into the wire format of one provider.
type obedientModel struct {
	mu      sync.Mutex
	systems []string
}

var firstHit = regexp.MustCompile(`"token":"([a-z]+:[a-z0-9_-]+)","title":"([^"]+)","summary":"([^"]+?)"`)

// decide returns a search query for a turn with no tool result yet, or the
// answer text.
func (m *obedientModel) decide(system, question, toolResult string) (query, answer string) {
	m.mu.Lock()
	m.systems = append(m.systems, system)
	m.mu.Unlock()
	if strings.Contains(system, "judge") || strings.Contains(system, "verdicts") {
		return "", `{"verdicts":[]}` // a judging call: an invalid reply, so the builtin verdict stands
	}
	if toolResult == "" {
		return question, ""
	}
	if strings.Contains(toolResult, `"in_scope":false`) {
		return "", "I can only help with questions about running a business, such as pricing, cash, hiring and customers."
	}
	hit := firstHit.FindStringSubmatch(toolResult)
	if hit == nil {
		return "", "The knowledge base has nothing on that."
	}
	return "", hit[3] + " [" + hit[1] + "]"
}

// openAIWire speaks Chat Completions.
func (m *obedientModel) openAIWire(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model    string
		Messages []struct {
			Role    string
			Content *string
		}
	}
	json.NewDecoder(r.Body).Decode(&body)
	var system, question, tool string
	for _, msg := range body.Messages {
		text := ""
		if msg.Content != nil {
			text = *msg.Content
		}
		switch msg.Role {
		case "system":
			system = text
		case "user":
			question = text
		case "tool":
			tool = text
		}
	}
	query, answer := m.decide(system, question, tool)
	message := map[string]any{"role": "assistant", "content": answer}
	finish := "stop"
	if query != "" {
		args, _ := json.Marshal(map[string]string{"query": query})
		message = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "call_1", "type": "function",
			"function": map[string]any{"name": "search_knowledge", "arguments": string(args)}}}}
		finish = "tool_calls"
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": body.Model,
		"choices": []any{map[string]any{"index": 0, "message": message, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}})
}

// anthropicWire speaks the Messages API.
func (m *obedientModel) anthropicWire(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model  string
		System any
		// Content is a string or a list of blocks.
		Messages []struct {
			Role    string
			Content json.RawMessage
		}
	}
	json.NewDecoder(r.Body).Decode(&body)
	system := ""
	switch s := body.System.(type) {
	case string:
		system = s
	case []any:
		for _, b := range s {
			if blk, ok := b.(map[string]any); ok {
				system += blk["text"].(string)
			}
		}
	}
	var question, tool string
	for _, msg := range body.Messages {
		var text string
		if json.Unmarshal(msg.Content, &text) == nil {
			if msg.Role == "user" {
				question = text
			}
			continue
		}
		var blocks []map[string]any
		json.Unmarshal(msg.Content, &blocks)
		for _, b := range blocks {
			switch b["type"] {
			case "text":
				if msg.Role == "user" {
					question = b["text"].(string)
				}
			case "tool_result":
				switch c := b["content"].(type) {
				case string:
					tool = c
				case []any:
					for _, part := range c {
						if p, ok := part.(map[string]any); ok && p["type"] == "text" {
							tool += p["text"].(string)
						}
					}
				}
			}
		}
	}
	query, answer := m.decide(system, question, tool)
	content := []any{map[string]any{"type": "text", "text": answer}}
	stop := "end_turn"
	if query != "" {
		content = []any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": "search_knowledge", "input": map[string]string{"query": query}}}
		stop = "tool_use"
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": body.Model,
		"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 5}})
}

// TestRemoteProvidersFollowTheScopeRule: with each hosted provider, the
// system prompt states the scope and citation rules, the search result
// carries the service's scope reading, an out-of-scope question is
// declined with no citation, empty rag_hits and confidence none, and a
// business question is answered and judged by the same claim rules.
func TestRemoteProvidersFollowTheScopeRule(t *testing.T) {
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			model := &obedientModel{}
			handler := model.openAIWire
			if provider == "anthropic" {
				handler = model.anthropicWire
			}
			upstream := httptest.NewServer(http.HandlerFunc(handler))
			defer upstream.Close()
			dir := t.TempDir()
			base, _ := startServer(t, map[string]string{"ASSISTANT_DATA_DIR": dir, "ASSISTANT_LLM_PROVIDER": provider,
				"ASSISTANT_LLM_BASE_URL": upstream.URL, "ASSISTANT_LLM_MODEL": "local-model", "ASSISTANT_LLM_API_KEY": "test-key"})
			key := createKey(t, dir)

			type answer struct {
				Response   string
				RagHits    []struct{ Source string } `json:"rag_hits"`
				Confidence struct {
					Level     string
					Score     float64
					Relevance *float64
					Verdicts  []struct{ Claim, Status string }
				}
			}
			ask := func(message string) answer {
				status, body, _ := postChat(t, base, key, `{"message":"`+message+`","mode":"success"}`, false)
				if status != 200 {
					t.Fatalf("chat: %d %s", status, body)
				}
				var a answer
				json.Unmarshal([]byte(body), &a)
				return a
			}

			out := ask("Give me a good recipe for lasagna")
			if !strings.Contains(out.Response, "running a business") || strings.Contains(out.Response, "[") ||
				len(out.RagHits) != 0 || out.Confidence.Level != "none" {
				t.Errorf("out of scope: %+v", out)
			}
			model.mu.Lock()
			system := model.systems[0]
			model.mu.Unlock()
			if !strings.Contains(system, "decline") || !strings.Contains(system, "Evidence first") || !strings.Contains(system, "medical help") {
				t.Errorf("the system prompt does not state the scope and citation rules:\n%s", system)
			}

			in := ask("Our customers cancel their subscription after three months")
			if len(in.RagHits) == 0 || !strings.Contains(in.Response, "["+in.RagHits[0].Source+"]") {
				t.Fatalf("in scope: %+v", in)
			}
			if in.Confidence.Level == "none" || len(in.Confidence.Verdicts) == 0 || in.Confidence.Verdicts[0].Status != "verified" {
				t.Errorf("the model's grounded answer is judged by the claim rules: %+v", in.Confidence)
			}
			// The answer-level relevance applies to a hosted model's answer
			// too, and the score is never above it.
			if r := in.Confidence.Relevance; r == nil || in.Confidence.Score > *r {
				t.Errorf("no relevance on a hosted model's answer, or a score above it: %+v", in.Confidence)
			}
		})
	}
}
