package chat_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/chat"
	"github.com/constraintlab/assistant/internal/diagnose"
	"github.com/constraintlab/assistant/internal/knowledge"
	"github.com/constraintlab/assistant/internal/llm/builtin"
	"github.com/constraintlab/assistant/internal/sqlite"
	"github.com/constraintlab/assistant/internal/textproc"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// fullService is the service as serve wires it: builtin model and the
// constraint diagnosis.
func fullService(t *testing.T) (*chat.Service, *sqlite.DB) { return fullServiceTB(t) }

func fullServiceTB(t testing.TB) (*chat.Service, *sqlite.DB) {
	t.Helper()
	s, _, db := newService(t, builtin.New(), nil)
	cat, err := diagnose.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	d, err := diagnose.Load(context.Background(), cat, db)
	if err != nil {
		t.Fatal(err)
	}
	s.Diagnoser = chat.NewDiagnosisAdapter(d)
	return s, db
}

// rubricCases are questions as users ask them, each with the archetypes
// an answer's citations should serve.
var rubricCases = []struct {
	mode, question string
	archetypes     []string
}{
	{"operator", "We have a two-month backlog of custom orders and the workshop runs flat out every day.", []string{"delivery-capacity"}},
	{"operator", "Half of the jobs we deliver come back for corrections and the team spends Fridays redoing work.", []string{"quality-rework"}},
	{"operator", "Everything needs my sign-off and I work eighty hours a week while the team waits.", []string{"founder-bottleneck"}},
	{"operator", "We are profitable on paper but keep running out of cash before payroll.", []string{"cash-flow"}},
	{"operator", "We sell ten different services to five kinds of clients and nobody can explain what we are known for.", []string{"strategic-focus"}},
	{"operator", "Our subscribers cancel after two or three months and we only find out when the payment fails.", []string{"retention-churn"}},
	{"operator", "Big discounts close most of our deals and margins keep shrinking.", []string{"pricing-margin"}},
	{"customer", "How do I run a first call with a hospital buyer who already has a vendor?", []string{"sales-conversion", "lead-generation"}},
	{"customer", "The prospect says we are too expensive compared with the cheaper tool they use today.", []string{"pricing-margin", "sales-conversion"}},
	{"customer", "What should I ask a logistics manager to find out whether our routing software is worth it to them?", []string{"sales-conversion", "product-market-fit", "lead-generation"}},
	{"customer", "Our deals stall after the demo and the champion stops answering emails.", []string{"sales-conversion"}},
	{"customer", "How do I pitch an annual plan to a customer who has only ever paid monthly?", []string{"pricing-margin", "expansion", "sales-conversion"}},
	{"support", "Customers keep opening tickets about the same invoice error every month.", []string{"support-load", "quality-rework"}},
	{"support", "Our response times doubled since we launched the new plan and agents are burning out.", []string{"support-load"}},
	{"support", "New users get stuck during setup and email us instead of finishing it.", []string{"activation", "support-load"}},
	{"support", "Deliveries keep arriving damaged and customers call to complain.", []string{"quality-rework", "support-load"}},
	{"success", "Our biggest client logs in less every month and renewal is in ninety days.", []string{"retention-churn", "expansion"}},
	{"success", "Customers sign up but never invite their team, so they never see the value.", []string{"activation", "retention-churn"}},
	{"success", "How do I get existing customers to buy the premium add-on?", []string{"expansion"}},
	{"success", "A school that bought our courses uses only one of them; how do I grow the account?", []string{"expansion", "activation"}},
	{"success", "Restaurants that try our booking tool stop using it after the first busy weekend.", []string{"retention-churn", "activation"}},
	{"operator", "Nobody good applies to our job ads and the last two hires left within three months.", []string{"hiring-talent"}},
}

// nothingClose opens an answer whose cited sentences hardly address the
// question: what follows is the nearest the knowledge base has.
const nothingClose = "The knowledge base holds nothing that speaks closely to this question; the nearest it has:"

