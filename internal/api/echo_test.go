package api_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// longest is the longest run of c in s.
func longest(s string, c rune) int {
	best, run := 0, 0
	for _, r := range s {
		if r == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

// Every echo of caller input in an error is cut at 200 characters, on
// every surface: problem documents, the OpenAI-compatible facade and MCP.
func TestErrorsEchoAtMost200Characters(t *testing.T) {
	f := newFixture(t, 0, 0)
	key := f.newKey(t, "ws_echo")
	long := strings.Repeat("x", 100_000)
	auth := []string{"Authorization", "Bearer " + key}
	check := func(t *testing.T, what string, r response) {
		t.Helper()
		if r.Code < 400 && !strings.Contains(r.Body.String(), `"error"`) && !strings.Contains(r.Body.String(), `"isError":true`) {
			t.Fatalf("%s: no error: %d %s", what, r.Code, r.Body.String()[:min(300, r.Body.Len())])
		}
		if n := longest(r.Body.String(), 'x'); n > 200 {
			t.Errorf("%s: echoes %d characters of input (body %d bytes)", what, n, r.Body.Len())
		}
	}
	t.Run("problem documents", func(t *testing.T) {
		check(t, "unknown path", f.do(t, "GET", "/api/assistant/v1/"+long, ""))
		check(t, "unknown archetype", f.do(t, "POST", "/api/assistant/v1/preview", `{"vertical":"saas","archetype_id":"`+long+`"}`))
		check(t, "unknown mode", f.chat(t, key, `{"message":"hello","mode":"`+long+`"}`))
	})
	t.Run("OpenAI facade", func(t *testing.T) {
		check(t, "unknown model", f.do(t, "POST", "/api/v1/openai/chat/completions",
			`{"model":"`+long+`","messages":[{"role":"user","content":"hello"}]}`, auth...))
		check(t, "unknown model (GET)", f.do(t, "GET", "/api/v1/openai/models/"+long, "", auth...))
	})
	t.Run("MCP", func(t *testing.T) {
		check(t, "unknown tool", f.mcpPost(t, key, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+long+`"}}`))
		check(t, "unknown method", f.mcpPost(t, key, `{"jsonrpc":"2.0","id":1,"method":"`+long+`"}`))
		check(t, "unknown resource", f.mcpPost(t, key, `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"assistant://paper/`+long+`"}}`))
		check(t, "invalid params", f.mcpPost(t, key, `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":["`+long+`"]}}`))
		r := f.mcpPost(t, key, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask_assistant","arguments":{"message":"hi","mode":"`+long+`"}}}`)
		check(t, "tool error", r)
		var res struct {
			Result struct{ IsError bool } `json:"result"`
		}
		json.Unmarshal(r.Body.Bytes(), &res)
		if !res.Result.IsError {
			t.Errorf("tool error: %s", r.Body.String()[:300])
		}
	})
}
