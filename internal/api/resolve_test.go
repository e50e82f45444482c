package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

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
