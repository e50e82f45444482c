package diagnose_test

import (
	"context"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/diagnose"
	"github.com/constraintlab/assistant/internal/knowledge"
)

func embeddedEntities(t testing.TB) []assistant.Entity {
	t.Helper()
	files, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]assistant.Entity, len(files))
	for i, f := range files {
		out[i] = f.Entity
	}
	return out
}

func newDiagnoser(t testing.TB) *diagnose.Diagnoser {
	t.Helper()
	cat, err := diagnose.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	d, err := diagnose.New(cat, embeddedEntities(t))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestContent(t *testing.T) {
	c, err := diagnose.LoadContent()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range assistant.ArchetypeIDs {
		a := c.Archetypes[id]
		if len(a.Symptoms) < 20 || len(a.Applications) < 3 || len(a.Metrics) < 3 {
			t.Errorf("%s: %d symptoms, %d applications, %d metrics", id, len(a.Symptoms), len(a.Applications), len(a.Metrics))
		}
	}
	for _, id := range assistant.VerticalIDs {
		v := c.Verticals[id]
		if len(v.KeyMetrics) < 3 || len(v.FirstMoves) < 2 || len(v.Archetypes) != len(assistant.ArchetypeIDs) {
			t.Errorf("%s: %d key metrics, %d first moves, %d archetypes", id, len(v.KeyMetrics), len(v.FirstMoves), len(v.Archetypes))
		}
	}
}

func TestNewChecksTokens(t *testing.T) {
	cat, err := diagnose.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	var without []assistant.Entity
	for _, e := range embeddedEntities(t) {
		if e.Slug != "theory-of-constraints" {
			without = append(without, e)
		}
	}
	_, err = diagnose.New(cat, without)
	if err == nil || !strings.Contains(err.Error(), "theory-of-constraints") {
		t.Errorf("New without a cited framework: error %v, want one naming it", err)
	}
	if _, err := diagnose.New(nil, embeddedEntities(t)); err == nil {
		t.Error("New without a catalog: no error")
	}
}

func TestDiagnose(t *testing.T) {
	d := newDiagnoser(t)
	tests := []struct{ vertical, text, want string }{
		{"saas", "Our churn doubled this year and accounts cancel at renewal.", "retention-churn"},
		{"hospitality", "We are busy every night but after food and wages there is no profit left.", "pricing-margin"},
		{"manufacturing", "The welding cell is booked solid and orders wait six weeks for it.", "delivery-capacity"},
		{"agency", "I have to sign off every design and every invoice myself.", "founder-bottleneck"},
		{"", "Nobody visits the website and we get two enquiries a month.", "lead-generation"},
		{"ecommerce", "Customers email us all day asking where their parcel is.", "support-load"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			g, err := d.Diagnose(context.Background(), tt.text, tt.vertical)
			if err != nil {
				t.Fatal(err)
			}
			if g.Matches[0].ArchetypeID != tt.want {
				t.Errorf("first match %s, want %s (%s)", g.Matches[0].ArchetypeID, tt.want, g.Summary())
			}
			if len(g.Matches) != len(assistant.ArchetypeIDs) || g.Confidence != g.Matches[0].Probability || g.Matches[0].Name == "" {
				t.Errorf("diagnosis %+v", g)
			}
			sum := 0.0
			for i, m := range g.Matches {
				sum += m.Probability
				if i > 0 && m.Probability > g.Matches[i-1].Probability {
					t.Errorf("matches not ranked: %s", g.Summary())
				}
			}
			if math.Abs(sum-1) > 0.01 {
				t.Errorf("probabilities sum to %v", sum)
			}
			again, _ := d.Diagnose(context.Background(), tt.text, tt.vertical)
			if again.Summary() != g.Summary() || again.Confidence != g.Confidence {
				t.Errorf("a second diagnosis differs: %s / %s", g.Summary(), again.Summary())
			}
		})
	}
}

func TestDiagnoseErrors(t *testing.T) {
	d := newDiagnoser(t)
	tests := []struct{ name, text, vertical, msg string }{
		{"empty", "  ", "saas", "empty"},
		{"too long", strings.Repeat("a", diagnose.MaxTextLength+1), "saas", "longer"},
		{"unknown vertical", "churn is high", "retail-banking", "saas, ecommerce"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := d.Diagnose(context.Background(), tt.text, tt.vertical)
			if assistant.ErrorCode(err) != assistant.EInvalid || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %v, want invalid mentioning %q", err, tt.msg)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Diagnose(ctx, "churn", "saas"); err == nil {
		t.Error("a cancelled context: no error")
	}
}

func TestPreview(t *testing.T) {
	d := newDiagnoser(t)
	ctx := context.Background()
	for _, v := range assistant.VerticalIDs {
		for _, a := range assistant.ArchetypeIDs {
			p, err := d.Preview(ctx, diagnose.PreviewRequest{Vertical: v, ArchetypeID: a})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Applications) < 3 || p.Method != diagnose.MethodArchetypeID || p.Confidence != 1 || len(p.Citations) < 4 {
				t.Errorf("%s/%s: %d applications, method %s, confidence %v, %d citations", v, a, len(p.Applications), p.Method, p.Confidence, len(p.Citations))
			}
		}
	}
	// saas and manufacturing differ in the steps and metrics themselves.
	for _, a := range assistant.ArchetypeIDs {
		s, _ := d.Preview(ctx, diagnose.PreviewRequest{Vertical: "saas", ArchetypeID: a})
		m, _ := d.Preview(ctx, diagnose.PreviewRequest{Vertical: "manufacturing", ArchetypeID: a})
		for i := range s.Applications {
			if disjoint(s.Applications[i].FirstSteps, m.Applications[i].FirstSteps) == 0 || disjoint(s.Applications[i].Metrics, m.Applications[i].Metrics) == 0 {
				t.Errorf("%s, application %d: saas and manufacturing share every step or metric", a, i+1)
			}
		}
	}
	errs := []struct {
		name string
		req  diagnose.PreviewRequest
		msg  string
	}{
		{"both", diagnose.PreviewRequest{Vertical: "saas", ArchetypeID: "activation", FreeText: "x"}, "both"},
		{"neither", diagnose.PreviewRequest{Vertical: "saas"}, "neither"},
		{"unknown vertical", diagnose.PreviewRequest{Vertical: "x", ArchetypeID: "activation"}, strings.Join(assistant.VerticalIDs, ", ")},
		{"unknown archetype", diagnose.PreviewRequest{Vertical: "saas", ArchetypeID: "x"}, strings.Join(assistant.ArchetypeIDs, ", ")},
	}
	for _, tt := range errs {
		_, err := d.Preview(ctx, tt.req)
		if assistant.ErrorCode(err) != assistant.EInvalid || !strings.Contains(assistant.ErrorMessage(err), tt.msg) {
			t.Errorf("%s: error %v, want invalid mentioning %q", tt.name, err, tt.msg)
		}
	}
}

