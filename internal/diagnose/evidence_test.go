package diagnose_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/diagnose"
	"github.com/constraintlab/assistant/internal/verify"
)

// supportBar is the verifier's score a supporting work must give one
// sentence of an application. It is the verifier's own bar for a verified
// claim. The evidence sentences of the catalog clear it with room to spare
// (the weakest scored 0.62 when written) and the decorative citations that
// were pruned stay far below it (0.28 to 0.32), so a small change of the
// scorer does not flip the outcome either way.
const supportBar = verify.DefaultThreshold

// applicationText is what a preview shows of an application: its text and
// its first steps, one claim each.
func applicationText(app diagnose.Application) string {
	var b strings.Builder
	b.WriteString(app.Application)
	for _, s := range app.FirstSteps {
		b.WriteString("\n- " + s)
	}
	return b.String()
}

// support is the best score the work gives any sentence of text, and that
// sentence.
func support(text string, work assistant.Entity) (float64, string) {
	conf := verify.New().Verify(context.Background(), text, nil, []assistant.Entity{work}, verify.UseDefault)
	best, claim := 0.0, ""
	for _, v := range conf.Verdicts {
		if v.Status != verify.Contradicted && v.Score > best {
			best, claim = v.Score, v.Claim
		}
	}
	return best, claim
}

// TestSupportingEvidence holds every application of every archetype, in
// neutral words and in each vertical's, to its supporting citations: each
// work it names as supporting must support one of its sentences, as the
// claim verifier judges, and it must name at least one. A citation that
// fails is decorative: /preview would present it as evidence.
func TestSupportingEvidence(t *testing.T) {
	d := newDiagnoser(t)
	works := map[assistant.Token]assistant.Entity{}
	for _, e := range embeddedEntities(t) {
		works[e.Token()] = e
	}
	checked := map[string]bool{} // text + token, checked once
	for _, vertical := range append([]string{""}, assistant.VerticalIDs...) {
		for _, id := range assistant.ArchetypeIDs {
			apps, _, err := d.Applications(vertical, id)
			if err != nil {
				t.Fatal(err)
			}
			for _, app := range apps {
				where := fmt.Sprintf("%s/%s (vertical %q)", id, app.Framework.Slug, vertical)
				if len(app.Supporting) == 0 {
					t.Errorf("%s names no supporting work", where)
				}
				text := applicationText(app)
				for _, tok := range app.Supporting {
					key := text + "\x00" + tok.String()
					if checked[key] {
						continue
					}
					checked[key] = true
					if score, best := support(text, works[tok]); score < supportBar {
						t.Errorf("%s: %s does not support it (best %.2f: %q)", where, tok, score, best)
					}
				}
			}
		}
	}
}

// TestSupportingEvidenceRejectsDecoration puts back citations that were
// pruned as decorative (issue 25): the check must refuse each.
func TestSupportingEvidenceRejectsDecoration(t *testing.T) {
	d := newDiagnoser(t)
	works := map[string]assistant.Entity{}
	for _, e := range embeddedEntities(t) {
		works[e.Token().String()] = e
	}
	for _, c := range []struct{ archetype, framework, work string }{
		{"delivery-capacity", "critical-chain", "paper:tuckman-1965-small-groups"},
		{"lead-generation", "predictable-revenue", "paper:spence-1973-job-market-signaling"},
		{"sales-conversion", "sandler-selling-system", "paper:huber-payne-puto-1982-decoy"},
	} {
		apps, _, err := d.Applications("", c.archetype)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, app := range apps {
			if app.Framework.Slug != c.framework {
				continue
			}
			found = true
			if score, best := support(applicationText(app), works[c.work]); score >= supportBar {
				t.Errorf("%s/%s: decorative %s passes (%.2f: %q)", c.archetype, c.framework, c.work, score, best)
			}
		}
		if !found {
			t.Errorf("%s has no %s application to test", c.archetype, c.framework)
		}
	}
}
