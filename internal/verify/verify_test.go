package verify_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/knowledge"
	"github.com/constraintlab/assistant/internal/sqlite"
	"github.com/constraintlab/assistant/internal/verify"
)

func corpus(t *testing.T) func([]assistant.Token) map[assistant.Token]assistant.Entity {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "v.db"), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := knowledge.LoadEmbedded(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	return func(tokens []assistant.Token) map[assistant.Token]assistant.Entity {
		m, err := db.Entities(context.Background(), tokens)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
}

func TestMetadataClaims(t *testing.T) {
	resolve := corpus(t)
	c := verify.New()
	cases := []struct{ text, want string }{
		{`Kingman published "The single server queue in heavy traffic" in 1961 [paper:kingman-1961-heavy-traffic].`, verify.Verified},
		{`Kingman published "The single server queue in heavy traffic" in 1973 [paper:kingman-1961-heavy-traffic].`, verify.Contradicted},
		{`Graham published "The single server queue in heavy traffic" in 1961 [paper:kingman-1961-heavy-traffic].`, verify.Contradicted},
		{`Kingman published "Marketing Myopia" in 1961 [paper:kingman-1961-heavy-traffic].`, verify.Contradicted},
		{`Jr. published "Time - The Next Source of Competitive Advantage" in 1988 [paper:stalk-1988-time-based-competition].`, verify.Verified},
		{`The Theory of Constraints was written by Goldratt and Cox in 1984 [framework:theory-of-constraints].`, verify.Verified},
		{`The Theory of Constraints was written by Porter in 1984 [framework:theory-of-constraints].`, verify.Contradicted},
		{`Kingman showed that waiting time explodes as utilization approaches one [paper:kingman-1961-heavy-traffic].`, verify.Verified},
		{`Kingman showed that customers prefer blue logos to red ones [paper:kingman-1961-heavy-traffic].`, verify.Unsupported},
		{`Waiting time explodes as utilization approaches one [paper:invented-2020-fake].`, verify.Unsupported},
	}
	for _, tc := range cases {
		var tokens []assistant.Token
		for _, cl := range verify.SplitClaims(tc.text) {
			tokens = append(tokens, cl.Citations...)
		}
		conf := c.Check(tc.text, resolve(tokens), nil)
		if conf.TotalClaims != 1 {
			t.Errorf("%q: %d claims", tc.text, conf.TotalClaims)
			continue
		}
		if got := conf.Verdicts[0]; got.Status != tc.want {
			t.Errorf("%q: %s (%s), want %s", tc.text, got.Status, got.Reason, tc.want)
		}
	}
}

func TestLevels(t *testing.T) {
	for _, tc := range []struct {
		score  float64
		claims int
		want   string
	}{{1, 3, "high"}, {0.8, 5, "high"}, {0.79, 5, "medium"}, {0.5, 2, "medium"}, {0.2, 5, "low"}, {0, 4, "none"}, {0, 0, "none"}} {
		if got := verify.Level(tc.score, tc.claims); got != tc.want {
			t.Errorf("Level(%v, %d) = %s, want %s", tc.score, tc.claims, got, tc.want)
		}
	}
}

func TestSplitClaims(t *testing.T) {
	text := "## The constraint\nYour bottleneck is the packing station [framework:theory-of-constraints].\n" +
		"- Measure throughput daily [framework:drum-buffer-rope] and lead time [paper:little-1961-queuing-formula].\n" +
		"What do you think?\nLet's talk.\nLittle published the proof in 1961.\nAsk the buyer \"what would change?\"\nMeasure it every week from now on."
	claims := verify.SplitClaims(text)
	var got []string
	for _, c := range claims {
		got = append(got, c.Text)
	}
	if len(claims) != 4 || len(claims[1].Citations) != 2 {
		t.Errorf("claims = %q", got)
	}
}

// TestInDomainDevSet holds the verifier to the bar of issue 4 on the
// shared development set.
func TestInDomainDevSet(t *testing.T) {
	f, err := os.Open("../../../shared/eval/claims_indomain_dev.jsonl")
	if err != nil {
		t.Skip("shared eval set not present:", err)
	}
	defer f.Close()
	rows, err := verify.ReadJSONL[verify.InDomainRow](f)
	if err != nil {
		t.Fatal(err)
	}
	res := verify.New().EvaluateInDomain(rows, corpus(t))
	t.Logf("in-domain dev: %+v", res)
	if res.Accuracy < 0.8 {
		t.Errorf("accuracy %.3f < 0.8", res.Accuracy)
	}
	// A claim with a wrong year or author is never verified.
	resolve := corpus(t)
	for _, r := range rows {
		if r.Expect == "verified" {
			continue
		}
		var tokens []assistant.Token
		for _, cl := range verify.SplitClaims(r.Text) {
			tokens = append(tokens, cl.Citations...)
		}
		if conf := verify.New().Check(r.Text, resolve(tokens), nil); conf.VerifiedClaims > 0 {
			t.Errorf("verified a wrong claim: %s", strings.TrimSpace(r.Text))
		}
	}
}

// TestEditedEntityIsCheckedAsEdited holds a claim against an entity, then
// against the same token with another summary and year: the evidence the
// checker remembers for a token must not outlive a change to the entity.
func TestEditedEntityIsCheckedAsEdited(t *testing.T) {
	c := verify.New()
	year := 2001
	e := assistant.Entity{Type: assistant.Framework, Slug: "edited-entity-check", Title: "Queue Discipline",
		Summary: "Capping the work in progress at each station shortens the time an order waits.", Year: &year}
	claim := "Capping the work in progress at each station shortens the time an order waits [framework:edited-entity-check]."
	check := func(e assistant.Entity) verify.Verdict {
		return c.Check(claim, map[assistant.Token]assistant.Entity{e.Token(): e}, nil).Verdicts[0]
	}
	if v := check(e); v.Status != verify.Verified {
		t.Fatalf("before the edit: %s (%s)", v.Status, v.Reason)
	}
	edited := e
	edited.Summary = "Hiring a second packer doubles the output of the packing bench."
	if v := check(edited); v.Status == verify.Verified {
		t.Fatalf("after the summary changed, the old summary still verified the claim: %+v", v)
	}
	if v := check(e); v.Status != verify.Verified {
		t.Fatalf("after the edit was undone: %s (%s)", v.Status, v.Reason)
	}
	year2 := 1990
	redated := e
	redated.Year = &year2
	dated := "Queue Discipline appeared in 2001 [framework:edited-entity-check]."
	v := c.Check(dated, map[assistant.Token]assistant.Entity{redated.Token(): redated}, nil).Verdicts[0]
	if v.Status != verify.Contradicted {
		t.Fatalf("a claim of the old year against the new year: %s (%s)", v.Status, v.Reason)
	}
}
