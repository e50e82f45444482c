package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/llm"
)

const responsesPath = "/api/v1/openai/responses"

type usageObj struct {
	Prompt     int `json:"prompt_tokens"`
	Completion int `json:"completion_tokens"`
	Total      int `json:"total_tokens"`
}

// TestOpenAIUsage: every completion, and exactly one chunk of a stream,
// carries usage; with the builtin model the counts are those of the
// documented tokenizer (the message and history in, the answer out).
func TestOpenAIUsage(t *testing.T) {
	f := newFixture(t, 0, 0)
	auth := []string{"Authorization", "Bearer " + f.newKey(t, "ws_usage")}
	body := `{"model":"assistant-operator","messages":[{"role":"user","content":"Orders ship late because packing cannot keep up"}]}`
	var c struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
		Usage *usageObj `json:"usage"`
	}
	f.do(t, "POST", completionsPath, body, auth...).json(t, &c)
	if c.Usage == nil || c.Usage.Prompt != 8 || c.Usage.Completion < 20 || c.Usage.Total != c.Usage.Prompt+c.Usage.Completion {
		t.Fatalf("usage %+v", c.Usage)
	}
	for _, opts := range []string{``, `"stream_options":{"include_usage":true},`, `"stream_options":{"include_usage":false},`} {
		r := f.do(t, "POST", completionsPath, strings.Replace(body, `{"model"`, `{"stream":true,`+opts+`"model"`, 1), auth...)
		var withUsage []map[string]json.RawMessage
		var last map[string]json.RawMessage
		for _, ev := range parseSSE(t, r.Body.String()) {
			if ev.data == "[DONE]" {
				continue
			}
			var m map[string]json.RawMessage
			json.Unmarshal([]byte(ev.data), &m)
			if m["usage"] != nil {
				withUsage = append(withUsage, m)
			}
			last = m
		}
		if len(withUsage) != 1 {
			t.Fatalf("%s: %d chunks carry usage, want 1", opts, len(withUsage))
		}
		var u usageObj
		json.Unmarshal(withUsage[0]["usage"], &u)
		if u != *c.Usage {
			t.Errorf("%s: streamed usage %+v, JSON %+v", opts, u, *c.Usage)
		}
		choices := string(last["choices"])
		if strings.Contains(opts, "true") != (choices == "[]") || string(last["usage"]) == "" {
			t.Errorf("%s: last chunk %v; with include_usage it is the usage chunk with no choices, otherwise the closing chunk", opts, last)
		}
	}
}

// meteredProvider is the builtin model reporting made-up counts, as a
// remote provider reports its upstream's.
type meteredProvider struct{ llm.Provider }

func (p meteredProvider) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	llm.ReportUsage(ctx, llm.Usage{InputTokens: 1000, OutputTokens: 10})
	return p.Provider.Complete(ctx, req)
}

// TestOpenAIUsageOfARemoteProvider: the provider's counts, added up over
// the turn's calls, are passed through.
func TestOpenAIUsageOfARemoteProvider(t *testing.T) {
	f := newFixture(t, 0, 0)
	f.srv.Chat.Provider = meteredProvider{f.srv.Chat.Provider}
	auth := []string{"Authorization", "Bearer " + f.newKey(t, "ws_usage")}
	var c struct {
		Usage usageObj `json:"usage"`
	}
	f.do(t, "POST", completionsPath, `{"model":"assistant-operator","messages":[{"role":"user","content":"Orders ship late because packing cannot keep up"}]}`, auth...).json(t, &c)
	if c.Usage.Prompt == 0 || c.Usage.Prompt%1000 != 0 || c.Usage.Completion != c.Usage.Prompt/100 || c.Usage.Total != c.Usage.Prompt+c.Usage.Completion {
		t.Errorf("usage %+v, want multiples of the provider's 1000 in and 10 out", c.Usage)
	}
	var resp struct {
		Usage struct {
			Input  int `json:"input_tokens"`
			Output int `json:"output_tokens"`
		} `json:"usage"`
	}
	f.do(t, "POST", responsesPath, `{"model":"assistant-operator","input":"Orders ship late because packing cannot keep up"}`, auth...).json(t, &resp)
	if resp.Usage.Input != c.Usage.Prompt || resp.Usage.Output != c.Usage.Completion {
		t.Errorf("responses usage %+v, completions %+v", resp.Usage, c.Usage)
	}
}