// disjoint counts the items of a that are not in b.
func disjoint(a, b []string) int {
	n := 0
	for _, x := range a {
		found := false
		for _, y := range b {
			found = found || x == y
		}
		if !found {
			n++
		}
	}
	return n
}

func evaluate(t *testing.T, d *diagnose.Diagnoser, name string) diagnose.ArchetypeReport {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cases, err := diagnose.ReadArchetypeCases(f)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := diagnose.EvaluateArchetypes(context.Background(), d, cases)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestDevSetBars holds the matcher to the bars of issue 6 on the
// development sets.
func TestDevSetBars(t *testing.T) {
	d := newDiagnoser(t)
	tests := []struct {
		file       string
		top1, top3 float64
	}{
		{"testdata/archetype_dev.tsv", 0.9, 0.95},
		{"testdata/archetype_dev_hard.tsv", 0.75, 0.9},
	}
	for _, tt := range tests {
		rep := evaluate(t, d, tt.file)
		t.Logf("%s: n=%d top1=%.3f top3=%.3f", tt.file, rep.N, rep.Top1, rep.Top3)
		if rep.N != 28 || rep.Top1 < tt.top1 || rep.Top3 < tt.top3 {
			t.Errorf("%s: n=%d top1=%.3f top3=%.3f, want n=28 top1>=%.2f top3>=%.2f", tt.file, rep.N, rep.Top1, rep.Top3, tt.top1, tt.top3)
		}
	}
}

func BenchmarkDiagnose(b *testing.B) {
	d := newDiagnoser(b)
	ctx := context.Background()
	for b.Loop() {
		if _, err := d.Diagnose(ctx, "We get plenty of demos but prospects go quiet after the proposal and deals slip every quarter.", "saas"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPreviewFreeText(b *testing.B) {
	d := newDiagnoser(b)
	ctx := context.Background()
	req := diagnose.PreviewRequest{Vertical: "manufacturing", FreeText: "Orders wait weeks in front of the paint line and lead times keep growing."}
	for b.Loop() {
		if _, err := d.Preview(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// TestApplicationsAreTheCallers checks that the applications, composed
// once per archetype and vertical, reach each caller as its own copy.
func TestApplicationsAreTheCallers(t *testing.T) {
	d := newDiagnoser(t)
	first, citations, err := d.Applications("saas", "activation")
	if err != nil {
		t.Fatal(err)
	}
	want := first[0].FirstSteps[0]
	first[0].FirstSteps[0], first[0].Metrics[0], citations[0] = "changed", "changed", assistant.Token{}
	again, againCitations, _ := d.Applications("saas", "activation")
	if again[0].FirstSteps[0] != want || again[0].Metrics[0] == "changed" || againCitations[0] == (assistant.Token{}) {
		t.Errorf("a caller's change reached the next caller: %+v %v", again[0], againCitations)
	}
}

// TestConstructionVertical holds the construction vertical (issue 25) to
// descriptions in the trades' own words (testdata/construction.tsv, one
// per archetype, written with the vertical's content and scored once on
// first use: top-1 0.93, top-3 1.00), and checks that its preview speaks
// the trade's language. Top-3 may miss one description of the fourteen:
// two sit third by a few thousandths of probability (a roof-inspection
// package "hardly anyone has bought" is product-market fit 0.038 against
// delivery capacity's 0.040 once the uneven-demand card, whose bookings
// the matcher reads as buying, is in the knowledge base).
func TestConstructionVertical(t *testing.T) {
	d := newDiagnoser(t)
	rep := evaluate(t, d, "testdata/construction.tsv")
	if rep.N != 14 || rep.Top1 < 0.85 || rep.Top3 < 0.9 {
		t.Errorf("construction.tsv: n=%d top1=%.3f top3=%.3f, want n=14 top1>=0.85 top3>=0.9", rep.N, rep.Top1, rep.Top3)
	}
	p, err := d.Preview(context.Background(), diagnose.PreviewRequest{Vertical: "construction", ArchetypeID: "delivery-capacity"})
	if err != nil {
		t.Fatal(err)
	}
	text := p.Vertical.Name
	for _, a := range p.Applications {
		text += " " + a.Application + " " + strings.Join(a.FirstSteps, " ") + " " + strings.Join(a.Metrics, " ")
	}
	for _, word := range []string{"Construction", "crew", "job", "lookahead", "crew capacity"} {
		if !strings.Contains(text, word) {
			t.Errorf("the construction preview lacks %q", word)
		}
	}
}
