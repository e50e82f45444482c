package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeOpenAI is an OpenAI-compatible Chat Completions server: the first
// call of a turn asks for a search, the second answers with one real and
// one invented citation.
type fakeOpenAI struct {
	mu       sync.Mutex
	requests []map[string]any
	fail     bool
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	json.NewDecoder(r.Body).Decode(&body)
	f.mu.Lock()
	f.requests = append(f.requests, body)
	fail := f.fail
	f.mu.Unlock()
	if fail {
		http.Error(w, `{"error":{"message":"overloaded","type":"server_error"}}`, http.StatusInternalServerError)
		return
	}
	msgs, _ := body["messages"].([]any)
	last, _ := msgs[len(msgs)-1].(map[string]any)
	message := map[string]any{"role": "assistant"}
	finish := "stop"
	if last["role"] != "tool" {
		finish = "tool_calls"
		message["content"] = nil
		message["tool_calls"] = []any{map[string]any{"id": "call_1", "type": "function",
			"function": map[string]any{"name": "search_knowledge", "arguments": `{"query":"bottleneck capacity"}`}}}
	} else {
		message["content"] = "FROM-THE-MODEL: exploit the bottleneck before buying capacity [framework:theory-of-constraints]. " +
			"The Zeta ladder fixes everything [framework:zeta-ladder]."
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": body["model"],
		"choices": []any{map[string]any{"index": 0, "message": message, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
	})
}

func createKey(t *testing.T, dir string) string {
	t.Helper()
	var out bytes.Buffer
	getenv := func(k string) string {
		if k == "ASSISTANT_DATA_DIR" {
			return dir
		}
		return ""
	}
	if err := run(context.Background(), []string{"keys", "create", "--workspace", "w", "--name", "e2e"}, getenv, nil, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	return lines[len(lines)-1]
}

func postChat(t *testing.T, base, key, body string, stream bool) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/api/v1/chat", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// TestOpenAICompatibleProvider: with ASSISTANT_LLM_PROVIDER=openai the
// answer comes from that server, its tool calls run and are traced, an
// invented token never reaches the client (JSON or stream), and a failing
// server is a 502 problem.
func TestOpenAICompatibleProvider(t *testing.T) {
	fake := &fakeOpenAI{}
	upstream := httptest.NewServer(fake)
	defer upstream.Close()
	dir := t.TempDir()
	base, _ := startServer(t, map[string]string{"ASSISTANT_DATA_DIR": dir, "ASSISTANT_LLM_PROVIDER": "openai",
		"ASSISTANT_LLM_BASE_URL": upstream.URL, "ASSISTANT_LLM_MODEL": "local-model"})
	key := createKey(t, dir)

	status, body, _ := postChat(t, base, key, `{"message":"Orders pile up at packing","mode":"operator"}`, false)
	if status != 200 {
		t.Fatalf("chat: %d %s", status, body)
	}
	var resp struct {
		Response       string
		ReasoningTrace []struct {
			Hop  int
			Tool string
		} `json:"reasoning_trace"`
		Confidence struct {
			Verdicts []struct{ Claim, Status string }
		}
	}
	json.Unmarshal([]byte(body), &resp)
	if !strings.Contains(resp.Response, "FROM-THE-MODEL") || !strings.Contains(resp.Response, "[framework:theory-of-constraints]") {
		t.Errorf("the answer did not come from the server: %q", resp.Response)
	}
	if strings.Contains(body, "zeta-ladder") {
		t.Errorf("the invented token reached the client: %s", body)
	}
	if len(resp.ReasoningTrace) != 1 || resp.ReasoningTrace[0].Tool != "search_knowledge" {
		t.Errorf("trace: %+v", resp.ReasoningTrace)
	}
	unsupported := false
	for _, v := range resp.Confidence.Verdicts {
		unsupported = unsupported || (strings.Contains(v.Claim, "Zeta") && v.Status == "unsupported")
	}
	if !unsupported {
		t.Errorf("the claim with the invented token is not unsupported: %+v", resp.Confidence.Verdicts)
	}
	fake.mu.Lock()
	first := fake.requests[0]
	fake.mu.Unlock()
	if first["model"] != "local-model" || first["tools"] == nil {
		t.Errorf("request to the server: model %v, tools %v", first["model"], first["tools"] != nil)
	}

	status, body, _ = postChat(t, base, key, `{"message":"Orders pile up at packing"}`, true)
	if status != 200 || !strings.Contains(body, "event: hop") || !strings.Contains(body, "event: final") || strings.Contains(body, "zeta-ladder") {
		t.Errorf("stream: %d\n%s", status, body)
	}

	fake.mu.Lock()
	fake.fail = true
	fake.mu.Unlock()
	status, body, header := postChat(t, base, key, `{"message":"Orders pile up at packing"}`, false)
	if status != 502 || header.Get("Content-Type") != "application/problem+json" || header.Get("Retry-After") == "" {
		t.Errorf("upstream 500s: %d %s %v", status, body, header)
	}
}

func TestUpstreamDownIs502(t *testing.T) {
	// The port stays held until the service has its own, so the service
	// (or another test's) cannot be given it and answer as the upstream;
	// then nothing listens there.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := fmt.Sprintf("http://%s/v1", ln.Addr())
	dir := t.TempDir()
	base, _ := startServer(t, map[string]string{"ASSISTANT_DATA_DIR": dir, "ASSISTANT_LLM_PROVIDER": "openai",
		"ASSISTANT_LLM_BASE_URL": closed, "ASSISTANT_LLM_MODEL": "m"})
	ln.Close()
	key := createKey(t, dir)
	status, body, header := postChat(t, base, key, `{"message":"hello"}`, false)
	if status != 502 || header.Get("Content-Type") != "application/problem+json" || !strings.Contains(body, `"status":502`) {
		t.Errorf("upstream down: %d %s", status, body)
	}
}