// TestUnaddressedQuestionGetsTheNearestInFull: when the sentences found
// take up hardly any of the question's words, the answer says so first,
// then gives the nearest knowledge in the persona's sections (not one
// sentence, which readers took for a refusal), ends with the question
// that would settle it, and is low.
func TestUnaddressedQuestionGetsTheNearestInFull(t *testing.T) {
	s, db := fullService(t)
	r, _, err := s.Run(context.Background(), chat.Request{Message: "Shrink across our 4 stores went from 1.2% to 2.9% of sales in a year. Is that theft or something else, and how would I even find out?", Mode: "operator", Vertical: "retail"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkResponse(t, db, r)
	if !strings.HasPrefix(r.Response, nothingClose) {
		t.Fatalf("the answer does not open by saying nothing speaks closely to the question:\n%s", r.Response)
	}
	if n := len(tokensOf(r.Response)); n < 2 {
		t.Errorf("%d citations: want the nearest knowledge in full, not one sentence", n)
	}
	if !strings.Contains(r.Response, "\n## What would settle it\n- ") {
		t.Errorf("no question that would settle it:\n%s", r.Response)
	}
	if r.Confidence.Level != "low" {
		t.Errorf("confidence %s, want low", r.Confidence.Level)
	}
}

// emptySection is a heading followed by nothing but another heading.
var emptySection = regexp.MustCompile(`(?m)^## [^\n]*\n\s*## `)

// TestRubric holds builtin answers to a floor: each takes up the
// question's words, cites knowledge that fits the situation, leaves no
// section empty, and carries a confidence above none. (Under the
// evidence-first rule a section the knowledge read cannot fill is left
// out, so steps and measures are no longer promised for every question.)
func TestRubric(t *testing.T) {
	s, db := fullService(t)
	misses := 0
	defer func() {
		// The knowledge base does not yet fit every situation (today: a
		// crowded service line, doubled response times, one more); at most
		// one case in six may cite nothing that serves it, or say that the
		// knowledge does not cover it.
		if misses*6 > len(rubricCases) {
			t.Errorf("%d of %d answers cite nothing that fits their situation", misses, len(rubricCases))
		}
	}()
	for _, c := range rubricCases {
		t.Run(c.mode+"/"+c.question[:24], func(t *testing.T) {
			r, _, err := s.Run(context.Background(), chat.Request{Message: c.question, Mode: c.mode}, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkResponse(t, db, r)
			if strings.HasPrefix(r.Response, "## What the knowledge base covers") || strings.HasPrefix(r.Response, nothingClose) {
				// The knowledge does not address it: said plainly, at low.
				if r.Confidence.Level != "low" {
					t.Errorf("a nearest-knowledge answer at %s", r.Confidence.Level)
				}
				misses++
				return
			}
			// In its own terms: the answer takes up the question's words,
			// or the concepts the search vocabulary relates them to
			// ("client" as "customer"), as the confidence counts them.
			answer := textproc.TermSet(r.Response)
			related := knowledge.DefaultVocabulary().Related(c.question)
			shared := 0
			for term := range textproc.TermSet(c.question) {
				if answer[term] || slices.ContainsFunc(related[term], func(phrase []string) bool {
					return !slices.ContainsFunc(phrase, func(st string) bool { return !answer[st] })
				}) {
					shared++
				}
			}
			if shared < 2 {
				t.Errorf("the answer shares only %d words with the question", shared)
			}
			// At least two cited entities that fit.
			var toks []assistant.Token
			seen := map[string]bool{}
			for _, tok := range tokensOf(r.Response) {
				if !seen[tok] {
					seen[tok] = true
					pt, _ := assistant.ParseToken(tok)
					toks = append(toks, pt)
				}
			}
			found, _ := db.Entities(context.Background(), toks)
			fitting := 0
			for _, e := range found {
				for _, a := range e.Archetypes {
					if slices.Contains(c.archetypes, a) {
						fitting++
						break
					}
				}
			}
			if fitting < 1 {
				t.Logf("none of %d cited entities fits %v: %v", len(found), c.archetypes, tokensOf(r.Response))
				misses++
			}
			if emptySection.MatchString(r.Response + "\n## ") {
				t.Errorf("an empty section:\n%s", r.Response)
			}
			if r.Confidence.TotalClaims == 0 || r.Confidence.Level == "none" {
				t.Errorf("confidence %+v", r.Confidence)
			}
		})
	}
}

// TestGolden keeps one answer per mode from drifting unnoticed; run with
// -update after a deliberate change and review the diff.
func TestGolden(t *testing.T) {
	s, _ := fullService(t)
	questions := map[string]string{
		"operator": "Our packing station cannot keep up and everything downstream waits for it.",
		"customer": "A prospect says our onboarding package costs too much. How do I respond?",
		"support":  "Customers report that password reset emails never arrive.",
		"success":  "Our largest account uses only one feature and renewal is next quarter.",
	}
	for _, mode := range chat.Modes {
		t.Run(mode, func(t *testing.T) {
			r, _, err := s.Run(context.Background(), chat.Request{Message: questions[mode], Mode: mode}, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.MarshalIndent(r, "", "  ")
			path := filepath.Join("testdata", "golden", mode+".json")
			if *update {
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./internal/chat -run TestGolden -update)", err)
			}
			if strings.TrimSpace(string(want)) != strings.TrimSpace(string(got)) {
				t.Errorf("%s answer drifted from %s; review and run with -update if intended:\n%s", mode, path, got)
			}
		})
	}
}

// TestOperatorUsesTheDiagnosis: an operator chat about a constraint
// traces the diagnose_constraint hop and cites frameworks of the matching
// preview.
func TestOperatorUsesTheDiagnosis(t *testing.T) {
	s, _ := fullService(t)
	question := "Orders pile up in front of our paint booth while the welders wait for work."
	r, _, err := s.Run(context.Background(), chat.Request{Message: question, Mode: "operator"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.ReasoningTrace) == 0 || r.ReasoningTrace[0].Tool != chat.ToolDiagnose {
		t.Fatalf("trace does not start with the diagnosis: %+v", r.ReasoningTrace)
	}
	d := s.Diagnoser.(*chat.DiagnosisAdapter)
	g, err := d.Diagnose(context.Background(), question, d.GuessVertical(question))
	if err != nil {
		t.Fatal(err)
	}
	vertical := d.GuessVertical(question)
	if vertical == "" {
		vertical = "professional-services"
	}
	p, err := d.D.Preview(context.Background(), diagnose.PreviewRequest{Vertical: vertical, ArchetypeID: g.Matches[0].ArchetypeID})
	if err != nil {
		t.Fatal(err)
	}
	previewed := map[string]bool{}
	for _, a := range p.Applications {
		previewed[a.Framework.String()] = true
	}
	cited := 0
	for _, tok := range tokensOf(r.Response) {
		if previewed[tok] {
			cited++
		}
	}
	if cited == 0 {
		t.Errorf("the answer cites no framework of the %s preview: %v", g.Matches[0].ArchetypeID, tokensOf(r.Response))
	}
}
