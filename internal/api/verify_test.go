package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/access"
	"github.com/constraintlab/assistant/internal/assistant"
)

func (f *fixture) verify(t *testing.T, key, body string, header ...string) response {
	return f.do(t, "POST", "/api/v1/verify", body, append([]string{"Authorization", "Bearer " + key}, header...)...)
}

// problemShape is what must be equal between two problem answers: all but
// the request id, with the endpoints' field names (chat's message, verify's
// text) written as FIELD.
type problemShape struct {
	Status                      int
	ContentType, CacheControl   string
	WWWAuthenticate, RetryAfter string
	RateLimitPolicy             string
	HasRateLimit                bool
	Keys                        []string
	Type, Title, Detail         string
	Errors                      string
	RetryAfterSeconds           any
}

func shapeOf(t *testing.T, r response, field string) problemShape {
	t.Helper()
	var p map[string]any
	r.json(t, &p)
	var keys []string
	for k := range p {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	errs, _ := json.Marshal(p["errors"])
	norm := strings.NewReplacer("body."+field, "body.FIELD", "property "+field, "property FIELD", `\"`+field+`\"`, `\"FIELD\"`).Replace
	return problemShape{
		Status: r.Code, ContentType: r.Header().Get("Content-Type"), CacheControl: r.Header().Get("Cache-Control"),
		WWWAuthenticate: r.Header().Get("WWW-Authenticate"), RetryAfter: r.Header().Get("Retry-After"),
		RateLimitPolicy: r.Header().Get("RateLimit-Policy"), HasRateLimit: r.Header().Get("RateLimit") != "",
		Keys: keys, Type: fmt.Sprint(p["type"]), Title: fmt.Sprint(p["title"]), Detail: norm(fmt.Sprint(p["detail"])),
		Errors: norm(string(errs)), RetryAfterSeconds: p["retry_after_seconds"],
	}
}

// TestVerifyAnswersLikeChat is the acceptance of issue 10: POST
// /api/v1/verify answers 400, 401, 413 and 429 exactly as chat does.
func TestVerifyAnswersLikeChat(t *testing.T) {
	f := newFixture(t, 0, 0)
	key := f.newKey(t, "acme")
	unknown, _, _ := access.NewKey() // well-formed, never stored
	cases := []struct {
		name   string
		key    string // "" sends no Authorization header
		body   string // FIELD is the endpoint's text field
		status int
	}{
		{"no key", "", `{"FIELD":"hi there"}`, 401},
		{"malformed key", "sk_service_garbage", `{"FIELD":"hi there"}`, 401},
		{"unknown key", unknown, `{"FIELD":"hi there"}`, 401},
		{"malformed JSON", key, `{"FIELD":`, 400},
		{"not JSON", key, `hello`, 400},
		{"not an object", key, `["hi"]`, 400},
		{"missing field", key, `{}`, 400},
		{"empty", key, `{"FIELD":""}`, 400},
		{"blank", key, `{"FIELD":"  \n "}`, 400},
		{"wrong type", key, `{"FIELD":5}`, 400},
		{"8001 characters", key, `{"FIELD":"` + strings.Repeat("x", 8001) + `"}`, 400},
		{"257 KiB", key, `{"FIELD":"hi","source":"` + strings.Repeat("x", 257<<10) + `"}`, 413},
	}
	send := func(path, field, key, body string) response {
		var h []string
		if key != "" {
			h = []string{"Authorization", "Bearer " + key}
		}
		return f.do(t, "POST", path, strings.ReplaceAll(body, "FIELD", field), h...)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			chat := send("/api/v1/chat", "message", c.key, c.body)
			verify := send("/api/v1/verify", "text", c.key, c.body)
			assertProblem(t, chat, c.status)
			assertProblem(t, verify, c.status)
			if cs, vs := shapeOf(t, chat, "message"), shapeOf(t, verify, "text"); !reflect.DeepEqual(cs, vs) {
				t.Errorf("chat and verify differ:\nchat   %+v\nverify %+v", cs, vs)
			}
		})
	}

	// 429: verify and chat share one budget per key (D2b, D22); each answers
	// the 61st request of the window alike.
	t.Run("over the limit", func(t *testing.T) {
		k := f.newKey(t, "acme")
		for i := range 60 {
			var r response
			if i%2 == 0 {
				r = f.chat(t, k, `{}`)
			} else {
				r = f.verify(t, k, `{}`)
			}
			if r.Code != 400 {
				t.Fatalf("request %d: %d", i+1, r.Code)
			}
		}
		chat, verify := f.chat(t, k, `{"message":"hi there"}`), f.verify(t, k, `{"text":"hi there"}`)
		assertProblem(t, chat, 429)
		assertProblem(t, verify, 429)
		cs, vs := shapeOf(t, chat, "message"), shapeOf(t, verify, "text")
		if !reflect.DeepEqual(cs, vs) {
			t.Errorf("chat and verify differ:\nchat   %+v\nverify %+v", cs, vs)
		}
		if vs.RateLimitPolicy != `"chat";q=60;w=60` || vs.RetryAfter == "" || vs.RetryAfterSeconds == nil {
			t.Errorf("429 of verify: %+v", vs)
		}
	})
}

