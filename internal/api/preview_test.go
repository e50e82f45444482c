package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/assistant"
)

type previewBody struct {
	Vertical  struct{ ID, Name string }
	Archetype struct{ ID, Name, Description string }
	Match     struct {
		Method       string
		Confidence   float64
		Alternatives []struct {
			ArchetypeID string `json:"archetype_id"`
			Name        string
			Score       float64
		}
	}
	FrameworkApplications []struct {
		Rank        int
		Token       string
		Title       string
		Application string
		FirstSteps  []string `json:"first_steps"`
		Metrics     []string
		Supporting  []string
	} `json:"framework_applications"`
	Citations []string
}

// newPreviewFixture is the fixture of the preview tests: newFixture,
// whose diagnoser is the one built from the embedded knowledge.
func newPreviewFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixture(t, 0, 0)
}

func (f *fixture) preview(t *testing.T, body string) (response, previewBody) {
	t.Helper()
	r := f.do(t, "POST", "/api/assistant/v1/preview", body)
	var p previewBody
	if r.Code == 200 {
		r.json(t, &p)
	}
	return r, p
}

func TestPreviewEveryPair(t *testing.T) {
	f := newPreviewFixture(t)
	titles := map[string]string{} // token -> title seen in previews
	for _, v := range assistant.VerticalIDs {
		for _, a := range assistant.ArchetypeIDs {
			r, p := f.preview(t, fmt.Sprintf(`{"vertical":%q,"archetype_id":%q}`, v, a))
			if r.Code != 200 {
				t.Fatalf("%s/%s: status %d: %s", v, a, r.Code, r.Body)
			}
			if cc := r.Header().Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control = %q, want no-store", cc)
			}
			if p.Vertical.ID != v || p.Vertical.Name == "" || p.Archetype.ID != a || p.Archetype.Description == "" {
				t.Errorf("%s/%s: vertical %+v archetype %+v", v, a, p.Vertical, p.Archetype)
			}
			if p.Match.Method != "archetype_id" || p.Match.Confidence != 1 || p.Match.Alternatives == nil || len(p.Match.Alternatives) != 0 {
				t.Errorf("%s/%s: match = %+v, want archetype_id, 1, []", v, a, p.Match)
			}
			if len(p.FrameworkApplications) < 3 {
				t.Fatalf("%s/%s: %d framework applications, want at least 3", v, a, len(p.FrameworkApplications))
			}
			var used []string
			for i, app := range p.FrameworkApplications {
				if app.Rank != i+1 || !strings.HasPrefix(app.Token, "framework:") || app.Title == "" || app.Application == "" ||
					len(app.FirstSteps) < 3 || len(app.Metrics) < 2 || len(app.Supporting) == 0 {
					t.Errorf("%s/%s: application %d is incomplete: %+v", v, a, i+1, app)
				}
				if strings.ContainsAny(app.Application+strings.Join(app.FirstSteps, "")+strings.Join(app.Metrics, ""), "{}") {
					t.Errorf("%s/%s: an unfilled placeholder in %+v", v, a, app)
				}
				titles[app.Token] = app.Title
				used = append(used, app.Token)
				for _, s := range app.Supporting {
					if !strings.HasPrefix(s, "paper:") && !strings.HasPrefix(s, "blog:") {
						t.Errorf("%s/%s: supporting %q is not a paper or essay", v, a, s)
					}
					used = append(used, s)
				}
			}
			for _, u := range used {
				if !slices.Contains(p.Citations, u) {
					t.Errorf("%s/%s: citations lack %s", v, a, u)
				}
				titles[u] += ""
			}
			if len(p.Citations) != len(uniq(used)) {
				t.Errorf("%s/%s: citations %v are not exactly the tokens used %v", v, a, p.Citations, uniq(used))
			}
		}
	}
	// Every token used anywhere resolves, with the same title.
	var all []string
	for tok := range titles {
		all = append(all, tok)
	}
	slices.Sort(all)
	for len(all) > 0 {
		n := min(len(all), 100)
		var refs []map[string]string
		for _, tok := range all[:n] {
			typ, slug, _ := strings.Cut(tok, ":")
			refs = append(refs, map[string]string{"type": typ, "slug": slug})
		}
		all = all[n:]
		body, _ := json.Marshal(map[string]any{"tokens": refs})
		r := f.do(t, "POST", "/api/assistant/v1/resolve", string(body))
		var res struct {
			Resolved   []struct{ Token, Title string }
			Unresolved []any
		}
		r.json(t, &res)
		if len(res.Unresolved) > 0 {
			t.Errorf("tokens do not resolve: %v", res.Unresolved)
		}
		for _, c := range res.Resolved {
			if titles[c.Token] != "" && titles[c.Token] != c.Title {
				t.Errorf("%s: preview title %q, resolve title %q", c.Token, titles[c.Token], c.Title)
			}
		}
	}
}

