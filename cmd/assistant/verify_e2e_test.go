package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// judgeServer is an OpenAI-compatible server that judges claims: it
// declares claim 1 verified, quoting the first passage it was given, or
// fails with 500 when fail is set.
type judgeServer struct {
	fail  atomic.Bool
	calls atomic.Int32
}

func (j *judgeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	j.calls.Add(1)
	if j.fail.Load() {
		http.Error(w, `{"error":{"message":"overloaded","type":"server_error"}}`, http.StatusInternalServerError)
		return
	}
	var body struct {
		Model    string
		Messages []struct{ Role, Content string }
	}
	json.NewDecoder(r.Body).Decode(&body)
	var quote string
	for _, m := range body.Messages {
		for _, line := range strings.Split(m.Content, "\n") {
			if p, ok := strings.CutPrefix(line, "- "); ok && quote == "" && m.Role == "user" {
				quote = p
			}
		}
	}
	verdicts, _ := json.Marshal(map[string]any{"verdicts": []any{map[string]any{"claim": 1, "status": "verified", "evidence": quote, "score": 0.95}}})
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": body.Model,
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": string(verdicts)}, "finish_reason": "stop"}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
	})
}

// TestRemoteProviderJudgesClaims: with a remote provider, serve wires the
// model judge into /api/v1/verify (and chat, which shares it), and a
// failing model falls back to the builtin verdict (here: verified by the
// builtin checker's own reading) instead of failing.
func TestRemoteProviderJudgesClaims(t *testing.T) {
	judge := &judgeServer{}
	upstream := httptest.NewServer(judge)
	defer upstream.Close()
	dir := t.TempDir()
	base, _ := startServer(t, map[string]string{"ASSISTANT_DATA_DIR": dir, "ASSISTANT_LLM_PROVIDER": "openai",
		"ASSISTANT_LLM_BASE_URL": upstream.URL, "ASSISTANT_LLM_MODEL": "local-model"})
	key := createKey(t, dir)

	verify := func() (int, string) {
		req, _ := http.NewRequest("POST", base+"/api/v1/verify", strings.NewReader(
			`{"text":"Kingman's queueing paper is one that every operations manager should read [paper:kingman-1961-heavy-traffic]."}`))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, body := verify()
	if status != 200 || judge.calls.Load() != 1 || !strings.Contains(body, `"status":"verified"`) || !strings.Contains(body, "the model found") {
		t.Errorf("the model did not judge: %d calls, %d %s", judge.calls.Load(), status, body)
	}

	judge.fail.Store(true)
	status, body = verify()
	if status != 200 || strings.Contains(body, "the model found") || !strings.Contains(body, `"reason":"the cited knowledge states it"`) {
		t.Errorf("a failing model: %d %s", status, body)
	}
}