// kingmanToken is a paper of the embedded knowledge base, from 1961.
const kingmanToken = "paper:kingman-1961-heavy-traffic"

type confidence struct {
	Score          float64 `json:"score"`
	Level          string  `json:"level"`
	TotalClaims    int     `json:"totalClaims"`
	VerifiedClaims int     `json:"verifiedClaims"`
	Verdicts       []struct {
		Claim     string   `json:"claim"`
		Status    string   `json:"status"`
		Citations []string `json:"citations"`
		Evidence  *struct {
			Type, Slug, Snippet string
		} `json:"evidence"`
		Score float64 `json:"score"`
	} `json:"verdicts"`
}

func TestVerifyYear(t *testing.T) {
	f := newFixture(t, 0, 0)
	key := f.newKey(t, "acme")
	for _, c := range []struct {
		year, want string
	}{{"1961", "verified"}, {"1973", "contradicted"}, {"1999", "contradicted"}} {
		body, _ := json.Marshal(map[string]string{"text": "Kingman published the heavy traffic result in " + c.year + " [" + kingmanToken + "]."})
		r := f.verify(t, key, string(body))
		if r.Code != 200 || r.Header().Get("Content-Type") != "application/json" || r.Header().Get("Cache-Control") != "no-store" {
			t.Fatalf("%s: %d %q %q %s", c.year, r.Code, r.Header().Get("Content-Type"), r.Header().Get("Cache-Control"), r.Body)
		}
		var conf confidence
		r.json(t, &conf)
		if conf.TotalClaims != 1 || len(conf.Verdicts) != 1 {
			t.Fatalf("%s: %+v", c.year, conf)
		}
		v := conf.Verdicts[0]
		if v.Status != c.want {
			t.Errorf("%s: %s, want %s", c.year, v.Status, c.want)
		}
		if v.Evidence == nil || v.Evidence.Type+":"+v.Evidence.Slug != kingmanToken || !strings.Contains(v.Evidence.Snippet, "1961") {
			t.Errorf("%s: evidence %+v, want the paper's snippet with its year", c.year, v.Evidence)
		}
		if !slices.Equal(v.Citations, []string{kingmanToken}) {
			t.Errorf("%s: citations %v", c.year, v.Citations)
		}
		if wantVerified := c.want == "verified"; (conf.VerifiedClaims == 1) != wantVerified || (conf.Level == "high") != wantVerified {
			t.Errorf("%s: confidence %+v", c.year, conf)
		}
	}
}

