package verify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/llm"
	"github.com/constraintlab/assistant/internal/llm/anthropic"
	"github.com/constraintlab/assistant/internal/llm/openai"
	"github.com/constraintlab/assistant/internal/verify"
)

// The judge is tested against local servers that speak the real wire
// formats (Chat Completions, Messages), as internal/llm/openai and
// internal/llm/anthropic are.

// wire is a fake model API: it records request bodies and answers each
// with handle.
type wire struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
}

func newWire(t *testing.T, handle func(w http.ResponseWriter, r *http.Request)) *wire {
	t.Helper()
	u := &wire{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		u.mu.Lock()
		u.bodies = append(u.bodies, body)
		u.mu.Unlock()
		handle(w, r)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *wire) requests() []map[string]any {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]map[string]any(nil), u.bodies...)
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// openaiAnswer wraps text as a Chat Completions response.
func openaiAnswer(text string) string {
	content, _ := json.Marshal(text)
	return `{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"test-model",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":` + string(content) + `,"refusal":null},"finish_reason":"stop","logprobs":null}],` +
		`"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`
}

// anthropicAnswer wraps text as a Messages API response.
func anthropicAnswer(text string) string {
	content, _ := json.Marshal(text)
	return `{"id":"msg_01","type":"message","role":"assistant","model":"claude-test","content":[{"type":"text","text":` + string(content) + `}],` +
		`"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":5}}`
}

func openaiProvider(t *testing.T, url string) llm.Provider {
	t.Helper()
	p, err := openai.New(openai.Config{BaseURL: url + "/v1", APIKey: "sk-test", Model: "test-model", Timeout: 5 * time.Second, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func anthropicProvider(t *testing.T, url string) llm.Provider {
	t.Helper()
	p, err := anthropic.New(anthropic.Config{BaseURL: url, APIKey: "sk-ant-test", Model: "claude-test", Timeout: 5 * time.Second, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The evidence of the judge tests: one paper, cited and retrieved.
var (
	kingmanYear = 1961
	kingman     = assistant.Entity{
		Type: assistant.EntityType("paper"), Slug: "kingman-1961", Title: "The single server queue in heavy traffic",
		Authors: []string{"J. F. C. Kingman"}, Year: &kingmanYear,
		Summary: "Kingman studied a queue with one server as it gets close to being busy all the time. " +
			"He showed that waiting time then grows like one over one minus the utilization.",
		KeyIdeas: []string{"Waiting time explodes as utilization approaches one."},
	}
	judgeCited = map[assistant.Token]assistant.Entity{kingman.Token(): kingman}
	judgeHits  = []assistant.Entity{kingman}
)

// judgeText has four claims: a paraphrase of the paper (asked), a wrong
// year (contradicted by the builtin check, not asked), an invented token
// (unsupported, not asked) and an uncited claim (asked, against the hits).
const judgeText = "Kingman showed that queues get very slow when their server is almost never idle [paper:kingman-1961].\n" +
	"Kingman published the heavy traffic result in 1973 [paper:kingman-1961].\n" +
	"Goldratt wrote about bottlenecks in factories for years [paper:invented-work].\n" +
	"Waiting time explodes as utilization approaches one in every queue ever built."

// judgeReply is a valid judgement of the two claims asked.
const judgeReply = `{"verdicts":[` +
	`{"claim":1,"status":"verified","evidence":"He showed that waiting time then grows like one over one minus the utilization.","score":0.9},` +
	`{"claim":2,"status":"unsupported","evidence":"","score":0.3}]}`

func TestModelJudgeUsesTheModel(t *testing.T) {
	providers := []struct {
		name   string
		answer func(string) string
		new    func(*testing.T, string) llm.Provider
	}{
		{"openai", openaiAnswer, openaiProvider},
		{"anthropic", anthropicAnswer, anthropicProvider},
	}
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			up := newWire(t, func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, 200, p.answer("```json\n"+judgeReply+"\n```"))
			})
			judge := &verify.ModelJudge{Provider: p.new(t, up.URL), Fallback: verify.New()}
			got := judge.Verify(t.Context(), judgeText, judgeCited, judgeHits, verify.UseDefault)

			reqs := up.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want one batched request per answer", len(reqs))
			}
			prompt := promptText(reqs[0])
			for _, want := range []string{
				"1. Kingman showed that queues get very slow", "2. Waiting time explodes", // the claims asked, numbered
				"He showed that waiting time then grows", "published in 1961", // the passages
				`"verdicts"`, // the output format, in the system prompt
			} {
				if !strings.Contains(prompt, want) {
					t.Errorf("the request lacks %q:\n%s", want, prompt)
				}
			}
			for _, never := range []string{"1973", "invented-work", "Goldratt"} {
				if strings.Contains(prompt, never) {
					t.Errorf("the request asks about a claim the builtin settles (%q)", never)
				}
			}

			wantStatus := []string{verify.Verified, verify.Contradicted, verify.Unsupported, verify.Unsupported}
			if len(got.Verdicts) != len(wantStatus) {
				t.Fatalf("%d verdicts: %+v", len(got.Verdicts), got.Verdicts)
			}
			for i, v := range got.Verdicts {
				if v.Status != wantStatus[i] {
					t.Errorf("claim %d %q: %s (%s), want %s", i+1, v.Claim, v.Status, v.Reason, wantStatus[i])
				}
			}
			v := got.Verdicts[0]
			if v.Evidence == nil || v.Evidence.Slug != "kingman-1961" || !strings.HasPrefix(v.Evidence.Snippet, "He showed that waiting time") || v.Score != 0.9 {
				t.Errorf("the model's verdict: %+v %+v", v, v.Evidence)
			}
			if ev := got.Verdicts[1].Evidence; ev == nil || !strings.Contains(ev.Snippet, "1961") {
				t.Errorf("the contradiction lost its evidence: %+v", got.Verdicts[1])
			}
			if b, _ := json.Marshal(got); strings.Contains(string(b), "invented-work") {
				t.Errorf("the invented token is echoed: %s", b)
			}
			if got.TotalClaims != 4 || got.VerifiedClaims != 1 || got.Score != 0.25 || got.Level != verify.Level(0.25, 4) {
				t.Errorf("confidence %+v", got)
			}
		})
	}
}

