package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/constraintlab/assistant/internal/api"
	"github.com/constraintlab/assistant/internal/assistant"
)

// TestResolveWritesWhatHumaWouldEncode: POST /resolve writes its answer
// from remembered card JSON; for every entity of the knowledge base, and
// for tokens that do not resolve (with characters JSON may escape), the
// bytes must equal the typed answer encoded as huma encodes it.
func TestResolveWritesWhatHumaWouldEncode(t *testing.T) {
	f := newFixture(t, 0, 0)
	ctx := context.Background()
	all, err := f.db.AllEntities(ctx)
	if err != nil {
		t.Fatal(err)
	}
	type ref struct {
		Type string `json:"type"`
		Slug string `json:"slug"`
	}
	var batches [][]ref
	for i := 0; i < len(all); i += 97 {
		var b []ref
		for _, e := range all[i:min(i+97, len(all))] {
			b = append(b, ref{string(e.Type), e.Slug})
		}
		batches = append(batches, b)
	}
	batches = append(batches,
		[]ref{{"framework", "theory-of-constraints"}, {"framework", "theory-of-constraints"}, {"paper", "no-such-paper"}},
		[]ref{{"essay", "<b>&amp;</b>"}, {"framework", "Bad Slug"}, {"blog", "ünïcode-\u2028"}},
	)
	for i, b := range batches {
		body, _ := json.Marshal(map[string]any{"tokens": b})
		want, err := f.srv.ResolveEncoded(ctx, string(body))
		if err != nil {
			t.Fatal(err)
		}
		for round := range 2 { // the second round is answered from remembered cards
			r := f.do(t, "POST", "/api/assistant/v1/resolve", string(body))
			if r.Code != 200 {
				t.Fatalf("batch %d: %d %s", i, r.Code, r.Body)
			}
			if !bytes.Equal(r.Body.Bytes(), want) {
				t.Fatalf("batch %d, round %d: the body differs from huma's encoding\n got %.400s\nwant %.400s", i, round, r.Body, want)
			}
			if ct := r.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			if cl := r.Header().Get("Content-Length"); cl != strconv.Itoa(len(want)) {
				t.Errorf("Content-Length = %q, want %d", cl, len(want))
			}
		}
	}
}

// TestResolveShowsAnEditedEntity: a card remembered for a token must not
// outlive an edit of the entity.
func TestResolveShowsAnEditedEntity(t *testing.T) {
	f := newFixture(t, 0, 0)
	ctx := context.Background()
	e := assistant.Entity{Type: assistant.Framework, Slug: "edited-card", Title: "Edited Card",
		Summary: "The first summary of a framework made up for this test, long enough to be a summary of its kind."}
	body := `{"tokens":[{"type":"framework","slug":"edited-card"}]}`
	for _, summary := range []string{e.Summary, "The second summary, written after an edit of the same framework, which the card must now show."} {
		e.Summary = summary
		if _, err := f.db.SyncEntities(ctx, assistant.OriginImported, []assistant.Entity{e}); err != nil {
			t.Fatal(err)
		}
		r := f.do(t, "POST", "/api/assistant/v1/resolve", body)
		if r.Code != 200 || !strings.Contains(r.Body.String(), summary) {
			t.Fatalf("after setting the summary to %q: %d %s", summary, r.Code, r.Body)
		}
	}
}

// countingKnowledge counts the entity lookups that reach the store.
type countingKnowledge struct {
	assistant.KnowledgeStore
	lookups atomic.Int64
}

func (c *countingKnowledge) Entities(ctx context.Context, tokens []assistant.Token) (map[assistant.Token]assistant.Entity, error) {
	c.lookups.Add(1)
	return c.KnowledgeStore.Entities(ctx, tokens)
}