// TestOpenAIUnsupportedParameters: what the service cannot honour is a
// 400 in OpenAI's shape naming the parameter; what it can ignore passes.
func TestOpenAIUnsupportedParameters(t *testing.T) {
	f := newFixture(t, 0, 0)
	auth := []string{"Authorization", "Bearer " + f.newKey(t, "ws_params")}
	msgs := `"model":"assistant-operator","messages":[{"role":"user","content":"Orders ship late"}]`
	for extra, param := range map[string]string{
		`"tools":[{"type":"function","function":{"name":"f","parameters":{}}}]`: "tools",
		`"tool_choice":"required"`:   "tool_choice",
		`"functions":[{"name":"f"}]`: "functions",
		`"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{}}}`: "response_format",
		`"response_format":{"type":"json_object"}`:                                        "response_format",
		`"logprobs":true`:                          "logprobs",
		`"top_logprobs":3`:                         "top_logprobs",
		`"modalities":["text","audio"]`:            "modalities",
		`"audio":{"voice":"alloy","format":"mp3"}`: "audio",
		`"n":2`: "n",
	} {
		r := f.do(t, "POST", completionsPath, "{"+extra+","+msgs+"}", auth...)
		e := assertOpenAIError(t, r, 400, "invalid_request_error", map[bool]string{true: "", false: "unsupported_parameter"}[param == "n"], param)
		if param != "n" && !strings.Contains(e.Error.Message, param) {
			t.Errorf("%s: message %q does not name it", extra, e.Error.Message)
		}
	}
	for _, extra := range []string{`"tools":[]`, `"tool_choice":"none"`, `"response_format":{"type":"text"}`, `"logprobs":false`,
		`"modalities":["text"]`, `"temperature":0.2,"max_tokens":50,"seed":1,"user":"u","parallel_tool_calls":false`} {
		if r := f.do(t, "POST", completionsPath, "{"+extra+","+msgs+"}", auth...); r.Code != 200 {
			t.Errorf("%s: %d %s", extra, r.Code, r.Body)
		}
	}
	for extra, param := range map[string]string{
		`"previous_response_id":"resp_123"`:                               "previous_response_id",
		`"text":{"format":{"type":"json_schema","name":"x","schema":{}}}`: "text.format",
		`"tools":[{"type":"web_search"}]`:                                 "tools",
		`"background":true`:                                               "background",
		`"conversation":"conv_1"`:                                         "conversation",
	} {
		r := f.do(t, "POST", responsesPath, `{`+extra+`,"model":"assistant-operator","input":"Orders ship late"}`, auth...)
		assertOpenAIError(t, r, 400, "invalid_request_error", "unsupported_parameter", param)
	}
	if r := f.do(t, "POST", responsesPath, `{"model":"assistant-operator","input":"Orders ship late","text":{"format":{"type":"text"}},"store":true,"temperature":1}`, auth...); r.Code != 200 {
		t.Errorf("plain text format: %d %s", r.Code, r.Body)
	}
}