// promptText joins the messages of a Chat Completions or Messages request.
func promptText(body map[string]any) string {
	var b strings.Builder
	b.WriteString(flatten(body["system"])) // Messages API: system is top-level
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		j, _ := json.Marshal(m)
		var unq any
		_ = json.Unmarshal(j, &unq)
		b.WriteString(flatten(unq))
		b.WriteString("\n")
	}
	return b.String()
}

// flatten returns the strings of a decoded JSON value, joined.
func flatten(v any) string {
	switch x := v.(type) {
	case string:
		return x + "\n"
	case []any:
		var s string
		for _, e := range x {
			s += flatten(e)
		}
		return s
	case map[string]any:
		var s string
		for _, e := range x {
			s += flatten(e)
		}
		return s
	}
	return ""
}

func TestModelJudgeFallsBack(t *testing.T) {
	builtin := verify.New().Verify(context.Background(), judgeText, judgeCited, judgeHits, verify.UseDefault)
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	cases := []struct {
		name, why string
		handle    func(w http.ResponseWriter, r *http.Request)
	}{
		{"server error", "could not judge", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 500, `{"error":{"message":"boom","type":"server_error"}}`)
		}},
		{"garbage body", "could not judge", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, `<html>gateway</html>`) }},
		{"prose", "not a JSON object", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, openaiAnswer("Both claims look right to me."))
		}},
		{"text after the JSON", "text after the JSON object", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, openaiAnswer(judgeReply+" I hope this helps."))
		}},
		{"a claim missing", "1 verdicts for 2 claims", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, openaiAnswer(`{"verdicts":[{"claim":1,"status":"verified","evidence":"Waiting time explodes as utilization approaches one.","score":1}]}`))
		}},
		{"a claim twice", "judged twice", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, openaiAnswer(`{"verdicts":[{"claim":1,"status":"unsupported","evidence":"","score":0},{"claim":1,"status":"unsupported","evidence":"","score":0}]}`))
		}},
		{"unknown status", "unknown status", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, openaiAnswer(strings.Replace(judgeReply, `"unsupported"`, `"plausible"`, 1)))
		}},
		{"score out of range", "outside 0..1", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, openaiAnswer(strings.Replace(judgeReply, `"score":0.9`, `"score":9`, 1)))
		}},
		{"no score", "score missing", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, openaiAnswer(strings.Replace(judgeReply, `,"score":0.9`, ``, 1)))
		}},
		{"evidence not in the sources", "not in its sources", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, openaiAnswer(strings.Replace(judgeReply, "He showed that waiting time then grows", "He proved that waiting time then grows", 1)))
		}},
		{"verified without evidence", "verified without evidence", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, openaiAnswer(`{"verdicts":[{"claim":1,"status":"verified","evidence":"","score":1},{"claim":2,"status":"unsupported","evidence":"","score":0}]}`))
		}},
		{"timeout", "could not judge", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-hang:
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			up := newWire(t, c.handle)
			var log bytes.Buffer
			judge := &verify.ModelJudge{Provider: openaiProvider(t, up.URL), Fallback: verify.New(), Timeout: 300 * time.Millisecond,
				Logger: slog.New(slog.NewTextHandler(&log, nil))}
			got := judge.Verify(t.Context(), judgeText, judgeCited, judgeHits, verify.UseDefault)
			if len(up.requests()) == 0 {
				t.Fatal("the model was not asked")
			}
			if !reflect.DeepEqual(got, builtin) {
				t.Errorf("got %+v\nwant the builtin verdict %+v", got, builtin)
			}
			if !strings.Contains(log.String(), c.why) || !strings.Contains(log.String(), "using the builtin verdict") {
				t.Errorf("the fallback is logged as %q, want it to say %q", log.String(), c.why)
			}
		})
	}
}

