package api_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/textproc"
	"github.com/constraintlab/assistant/internal/verify"
)

// evalSets are the in-domain evaluation sets whose verdicts carry evidence:
// the corpus dev set of the repository and the in-domain set of the
// contract (skipped when shared/ is not beside the repository).
var evalSets = []string{"../../eval/claims_corpus.jsonl", "../../../shared/eval/claims_indomain_dev.jsonl"}

// TestEvidenceSelectsPassageInCard (issue 24): for every row of the
// evaluation sets, every verdict with evidence names a field of the card
// POST /resolve returns for the evidence's token and UTF-16 offsets that
// select exactly the evidence's quote from that field's text; the snippet
// is that passage (cut at 280 bytes), or the metadata line a title, year
// or author is read from.
func TestEvidenceSelectsPassageInCard(t *testing.T) {
	f := newFixture(t, 0, 0)
	ctx := context.Background()
	checker := verify.New()
	cards := map[string]map[string]any{}
	var located, outsideCard int
	for _, path := range evalSets {
		data, err := os.ReadFile(path)
		if os.IsNotExist(err) {
			t.Logf("%s: not found, skipped", path)
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		rows, err := verify.ReadJSONL[verify.InDomainRow](strings.NewReader(string(data)))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			var tokens []assistant.Token
			for _, cl := range verify.SplitClaims(r.Text) {
				tokens = append(tokens, cl.Citations...)
			}
			entities, err := f.db.Entities(ctx, tokens)
			if err != nil {
				t.Fatal(err)
			}
			conf := checker.Check(r.Text, entities, nil)
			for _, v := range conf.Verdicts {
				ev := v.Evidence
				if ev == nil {
					continue
				}
				token := ev.Type + ":" + ev.Slug
				card, ok := cards[token]
				if !ok {
					card = resolveCard(t, f, token)
					cards[token] = card
				}
				text, inCard := cardField(card, ev.Field)
				if !inCard {
					// when_to_use and pitfalls: fields of the entity the
					// card does not carry.
					e := entities[assistant.Token{Type: assistant.EntityType(ev.Type), Slug: ev.Slug}]
					if !strings.HasPrefix(ev.Field, "when_to_use[") && !strings.HasPrefix(ev.Field, "pitfalls[") {
						t.Errorf("%s: field %q is not in the card of %s", v.Claim, ev.Field, token)
						continue
					}
					text = verify.FieldText(e, ev.Field)
					outsideCard++
				}
				got, ok := verify.UTF16Slice(text, ev.Start, ev.End)
				if !ok || got != ev.Quote || ev.Quote == "" {
					t.Errorf("%s: %s[%d:%d] of %s selects %q, quote %q", v.Claim, ev.Field, ev.Start, ev.End, token, got, ev.Quote)
					continue
				}
				// The metadata line ("Title" by A, published in Y) is made
				// of several fields: it is located at the one the verdict
				// rests on and stays the snippet.
				metadata := slices.Contains([]string{"title", "year", "authors[0]"}, ev.Field) && strings.Contains(ev.Snippet, ev.Quote)
				if !metadata && ev.Snippet != textproc.Cut(ev.Quote, 280) {
					t.Errorf("%s: snippet %q is not the quote %q", v.Claim, ev.Snippet, ev.Quote)
				}
				located++
			}
		}
	}
	t.Logf("%d evidences located, %d of them in when_to_use or pitfalls", located, outsideCard)
	if located < 1000 {
		t.Errorf("only %d evidences located", located)
	}
}

// resolveCard is the card POST /resolve returns for token, as JSON.
func resolveCard(t *testing.T, f *fixture, token string) map[string]any {
	t.Helper()
	r := f.do(t, "POST", "/api/assistant/v1/resolve", tokensBody(token))
	var b struct{ Resolved []map[string]any }
	r.json(t, &b)
	if len(b.Resolved) != 1 {
		t.Fatalf("resolve %s: %s", token, r.Body)
	}
	return b.Resolved[0]
}

// cardField is the text of a field of a card as a client reads it from
// the JSON: a string, an item of a list of strings ("key_ideas[2]") or the
// year in decimal.
func cardField(card map[string]any, field string) (string, bool) {
	name, index, listed := strings.Cut(strings.TrimSuffix(field, "]"), "[")
	v, ok := card[name]
	if !ok {
		return "", false
	}
	if listed {
		i, err := strconv.Atoi(index)
		list, isList := v.([]any)
		if err != nil || !isList || i < 0 || i >= len(list) {
			return "", false
		}
		v = list[i]
	}
	switch x := v.(type) {
	case string:
		return x, true
	case float64:
		return json.Number(strconv.FormatFloat(x, 'f', -1, 64)).String(), true
	}
	return "", false
}