func TestVerifyEvidenceAndThreshold(t *testing.T) {
	f := newFixture(t, 0, 0)
	key := f.newKey(t, "acme")
	post := func(body map[string]any) confidence {
		t.Helper()
		b, _ := json.Marshal(body)
		r := f.verify(t, key, string(b))
		if r.Code != 200 {
			t.Fatalf("%s: %d %s", b, r.Code, r.Body)
		}
		var raw map[string]json.RawMessage
		r.json(t, &raw)
		var keys []string
		for k := range raw {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		// The body is the confidence object itself, as chat's confidence.
		if want := []string{"level", "score", "totalClaims", "verdicts", "verifiedClaims"}; !slices.Equal(keys, want) {
			t.Errorf("response keys %v, want %v", keys, want)
		}
		if strings.Contains(r.Body.String(), "invented-work") {
			t.Errorf("an invented token is echoed: %s", r.Body)
		}
		var conf confidence
		r.json(t, &conf)
		return conf
	}
	uncited := "Waiting time grows without bound as a queue's utilization approaches one."

	// An uncited claim is checked against citations, and only them.
	if c := post(map[string]any{"text": uncited}); c.Verdicts[0].Status != "unsupported" || c.Verdicts[0].Evidence != nil {
		t.Errorf("no evidence given: %+v", c)
	}
	c := post(map[string]any{"text": uncited, "citations": []string{kingmanToken, kingmanToken}})
	if v := c.Verdicts[0]; v.Status != "verified" || v.Evidence == nil || v.Evidence.Slug != "kingman-1961-heavy-traffic" || len(v.Citations) != 0 {
		t.Errorf("with citations: %+v", c)
	}
	score := c.Verdicts[0].Score

	// The caller's bar: the same claim is verified below its score and
	// not above it.
	if c := post(map[string]any{"text": uncited, "citations": []string{kingmanToken}, "threshold": score}); c.Verdicts[0].Status != "verified" {
		t.Errorf("threshold %v: %+v", score, c)
	}
	if c := post(map[string]any{"text": uncited, "citations": []string{kingmanToken}, "threshold": 1}); c.Verdicts[0].Status != "unsupported" || c.Level != "none" {
		t.Errorf("threshold 1: %+v", c)
	}

	// An invented token makes its claim unsupported, and is not repeated;
	// citations do not rescue a claim that cites something else.
	c = post(map[string]any{"text": "Waiting time grows without bound as utilization approaches one [paper:invented-work].",
		"citations": []string{kingmanToken}})
	if v := c.Verdicts[0]; v.Status != "unsupported" || len(v.Citations) != 0 {
		t.Errorf("invented token: %+v", c)
	}

	// Text with nothing to check.
	if c := post(map[string]any{"text": "Hello!"}); c.TotalClaims != 0 || c.Level != "none" || c.Verdicts == nil {
		t.Errorf("no claims: %+v", c)
	}
}

func TestVerifyValidation(t *testing.T) {
	f := newFixture(t, 0, 0)
	key := f.newKey(t, "acme")
	many := make([]string, 101)
	for i := range many {
		many[i] = `"` + kingmanToken + `"`
	}
	cases := []struct {
		name, body, field string
	}{
		{"malformed citation", `{"text":"Queues wait longer when busy.","citations":["Kingman 1961"]}`, "citations[0]"},
		{"unknown citation", `{"text":"Queues wait longer when busy.","citations":["` + kingmanToken + `","paper:no-such-paper"]}`, "citations[1]"},
		{"citation not a string", `{"text":"Queues wait longer when busy.","citations":[1]}`, "citations"},
		{"101 citations", `{"text":"Queues wait longer when busy.","citations":[` + strings.Join(many, ",") + `]}`, "citations"},
		{"threshold above 1", `{"text":"Queues wait longer when busy.","threshold":1.5}`, "threshold"},
		{"negative threshold", `{"text":"Queues wait longer when busy.","threshold":-0.1}`, "threshold"},
		{"threshold not a number", `{"text":"Queues wait longer when busy.","threshold":"high"}`, "threshold"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := assertProblem(t, f.verify(t, key, c.body), 400)
			if p["type"] != "urn:assistant:problem:validation" || !strings.Contains(fmt.Sprint(p["detail"], p["errors"]), c.field) {
				t.Errorf("problem does not name %s: %v", c.field, p)
			}
		})
	}
	if r := f.verify(t, key, `{"text":"`+strings.Repeat("x", 8000)+`  ","unknown_field":1,"threshold":0}`); r.Code != 200 {
		t.Errorf("8000 characters, an unknown field and threshold 0: %d %s", r.Code, r.Body)
	}
}