func TestModelJudgeThreshold(t *testing.T) {
	up := newWire(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, openaiAnswer(strings.Replace(judgeReply, `"score":0.9`, `"score":0.7`, 1)))
	})
	judge := &verify.ModelJudge{Provider: openaiProvider(t, up.URL), Fallback: verify.New()}
	for _, c := range []struct {
		threshold float64
		want      string
	}{{0.65, verify.Verified}, {0.7, verify.Verified}, {0.8, verify.Unsupported}} {
		got := judge.Verify(t.Context(), judgeText, judgeCited, judgeHits, c.threshold)
		if v := got.Verdicts[0]; v.Status != c.want || v.Score != 0.7 {
			t.Errorf("threshold %v: %s %v (%s), want %s", c.threshold, v.Status, v.Score, v.Reason, c.want)
		}
	}
}

// A text whose claims the builtin settles alone never reaches the model.
func TestModelJudgeSkipsSettledClaims(t *testing.T) {
	up := newWire(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 500, `{}`) })
	judge := &verify.ModelJudge{Provider: openaiProvider(t, up.URL), Fallback: verify.New()}
	text := "Kingman published the heavy traffic result in 1973 [paper:kingman-1961].\n" +
		"Goldratt wrote about bottlenecks in factories for years [paper:invented-work]."
	got := judge.Verify(t.Context(), text, judgeCited, nil, verify.UseDefault)
	if n := len(up.requests()); n != 0 {
		t.Errorf("%d requests, want none", n)
	}
	if got.TotalClaims != 2 || got.Verdicts[0].Status != verify.Contradicted || got.Verdicts[1].Status != verify.Unsupported {
		t.Errorf("%+v", got)
	}
}

// The builtin checker's Verify is Check with the threshold given.
func TestCheckerVerifyThreshold(t *testing.T) {
	text := "Kingman showed that waiting time explodes as utilization approaches one [paper:kingman-1961]."
	c := verify.New()
	if got, want := c.Verify(t.Context(), text, judgeCited, nil, verify.UseDefault), c.Check(text, judgeCited, nil); !reflect.DeepEqual(got, want) {
		t.Errorf("UseDefault: %+v, want %+v", got, want)
	}
	strict := c.Verify(t.Context(), text, judgeCited, nil, 1.01)
	if strict.VerifiedClaims != 0 {
		t.Errorf("a bar above 1 verified %+v", strict)
	}
	if c.Threshold != verify.DefaultThreshold {
		t.Errorf("Verify changed the checker's threshold to %v", c.Threshold)
	}
}