// TestResolveRemembersAnswers: a body answered before is answered from
// memory, with the same bytes and headers, without looking anything up;
// an invalid body is never remembered, and another body is looked up.
func TestResolveRemembersAnswers(t *testing.T) {
	f := newFixture(t, 0, 0)
	store := &countingKnowledge{KnowledgeStore: f.db}
	f.srv.Knowledge = store
	f.srv.Metrics = prometheus.NewRegistry()
	f.h, _ = f.srv.HandlerAndRoutes()
	body := `{"tokens":[{"type":"framework","slug":"okrs"},{"type":"paper","slug":"missing"}]}`
	first := f.do(t, "POST", "/api/assistant/v1/resolve", body)
	second := f.do(t, "POST", "/api/assistant/v1/resolve", body)
	if first.Code != 200 || second.Code != 200 || !bytes.Equal(first.Body.Bytes(), second.Body.Bytes()) {
		t.Fatalf("first %d %s\nsecond %d %s", first.Code, first.Body, second.Code, second.Body)
	}
	if n := store.lookups.Load(); n != 1 {
		t.Errorf("%d lookups for two identical requests, want 1", n)
	}
	for k := range first.Header() {
		if k != "X-Request-Id" && k != "Date" && first.Header().Get(k) != second.Header().Get(k) {
			t.Errorf("header %s: %q from the handler, %q from memory", k, first.Header().Get(k), second.Header().Get(k))
		}
	}
	if len(first.Header()) != len(second.Header()) {
		t.Errorf("headers from the handler %v, from memory %v", first.Header(), second.Header())
	}
	for range 2 {
		assertProblem(t, f.do(t, "POST", "/api/assistant/v1/resolve", `{"tokens":[]}`), 400)
	}
	// Another body is looked up (its token that did not resolve: a token
	// that resolved before is taken from tokenCards, below).
	if r := f.do(t, "POST", "/api/assistant/v1/resolve", `{"tokens":[{"type":"paper","slug":"missing"},{"type":"framework","slug":"okrs"}]}`); r.Code != 200 {
		t.Fatalf("another body: %d %s", r.Code, r.Body)
	}
	if n := store.lookups.Load(); n != 2 {
		t.Errorf("%d lookups after a new body, want 2", n)
	}
	// A new body of tokens that resolved before at this knowledge version
	// needs no lookup, and answers as huma would.
	again := `{"tokens":[{"type":"framework","slug":"okrs"},{"type":"blog","slug":"BAD"}]}`
	r := f.do(t, "POST", "/api/assistant/v1/resolve", again)
	if n := store.lookups.Load(); n != 2 {
		t.Errorf("%d lookups after a body of tokens resolved before, want 2", n)
	}
	if want, err := f.srv.ResolveEncoded(t.Context(), again); err != nil || r.Code != 200 || !bytes.Equal(r.Body.Bytes(), want) {
		t.Errorf("a body of remembered tokens: %d %s\nhuma: %s %v", r.Code, r.Body, want, err)
	}
}