func uniq(s []string) []string {
	var out []string
	for _, x := range s {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func TestPreviewVerticalsDiffer(t *testing.T) {
	f := newPreviewFixture(t)
	for _, a := range assistant.ArchetypeIDs {
		_, saas := f.preview(t, fmt.Sprintf(`{"vertical":"saas","archetype_id":%q}`, a))
		_, mfg := f.preview(t, fmt.Sprintf(`{"vertical":"manufacturing","archetype_id":%q}`, a))
		if len(saas.FrameworkApplications) != len(mfg.FrameworkApplications) {
			t.Fatalf("%s: %d and %d applications", a, len(saas.FrameworkApplications), len(mfg.FrameworkApplications))
		}
		for i := range saas.FrameworkApplications {
			s, m := saas.FrameworkApplications[i], mfg.FrameworkApplications[i]
			// Not only a substituted word: some step and some metric of one
			// is absent from the other altogether.
			if !hasOwn(s.FirstSteps, m.FirstSteps) || !hasOwn(m.FirstSteps, s.FirstSteps) {
				t.Errorf("%s, %s: saas and manufacturing first steps do not differ in substance:\n%q\n%q", a, s.Token, s.FirstSteps, m.FirstSteps)
			}
			if !hasOwn(s.Metrics, m.Metrics) || !hasOwn(m.Metrics, s.Metrics) {
				t.Errorf("%s, %s: saas and manufacturing metrics do not differ in substance:\n%q\n%q", a, s.Token, s.Metrics, m.Metrics)
			}
		}
	}
}

// hasOwn reports whether a has an item sharing fewer than half its words
// with every item of b.
func hasOwn(a, b []string) bool {
	for _, x := range a {
		own := true
		for _, y := range b {
			if overlap(x, y) >= 0.5 {
				own = false
				break
			}
		}
		if own {
			return true
		}
	}
	return false
}

func overlap(x, y string) float64 {
	xs, ys := strings.Fields(strings.ToLower(x)), strings.Fields(strings.ToLower(y))
	n := 0
	for _, w := range xs {
		if slices.Contains(ys, w) {
			n++
		}
	}
	return float64(n) / float64(max(len(xs), 1))
}

func TestPreviewFreeText(t *testing.T) {
	f := newPreviewFixture(t)
	body := `{"vertical":"saas","free_text":"We can't close deals fast enough: prospects love the demo and then go quiet for months."}`
	r, p := f.preview(t, body)
	if r.Code != 200 {
		t.Fatalf("status %d: %s", r.Code, r.Body)
	}
	if p.Archetype.ID != "sales-conversion" || p.Match.Method != "free_text" {
		t.Errorf("archetype %s by %s, want sales-conversion by free_text", p.Archetype.ID, p.Match.Method)
	}
	if p.Match.Confidence <= 0 || p.Match.Confidence > 1 {
		t.Errorf("confidence = %v, want in (0, 1]", p.Match.Confidence)
	}
	alts := p.Match.Alternatives
	if len(alts) != 3 {
		t.Fatalf("alternatives = %+v, want 3", alts)
	}
	prev := p.Match.Confidence
	for _, a := range alts {
		if a.ArchetypeID == p.Archetype.ID || a.Name == "" || a.Score > prev {
			t.Errorf("alternatives not ranked below the match: %+v", alts)
		}
		prev = a.Score
	}
	if len(p.FrameworkApplications) < 3 {
		t.Errorf("%d framework applications", len(p.FrameworkApplications))
	}
	// The same request always gives the same answer.
	for range 3 {
		again := f.do(t, "POST", "/api/assistant/v1/preview", body)
		if again.Body.String() != r.Body.String() {
			t.Fatalf("a second identical request answered differently:\n%s\n%s", r.Body, again.Body)
		}
	}
}

func TestPreviewErrors(t *testing.T) {
	f := newPreviewFixture(t)
	long := strings.Repeat("our customers leave ", 250)
	tests := []struct {
		name, body string
		detail     []string // substrings of the problem's detail
	}{
		{"both", `{"vertical":"saas","archetype_id":"activation","free_text":"nobody finishes onboarding"}`, []string{"exactly one", "both"}},
		{"neither", `{"vertical":"saas"}`, []string{"exactly one", "neither"}},
		{"blank free text", `{"vertical":"saas","free_text":"   "}`, []string{"exactly one"}},
		{"unknown vertical", `{"vertical":"space-mining","archetype_id":"activation"}`, assistant.VerticalIDs},
		{"unknown vertical, free text", `{"vertical":"SaaS","free_text":"churn is high"}`, assistant.VerticalIDs},
		{"unknown archetype", `{"vertical":"saas","archetype_id":"growth"}`, assistant.ArchetypeIDs},
		{"missing vertical", `{"archetype_id":"activation"}`, []string{"vertical"}},
		{"free text too long", fmt.Sprintf(`{"vertical":"saas","free_text":%q}`, long), []string{"free_text"}},
		{"not an object", `["saas"]`, nil},
		{"not JSON", `{"vertical":`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.do(t, "POST", "/api/assistant/v1/preview", tt.body)
			p := assertProblem(t, r, 400)
			detail, _ := p["detail"].(string)
			for _, want := range tt.detail {
				if !strings.Contains(detail, want) {
					t.Errorf("detail %q does not mention %q", detail, want)
				}
			}
		})
	}
}

func TestPreviewInOpenAPI(t *testing.T) {
	f := newPreviewFixture(t)
	r := f.do(t, "GET", "/api/assistant/openapi.json", "")
	var doc struct {
		Paths map[string]map[string]struct {
			Tags []string
		}
	}
	r.json(t, &doc)
	op, ok := doc.Paths["/api/assistant/v1/preview"]["post"]
	if !ok || !slices.Contains(op.Tags, "Knowledge") {
		t.Errorf("the OpenAPI document lacks POST /api/assistant/v1/preview tagged Knowledge: %+v", doc.Paths["/api/assistant/v1/preview"])
	}
}

// TestPreviewWritesWhatHumaWouldEncode: POST /preview writes its match
// between remembered pieces of its (vertical, archetype) pair; for every
// pair of the catalog, and for free texts, the bytes must equal the typed
// answer encoded as huma encodes it, the first time and from memory.
func TestPreviewWritesWhatHumaWouldEncode(t *testing.T) {
	f := newPreviewFixture(t)
	ctx := context.Background()
	var bodies []string
	for _, v := range f.srv.Catalog.Verticals {
		for _, a := range f.srv.Catalog.Archetypes {
			b, _ := json.Marshal(map[string]string{"vertical": v.ID, "archetype_id": a.ID})
			bodies = append(bodies, string(b))
		}
		for _, text := range []string{
			"the packing bench cannot keep up in December",
			"customers cancel after the first month & we don't know why <really>",
			"cash runs out before clients pay their invoices",
			"\u2028 ünïcode \"quoted\" text",
		} {
			b, _ := json.Marshal(map[string]string{"vertical": v.ID, "free_text": text})
			bodies = append(bodies, string(b))
		}
	}
	for _, body := range bodies {
		want, err := f.srv.PreviewEncoded(ctx, body)
		if err != nil {
			t.Fatal(err)
		}
		for round := range 2 { // the second round is answered from remembered pieces
			r := f.do(t, "POST", "/api/assistant/v1/preview", body)
			if r.Code != 200 {
				t.Fatalf("%s: %d %s", body, r.Code, r.Body)
			}
			if !bytes.Equal(r.Body.Bytes(), want) {
				t.Fatalf("%s, round %d: the body differs from huma's encoding\n got %.600s\nwant %.600s", body, round, r.Body, want)
			}
			if ct := r.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
		}
	}
}

// TestPreviewShowsAnEditedTitle: the remembered pieces of a pair must not
// outlive an edit of an entity they show.
func TestPreviewShowsAnEditedTitle(t *testing.T) {
	f := newPreviewFixture(t)
	ctx := context.Background()
	body := `{"vertical":"saas","archetype_id":"` + f.srv.Catalog.Archetypes[0].ID + `"}`
	r, p := f.preview(t, body)
	if r.Code != 200 || len(p.FrameworkApplications) == 0 {
		t.Fatalf("%d %s", r.Code, r.Body)
	}
	tok, err := assistant.ParseToken(p.FrameworkApplications[0].Token)
	if err != nil {
		t.Fatal(err)
	}
	found, err := f.db.Entities(ctx, []assistant.Token{tok})
	if err != nil || len(found) != 1 {
		t.Fatal(found, err)
	}
	e := found[tok]
	e.Title = "A Title Edited After The First Preview"
	if _, err := f.db.SyncEntities(ctx, assistant.OriginImported, []assistant.Entity{e}); err != nil {
		t.Fatal(err)
	}
	if r, p = f.preview(t, body); r.Code != 200 || p.FrameworkApplications[0].Title != e.Title {
		t.Fatalf("after the edit: %d %s", r.Code, r.Body)
	}
}
