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
	if r := f.do(t, "POST", "/api/assistant/v1/resolve", `{"tokens":[{"type":"framework","slug":"okrs"}]}`); r.Code != 200 {
		t.Fatalf("another body: %d %s", r.Code, r.Body)
	}
	if n := store.lookups.Load(); n != 2 {
		t.Errorf("%d lookups after a new body, want 2", n)
	}
}