type responseObj struct {
	ID     string `json:"id"`
	Object string `json:"object"`
	Status string `json:"status"`
	Output []struct {
		Type    string `json:"type"`
		Role    string `json:"role"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"output"`
	Usage *struct {
		Input  int `json:"input_tokens"`
		Output int `json:"output_tokens"`
		Total  int `json:"total_tokens"`
	} `json:"usage"`
	Extension map[string]json.RawMessage `json:"x_assistant"`
}

func (o responseObj) text() string {
	if len(o.Output) != 1 || len(o.Output[0].Content) != 1 {
		return ""
	}
	return o.Output[0].Content[0].Text
}

// TestOpenAIResponses: the Responses API answers the turn POST
// /api/v1/chat answers, from a string or from messages, JSON or streamed.
func TestOpenAIResponses(t *testing.T) {
	f := newFixture(t, 0, 0)
	auth := []string{"Authorization", "Bearer " + f.newKey(t, "ws_responses")}
	var native struct {
		Response string `json:"response"`
	}
	f.chat(t, strings.TrimPrefix(auth[1], "Bearer "), `{"message":"Our support queue doubled since the last release","mode":"support",
		"history":[{"role":"user","content":"Hello"},{"role":"assistant","content":"How can I help?"}]}`).json(t, &native)
	var single responseObj
	f.do(t, "POST", responsesPath, `{"model":"assistant-support","input":"Our support queue doubled since the last release"}`, auth...).json(t, &single)
	if single.Object != "response" || single.Status != "completed" || !strings.HasPrefix(single.ID, "resp_") || single.text() == "" ||
		single.Usage == nil || single.Usage.Total != single.Usage.Input+single.Usage.Output || single.Extension["confidence"] == nil {
		t.Fatalf("response %+v", single)
	}
	body := `{"model":"assistant-support","instructions":"Answer in French","input":[
		{"role":"user","content":"Hello"},
		{"type":"message","role":"assistant","content":[{"type":"output_text","text":"How can I help?"}]},
		{"type":"function_call_output","call_id":"c1","output":"ignored"},
		{"role":"user","content":[{"type":"input_text","text":"Our support queue doubled since the last release"}]}]}`
	var multi responseObj
	f.do(t, "POST", responsesPath, body, auth...).json(t, &multi)
	if multi.text() != native.Response {
		t.Errorf("messages input answers %q, POST /api/v1/chat %q", multi.text(), native.Response)
	}

	r := f.do(t, "POST", responsesPath, strings.Replace(body, `{"model"`, `{"stream":true,"model"`, 1), auth...)
	var types []string
	var deltas strings.Builder
	var completed responseObj
	for i, ev := range parseSSE(t, r.Body.String()) {
		var m struct {
			Type     string          `json:"type"`
			Seq      int             `json:"sequence_number"`
			Delta    string          `json:"delta"`
			Response json.RawMessage `json:"response"`
		}
		json.Unmarshal([]byte(ev.data), &m)
		if m.Type != ev.name || m.Seq != i {
			t.Errorf("event %d: name %q, type %q, sequence %d", i, ev.name, m.Type, m.Seq)
		}
		if len(types) == 0 || types[len(types)-1] != m.Type {
			types = append(types, m.Type)
		}
		switch m.Type {
		case "response.output_text.delta":
			deltas.WriteString(m.Delta)
		case "response.completed":
			json.Unmarshal(m.Response, &completed)
		}
	}
	want := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"}
	if strings.Join(types, " ") != strings.Join(want, " ") {
		t.Errorf("events %v, want %v", types, want)
	}
	if deltas.String() != native.Response || completed.text() != native.Response || completed.Usage == nil {
		t.Errorf("streamed: deltas %q, completed %+v; want %q", deltas.String(), completed, native.Response)
	}

	for body, param := range map[string]string{
		`{"model":"assistant-operator","input":[{"role":"assistant","content":"Hi"}]}`:                "input",
		`{"model":"assistant-operator","input":[{"role":"user","content":[{"type":"input_image"}]}]}`: "input[0].content",
		`{"model":"assistant-operator","input":""}`:                                                   "input[0].content",
		`{"model":"assistant-operator","input":[{"type":"item_reference","id":"msg_1"}]}`:             "input[0]",
	} {
		r := f.do(t, "POST", responsesPath, body, auth...)
		if r.Code != 400 {
			t.Errorf("%s: %d %s", body, r.Code, r.Body)
			continue
		}
		var e openAIErr
		r.json(t, &e)
		if deref(e.Error.Param) != param {
			t.Errorf("%s: param %q, want %q (%s)", body, deref(e.Error.Param), param, r.Body)
		}
	}
	assertOpenAIError(t, f.do(t, "POST", responsesPath, `{"model":"gpt-4o","input":"x"}`, auth...), 404, "invalid_request_error", "model_not_found", "model")
}