// TestResolvePlainBodiesAnswerAsHuma: bodies of the plain shape are read
// without huma (resolvefast.go); every other body goes to huma. Each body
// below, valid or not, must get the status, headers that matter and bytes
// it gets from huma, which reads it when it is padded past the resolve
// memo's bound (trailing white space changes nothing in JSON).
func TestResolvePlainBodiesAnswerAsHuma(t *testing.T) {
	f := newFixture(t, 0, 0)
	hundred := make([]string, 0, 101)
	for i := range 101 {
		hundred = append(hundred, `{"type":"paper","slug":"p`+strconv.Itoa(i)+`"}`)
	}
	bodies := []string{
		// the plain shape, with its variations
		`{"tokens":[{"type":"framework","slug":"theory-of-constraints"}]}`,
		` { "tokens" : [ {"slug":"okrs" , "type":"framework"} ,{"type":"paper","slug":"missing"},` + "\n\t" + `{"type":"framework","slug":"okrs"}] } ` + "\r\n",
		`{"tokens":[{"type":"essay","slug":"<b>&amp;</b>"},{"type":"framework","slug":"Bad Slug"},{"type":"","slug":""}]}`,
		`{"tokens":[` + strings.Join(hundred[:100], ",") + `]}`,
		// left to huma: valid, but not the plain shape
		`{"tokens":[{"type":"framework","slug":"okrs","x":1}],"extra":true}`,
		`{"tokens":[{"type":"framework","slug":"ok\u0072s"}]}`,
		`{"tokens":[{"type":"framework","slug":"ok\/rs"}]}`,
		`{"tokens":[{"type":"blog","slug":"ünïcode"}]}`,
		`{"Tokens":[{"Type":"framework","Slug":"okrs"}]}`,
		`{"tokens":[{"type":"framework","slug":"okrs","slug":"swot-analysis"}]}`,
		// errors, all left to huma
		`{"tokens":[]}`,
		`{"tokens":[` + strings.Join(hundred, ",") + `]}`,
		`{"tokens":[{"type":"framework"}]}`,
		`{"tokens":[{"type":1,"slug":"okrs"}]}`,
		`{"tokens":[{"type":"framework","slug":"okrs"},]}`,
		`{"tokens":[{"type":"framework","slug":"okrs"}]`,
		`{"tokens":[{"type":"framework","slug":"okrs"}]}}`,
		`{"tokens":[{"type":"framework","slug":"okrs"}]} x`,
		`{"tokens":{}}`,
		`{"tokens":null}`,
		`{}`,
		`[]`,
		`null`,
		`{"tokens":[{"type":"framework","slug":"ok` + "\x01" + `rs"}]}`,
	}
	for i, body := range bodies {
		padded := body + strings.Repeat(" ", 17<<10)
		got := f.do(t, "POST", "/api/assistant/v1/resolve", body)
		want := f.do(t, "POST", "/api/assistant/v1/resolve", padded)
		if got.Code != want.Code || !bytes.Equal(withoutRequestID(t, got.Body.Bytes()), withoutRequestID(t, want.Body.Bytes())) {
			t.Errorf("body %d %.80q: %d %s\nhuma: %d %s", i, body, got.Code, withoutRequestID(t, got.Body.Bytes()), want.Code, withoutRequestID(t, want.Body.Bytes()))
		}
		if got.Code == 200 && !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) {
			t.Errorf("body %d: the answers differ", i)
		}
		headers := []string{"Content-Type", "Cache-Control", "Access-Control-Allow-Origin"}
		if got.Code == 200 {
			headers = append(headers, "Content-Length")
		}
		for _, h := range headers {
			if got.Header().Get(h) != want.Header().Get(h) {
				t.Errorf("body %d: %s %q, from huma %q", i, h, got.Header().Get(h), want.Header().Get(h))
			}
		}
	}
}

// withoutRequestID returns a problem document without its request id, and
// with the white space that pads a body (and the ellipsis of a cut one)
// trimmed from the body it quotes;
// any other document as it is.
func withoutRequestID(t *testing.T, doc []byte) []byte {
	var p map[string]any
	if json.Unmarshal(doc, &p) != nil || p["request_id"] == nil {
		return doc
	}
	delete(p, "request_id")
	if errs, ok := p["errors"].([]any); ok {
		for _, e := range errs {
			if e, ok := e.(map[string]any); ok {
				if v, ok := e["value"].(string); ok {
					e["value"] = strings.TrimRight(strings.TrimSuffix(v, "…"), " ") // a long value is cut
				}
			}
		}
	}
	out, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestParseResolveBody: the shapes the fast reader takes and leaves.
func TestParseResolveBody(t *testing.T) {
	for body, want := range map[string]int{
		`{"tokens":[{"type":"framework","slug":"okrs"}]}`:                             1,
		` {"tokens":[{"slug":"a","type":"paper"},{"type":"blog","slug":"b"}]}` + "\n": 2,
		`{"tokens":[]}`: -1,
		`{"tokens":[{"type":"framework","slug":"o\"k"}]}`:                -1,
		`{"tokens":[{"type":"framework"}]}`:                              -1,
		`{"tokens":[{"type":"framework","slug":"okrs","type":"paper"}]}`: -1,
		`{"tokens":[{"type":"framework","slug":"okrs"}],"tokens":[]}`:    -1,
		`{"tokens":[{"type":"framework","slug":"okrs"}]`:                 -1,
		``: -1,
	} {
		refs, ok := api.ParseResolveBody([]byte(body))
		if got := len(refs); ok != (want >= 0) || ok && got != want {
			t.Errorf("%q: %d tokens, %v; want %d", body, got, ok, want)
		}
	}
}