// usageLog records the usage rows the middleware writes.
type usageLog struct {
	assistant.AccessStore
	mu   sync.Mutex
	rows []assistant.UsageRecord
}

func (u *usageLog) RecordUsage(ctx context.Context, r assistant.UsageRecord) error {
	u.mu.Lock()
	u.rows = append(u.rows, r)
	u.mu.Unlock()
	return u.AccessStore.RecordUsage(ctx, r)
}

func TestVerifyUsageAndRateLimitHeaders(t *testing.T) {
	f := newFixture(t, 0, 0)
	log := &usageLog{AccessStore: f.srv.Access}
	f.srv.Access = log
	key := f.newKey(t, "acme")
	r := f.verify(t, key, `{"text":"Kingman published the heavy traffic result in 1961 [`+kingmanToken+`].","source":"crm"}`)
	if r.Code != 200 {
		t.Fatalf("%d %s", r.Code, r.Body)
	}
	if r.Header().Get("RateLimit-Policy") != `"chat";q=60;w=60` || r.Header().Get("RateLimit") != `"chat";r=59;t=60` {
		t.Errorf("RateLimit headers: %q %q", r.Header().Get("RateLimit-Policy"), r.Header().Get("RateLimit"))
	}
	f.clock.Add(time.Second)
	if r := f.chat(t, key, `{"message":"hello there"}`); r.Header().Get("RateLimit") != `"chat";r=58;t=59` {
		t.Errorf("chat after verify: RateLimit %q, want the shared budget", r.Header().Get("RateLimit"))
	}
	assertProblem(t, f.verify(t, key, `{"text":""}`), 400)
	assertProblem(t, f.verify(t, "sk_service_garbage", `{"text":"hi"}`), 401)

	log.mu.Lock()
	defer log.mu.Unlock()
	var verifyRows []assistant.UsageRecord
	for _, row := range log.rows {
		if row.Endpoint == "POST /api/v1/verify" {
			verifyRows = append(verifyRows, row)
		}
	}
	if len(verifyRows) != 2 {
		t.Fatalf("usage rows of verify: %+v (all: %+v)", verifyRows, log.rows)
	}
	if row := verifyRows[0]; row.Status != 200 || row.Source != "crm" || row.Workspace != "acme" || row.Mode != "" {
		t.Errorf("usage row: %+v", row)
	}
	if verifyRows[1].Status != 400 {
		t.Errorf("usage row of the 400: %+v", verifyRows[1])
	}
}

func TestVerifyOpenAPI(t *testing.T) {
	f := newFixture(t, 0, 0)
	var doc struct {
		Paths map[string]map[string]struct {
			Security    []map[string][]string `json:"security"`
			RequestBody struct {
				Content map[string]struct {
					Schema struct {
						Ref string `json:"$ref"`
					} `json:"schema"`
				} `json:"content"`
			} `json:"requestBody"`
			Responses map[string]any `json:"responses"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Examples []any `json:"examples"`
					Example  any   `json:"example"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	f.do(t, "GET", "/api/assistant/openapi.json", "").json(t, &doc)
	op, ok := doc.Paths["/api/v1/verify"]["post"]
	if !ok {
		t.Fatal("POST /api/v1/verify is not documented")
	}
	if len(op.Security) != 1 || op.Security[0]["bearer"] == nil {
		t.Errorf("security %v, want bearer", op.Security)
	}
	for _, code := range []string{"200", "400", "401", "413", "429"} {
		if op.Responses[code] == nil {
			t.Errorf("response %s is not documented", code)
		}
	}
	ref := op.RequestBody.Content["application/json"].Schema.Ref
	schema := doc.Components.Schemas[ref[strings.LastIndex(ref, "/")+1:]]
	for _, field := range []string{"text", "citations", "threshold"} {
		p, ok := schema.Properties[field]
		if !ok || (len(p.Examples) == 0 && p.Example == nil) {
			t.Errorf("request field %s: no example (%+v)", field, p)
		}
	}
}
