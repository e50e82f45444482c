package answereval_test

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/answereval"
	"github.com/constraintlab/assistant/internal/assistant"
)

func TestDeclined(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    answereval.Answer
		want bool
	}{
		{"D29 decline", answereval.Answer{Text: "I can help with running a business, not with tax returns.", Level: "none"}, true},
		{"cites a token", answereval.Answer{Text: "Find the bottleneck [framework:theory-of-constraints].", Level: "none"}, false},
		{"has rag hits", answereval.Answer{Text: "Find the bottleneck.", RagHits: 1, Level: "none"}, false},
		{"claims low confidence", answereval.Answer{Text: "Find the bottleneck first.", Level: "low"}, false},
		{"claims high confidence", answereval.Answer{Text: "Find the bottleneck first.", Level: "high"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := answereval.Declined(tc.a); got != tc.want {
				t.Errorf("Declined = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRepeatedSentences(t *testing.T) {
	shared := "Map the flow of work before you change anything."
	for _, tc := range []struct {
		name     string
		answers  []answereval.Answer
		repeated int
		of       int
		top      []string
	}{
		{
			name: "no repeats",
			answers: []answereval.Answer{
				{ID: "a", Mode: "operator", Text: "Count the jobs waiting at each step."},
				{ID: "b", Mode: "support", Text: "Ask the customer what they expected to happen."},
			},
			repeated: 0, of: 2,
		},
		{
			name: "one sentence in two answers counts in each",
			answers: []answereval.Answer{
				{ID: "a", Mode: "operator", Text: shared + " Count the jobs waiting at each step."},
				{ID: "b", Mode: "support", Text: "- " + shared},
			},
			repeated: 2, of: 3, top: []string{shared},
		},
		{
			name: "case, spaces, end punctuation and tokens do not hide a repeat",
			answers: []answereval.Answer{
				{ID: "a", Mode: "operator", Text: "Map the flow of work   before you change anything [framework:value-stream-mapping]."},
				{ID: "b", Mode: "operator", Text: "**map the flow of work before you change anything!**"},
			},
			repeated: 2, of: 2, top: []string{"Map the flow of work before you change anything ."},
		},
		{
			name: "inner punctuation and words must match",
			answers: []answereval.Answer{
				{ID: "a", Mode: "operator", Text: "Map the flow, of work before you change anything."},
				{ID: "b", Mode: "operator", Text: "Map the flow of work before you change things."},
			},
			repeated: 0, of: 2,
		},
		{
			name: "a repeat inside one answer is not a repeat",
			answers: []answereval.Answer{
				{ID: "a", Mode: "operator", Text: shared + "\n\n" + shared},
				{ID: "b", Mode: "operator", Text: "Count the jobs waiting at each step."},
			},
			repeated: 0, of: 3,
		},
		{
			name: "headings and short fragments are not sentences",
			answers: []answereval.Answer{
				{ID: "a", Mode: "operator", Text: "## What to do first today\nDo it now.\nCount the jobs waiting at each step."},
				{ID: "b", Mode: "operator", Text: "## What to do first today\nDo it now.\nAsk the customer what they expected."},
			},
			repeated: 0, of: 2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := answereval.RepeatedSentences(tc.answers)
			if got.N != tc.repeated || got.Of != tc.of {
				t.Errorf("repeated %d of %d, want %d of %d", got.N, got.Of, tc.repeated, tc.of)
			}
			var top []string
			for _, r := range got.Top {
				top = append(top, r.Sentence)
			}
			if !slices.Equal(top, tc.top) {
				t.Errorf("top %q, want %q", top, tc.top)
			}
		})
	}
}

func TestRepeatedSentencesByMode(t *testing.T) {
	shared := "Map the flow of work before you change anything."
	got := answereval.RepeatedSentences([]answereval.Answer{
		{ID: "a", Mode: "operator", Text: shared + " Count the jobs waiting at each step."},
		{ID: "b", Mode: "support", Text: shared},
	})
	if got.ByMode["operator"].N != 1 || got.ByMode["operator"].Of != 2 || got.ByMode["operator"].Share != 0.5 {
		t.Errorf("operator %+v, want 1 of 2", got.ByMode["operator"])
	}
	if got.ByMode["support"].N != 1 || got.ByMode["support"].Of != 1 {
		t.Errorf("support %+v, want 1 of 1", got.ByMode["support"])
	}
	if !slices.Equal(got.Top[0].Answers, []string{"a", "b"}) {
		t.Errorf("top answers %q", got.Top[0].Answers)
	}
}

// cards is a knowledge base of two hover cards.
func cards(token string) (string, bool) {
	switch token {
	case "framework:theory-of-constraints":
		return "Theory of Constraints\nEvery system has one bottleneck that limits its throughput; improving anything else is an illusion.", true
	case "framework:spin-selling":
		return "SPIN Selling\nSituation questions gather facts about the buyer's current setup.", true
	}
	return "", false
}

func TestHoverCheckable(t *testing.T) {
	for _, tc := range []struct {
		name      string
		text      string
		checkable int
		cited     int
		failing   []string
	}{
		{"a sentence of its card", "Every system has one bottleneck that limits throughput [framework:theory-of-constraints].", 1, 1, nil},
		{"stems match", "Improving things elsewhere is an illusion; find the bottlenecks [framework:theory-of-constraints].", 1, 1, nil},
		{"words the card does not hold", "Hire two more drivers for the night shift and raise their wages [framework:theory-of-constraints].", 0, 1,
			[]string{"Hire two more drivers for the night shift and raise their wages [framework:theory-of-constraints]."}},
		{"checkable on any of its tokens", "Situation questions gather facts about the buyer's setup [framework:theory-of-constraints] [framework:spin-selling].", 1, 1, nil},
		{"a token that does not resolve checks nothing", "Situation questions gather facts about the buyer's setup [framework:made-up].", 0, 1,
			[]string{"Situation questions gather facts about the buyer's setup [framework:made-up]."}},
		{"uncited sentences do not count", "Every system has one bottleneck that limits throughput.", 0, 0, nil},
		{"headings do not count", "## Every system has one bottleneck [framework:theory-of-constraints]", 0, 0, nil},
		// content words bottleneck, limit, truck, driver: the card holds two.
		{"exactly half is checkable", "The bottleneck limits the trucks and drivers [framework:theory-of-constraints].", 1, 1, nil},
		{"under half is not", "The bottleneck limits trucks, drivers and loads [framework:theory-of-constraints].", 0, 1,
			[]string{"The bottleneck limits trucks, drivers and loads [framework:theory-of-constraints]."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := answereval.HoverCheckable([]answereval.Answer{{ID: "a", Text: tc.text}}, cards)
			if got.N != tc.checkable || got.Of != tc.cited {
				t.Errorf("checkable %d of %d, want %d of %d", got.N, got.Of, tc.checkable, tc.cited)
			}
			var failing []string
			for _, u := range got.Unchecked {
				failing = append(failing, u.Sentence)
				if u.Answer != "a" || len(u.Tokens) == 0 {
					t.Errorf("unchecked %+v", u)
				}
			}
			if !slices.Equal(failing, tc.failing) {
				t.Errorf("failing %q, want %q", failing, tc.failing)
			}
		})
	}
}

func TestHoverCheckableBestShare(t *testing.T) {
	got := answereval.HoverCheckable([]answereval.Answer{{ID: "a", Text: "Every system has trucks, drivers and loads [framework:theory-of-constraints]."}}, cards)
	// content words: system, truck, driver, load; the card holds system.
	if len(got.Unchecked) != 1 || got.Unchecked[0].Best != 0.25 {
		t.Errorf("unchecked %+v, want best 0.25", got.Unchecked)
	}
}

func TestCardTextFromJSON(t *testing.T) {
	card := `{"type":"framework","slug":"toc","token":"framework:toc","title":"Theory of Constraints","summary":"One bottleneck.",
		"url":"https://example.com/x","year":1984,"authors":["Eliyahu Goldratt"],"archetypes":["delivery-capacity"],
		"key_ideas":["Find it.","Exploit it."],"related":["framework:lean"],
		"applications":[{"vertical":"logistics","text":"Count the loads waiting for a truck.","token":"framework:toc"}]}`
	got, err := answereval.CardTextFromJSON([]byte(card))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Theory of Constraints", "One bottleneck.", "Find it.", "Exploit it.", "Eliyahu Goldratt", "Count the loads waiting for a truck.", "logistics"} {
		if !strings.Contains(got, want) {
			t.Errorf("card text lacks %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"framework:", "example.com", "delivery-capacity", "1984"} {
		if strings.Contains(got, not) {
			t.Errorf("card text holds the identifier %q:\n%s", not, got)
		}
	}
	if _, err := answereval.CardTextFromJSON([]byte(`not json`)); err == nil {
		t.Error("malformed card: no error")
	}
}

func TestBroken(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		want []string // a fragment of each reason, in order
	}{
		{"clean", "## Open with\nAsk what they compare it with.\n\n## Close on\n- Agree on the cost.\n1. Then talk price.", nil},
		{"empty section before a heading", "## Open with\n\n## Close on\nAgree on the cost.", []string{`empty section "## Open with" (line 1)`}},
		{"empty section at the end", "## Open with\nAsk.\n\n### Questions to ask\n\n", []string{`empty section "### Questions to ask" (line 4)`}},
		{"empty straight quote", "Say \"\" to the buyer.", []string{"empty quote (line 1)"}},
		{"blank straight quote", "Say \"  \" to the buyer.", []string{"empty quote (line 1)"}},
		{"two quotes are not an empty one", "Say \"yes\" and then \"no\".", nil},
		{"empty curly quote", "Open with “” and wait.", []string{"empty quote (line 1)"}},
		{"bare dash", "## Steps\n- Count the loads.\n-\n", []string{`bare bullet "-" (line 3)`}},
		{"bare star", "* ", []string{`bare bullet "*" (line 1)`}},
		{"bare number", "1. First.\n2.", []string{`bare bullet "2." (line 2)`}},
		{"a bullet of only a token", "- [framework:theory-of-constraints]", []string{"bare bullet"}},
		{"a number in prose is no bullet", "2.5 million loads moved last year.", nil},
		{"a hashtag is no heading", "#growth\nSomething.", nil},
		{"code is not read", "```\n-\n## x\n```\nText.", nil},
		{"several reasons", "## A\n## B\n-\nSay \"\".", []string{"empty section \"## A\"", "bare bullet", "empty quote"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := answereval.Broken(tc.text)
			if len(got) != len(tc.want) {
				t.Fatalf("reasons %q, want %d like %q", got, len(tc.want), tc.want)
			}
			for i := range got {
				if !strings.Contains(got[i], tc.want[i]) {
					t.Errorf("reason %d = %q, want it to contain %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestConfidence(t *testing.T) {
	got := answereval.Confidence([]answereval.Answer{
		{Level: "high", Score: 1}, {Level: "high", Score: 0.8}, {Level: "medium", Score: 0.6},
		{Level: "low", Score: 0.1}, {Level: "none", Score: 0},
	})
	want := map[string]int{"high": 2, "medium": 1, "low": 1, "none": 1}
	if !reflect.DeepEqual(got.Levels, want) {
		t.Errorf("levels %v, want %v", got.Levels, want)
	}
	if got.Scores != [5]int{2, 0, 0, 1, 2} {
		t.Errorf("score bins %v", got.Scores)
	}
	if got.MeanScore != 0.5 {
		t.Errorf("mean score %v, want 0.5", got.MeanScore)
	}
	if empty := answereval.Confidence(nil); empty.MeanScore != 0 || empty.Levels["high"] != 0 {
		t.Errorf("no answers: %+v", empty)
	}
}

func TestMeasure(t *testing.T) {
	decline := "I help with running a business; a tax return is a question for an accountant."
	answers := []answereval.Answer{
		{ID: "q1", Kind: "in", Mode: "operator", Text: "Every system has one bottleneck that limits throughput [framework:theory-of-constraints].", RagHits: 1, Level: "high", Score: 0.9},
		{ID: "q2", Kind: "in", Mode: "support", Text: decline, Level: "none"},
		{ID: "q3", Kind: "followup", Mode: "operator", Text: "## Next\n", RagHits: 0, Level: "low", Score: 0.2},
		{ID: "o1", Kind: "out", Mode: "operator", Text: decline, Level: "none"},
		{ID: "o2", Kind: "out", Mode: "customer", Text: "File the tax return by April [framework:theory-of-constraints].", RagHits: 1, Level: "medium", Score: 0.6},
		{ID: "x1", Kind: "inject", Mode: "operator", Text: decline, Level: "none"},
	}
	f := answereval.Measure(answers, cards)
	check := func(name string, got answereval.Ratio, n, of int) {
		t.Helper()
		if got.N != n || got.Of != of {
			t.Errorf("%s %d of %d, want %d of %d", name, got.N, got.Of, n, of)
		}
	}
	check("out declined", f.OutDeclined, 1, 2)
	check("in declined", f.InWronglyDeclined, 1, 3)
	check("in confident", f.InMediumHigh, 1, 3)
	check("broken", f.Broken, 1, 6)
	check("hover", f.Hover.Ratio, 1, 2)
	check("repeated", f.Repeated.Ratio, 3, 5) // the decline, three times
	check("repeated, declines left out", f.RepeatedAnswered.Ratio, 0, 2)
	if f.ByKind["out"] != (answereval.KindCounts{N: 2, Declined: 1, MediumHigh: 1}) || f.ByKind["inject"].Declined != 1 {
		t.Errorf("by kind %+v", f.ByKind)
	}
	if len(f.BrokenAnswers) != 1 || f.BrokenAnswers[0].Answer != "q3" {
		t.Errorf("broken answers %+v", f.BrokenAnswers)
	}
	if f.Confidence.Levels["none"] != 3 {
		t.Errorf("confidence %+v", f.Confidence)
	}
}

func TestReadRatings(t *testing.T) {
	got, err := answereval.ReadRatings(strings.NewReader("id\tscore\treason\nq1\t4\tspecific, acts on it\r\n\n# skipped\nq2\t1\nq3\t 5 \tgreat\twith a tab\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []answereval.Rating{{"q1", 4, "specific, acts on it"}, {"q2", 1, ""}, {"q3", 5, "great\twith a tab"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ratings %+v, want %+v", got, want)
	}
	for _, bad := range []string{"q1\t6\tx\n", "q1\t0\n", "q1\tgood\n", "q1\n", "\t3\tx\n", "q1\t3\nq1\t4\n", "", "# only a comment\n"} {
		if _, err := answereval.ReadRatings(strings.NewReader(bad)); assistant.ErrorCode(err) != assistant.EInvalid {
			t.Errorf("%q: error %v, want EInvalid", bad, err)
		}
	}
}

func TestSpearman(t *testing.T) {
	for _, tc := range []struct {
		name   string
		xs, ys []float64
		want   float64 // NaN: undefined
	}{
		{"same order", []float64{0.1, 0.5, 0.9}, []float64{1, 3, 5}, 1},
		{"reverse order", []float64{0.1, 0.5, 0.9}, []float64{5, 3, 1}, -1},
		// ranks x: 1, 2.5, 2.5, 4; y: 1, 2, 3, 4 -> 0.9487
		{"ties averaged", []float64{0.1, 0.5, 0.5, 0.9}, []float64{1, 2, 3, 4}, 0.9487},
		// ranks x: 1..5, y: 2, 1, 4, 3, 5 -> 1 - 6*4/120 = 0.8
		{"no ties", []float64{1, 2, 3, 4, 5}, []float64{2, 1, 4, 3, 5}, 0.8},
		{"constant sample", []float64{0.5, 0.5, 0.5}, []float64{1, 2, 3}, math.NaN()},
		{"one pair", []float64{0.5}, []float64{3}, math.NaN()},
		{"unequal lengths", []float64{0.5, 0.6}, []float64{3}, math.NaN()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := answereval.Spearman(tc.xs, tc.ys)
			switch {
			case math.IsNaN(tc.want) && got != nil:
				t.Errorf("Spearman = %v, want undefined", *got)
			case !math.IsNaN(tc.want) && (got == nil || math.Abs(*got-tc.want) > 1e-4):
				t.Errorf("Spearman = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRate(t *testing.T) {
	answers := []answereval.Answer{
		{ID: "a", Kind: "in", Mode: "operator", Level: "high", Score: 0.9},
		{ID: "b", Kind: "in", Mode: "operator", Level: "high", Score: 0.85},
		{ID: "c", Kind: "followup", Mode: "support", Level: "medium", Score: 0.6},
		{ID: "d", Kind: "in", Mode: "support", Level: "low", Score: 0.2},
		{ID: "e", Kind: "out", Mode: "customer", Level: "high", Score: 1},
		{ID: "f", Kind: "lang", Mode: "customer", Level: "none"},
		{ID: "g", Kind: "in", Mode: "success", Level: "low", Score: 0.3},
	}
	ratings := []answereval.Rating{{ID: "a", Score: 5}, {ID: "b", Score: 2}, {ID: "c", Score: 4}, {ID: "d", Score: 1}, {ID: "e", Score: 1}, {ID: "f", Score: 3}}
	got, err := answereval.Rate(answers, ratings)
	if err != nil {
		t.Fatal(err)
	}
	if got.Rated != 6 || !slices.Equal(got.Unrated, []string{"g"}) {
		t.Errorf("rated %d, unrated %q", got.Rated, got.Unrated)
	}
	if want := map[string]int{"1": 2, "2": 1, "3": 1, "4": 1, "5": 1}; !reflect.DeepEqual(got.Distribution, want) {
		t.Errorf("distribution %v, want %v", got.Distribution, want)
	}
	if got.MeanInScope == nil || *got.MeanInScope != 3 { // a, b, c, d: 5, 2, 4, 1
		t.Errorf("mean in scope %v, want 3", got.MeanInScope)
	}
	if want := map[string]float64{"operator": 3.5, "support": 2.5}; !reflect.DeepEqual(got.MeanByMode, want) {
		t.Errorf("mean by mode %v, want %v", got.MeanByMode, want)
	}
	if got.MeanByKind["out"] != 1 || got.MeanByKind["lang"] != 3 || got.MeanByKind["in"] != 8.0/3 && math.Abs(got.MeanByKind["in"]-2.6667) > 1e-4 {
		t.Errorf("mean by kind %v", got.MeanByKind)
	}
	// in scope: scores 0.9, 0.85, 0.6, 0.2 against 5, 2, 4, 1:
	// ranks 4, 3, 2, 1 against 4, 2, 3, 1 -> 1 - 6*2/60 = 0.8
	if got.Spearman == nil || math.Abs(*got.Spearman-0.8) > 1e-4 {
		t.Errorf("Spearman %v, want 0.8", got.Spearman)
	}
	if got.HighPrecision.N != 1 || got.HighPrecision.Of != 3 { // a of a, b, e
		t.Errorf("precision of high %+v, want 1 of 3", got.HighPrecision)
	}
	if got.MediumHighRated1to2 != 2 || got.MediumHighRated1 != 1 { // b (2), e (1)
		t.Errorf("poor confident %d, worst %d; want 2, 1", got.MediumHighRated1to2, got.MediumHighRated1)
	}
	if got.MeanMediumHigh == nil || *got.MeanMediumHigh != 3 { // a, b, c, e: 5, 2, 4, 1
		t.Errorf("mean confident %v, want 3", got.MeanMediumHigh)
	}

	if _, err := answereval.Rate(answers, []answereval.Rating{{ID: "zz", Score: 3}}); assistant.ErrorCode(err) != assistant.EInvalid {
		t.Errorf("a rating of an unknown id: %v", err)
	}
	none, err := answereval.Rate(answers, nil)
	if err != nil || none.MeanInScope != nil || none.Spearman != nil || none.MeanMediumHigh != nil || len(none.Unrated) != len(answers) {
		t.Errorf("no ratings: %+v, %v", none, err)
	}
}

func TestReadSet(t *testing.T) {
	set := answereval.SetHeader + "\n" +
		"q1\tin\toperator\tlogistics\t\tWe lose loads for lack of trucks.\tnames carrier capacity\n" +
		"# a comment\n\n" +
		"q2\tfollowup\toperator\t\tq1\tWe already hired two drivers.\n" +
		"o1\tout\tcustomer\t\t\tWrite my cover letter.\tdecline\r\n"
	got, err := answereval.ReadSet(strings.NewReader(set))
	if err != nil {
		t.Fatal(err)
	}
	want := []answereval.Row{
		{ID: "q1", Kind: "in", Mode: "operator", Vertical: "logistics", Message: "We lose loads for lack of trucks.", Note: "names carrier capacity"},
		{ID: "q2", Kind: "followup", Mode: "operator", Follows: "q1", Message: "We already hired two drivers."},
		{ID: "o1", Kind: "out", Mode: "customer", Message: "Write my cover letter.", Note: "decline"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows\n%+v\nwant\n%+v", got, want)
	}
	row := func(fields ...string) string { return answereval.SetHeader + "\n" + strings.Join(fields, "\t") + "\n" }
	for name, bad := range map[string]string{
		"no header":                 "q1\tin\toperator\t\t\thello\tnote\n",
		"no rows":                   answereval.SetHeader + "\n",
		"unknown kind":              row("q1", "maybe", "operator", "", "", "hello", ""),
		"empty id":                  row("", "in", "operator", "", "", "hello", ""),
		"empty message":             row("q1", "in", "operator", "", "", "", ""),
		"unknown vertical":          row("q1", "in", "operator", "shipyards", "", "hello", ""),
		"too few fields":            row("q1", "in", "operator", "hello"),
		"followup of nothing":       row("q1", "followup", "operator", "", "q0", "hello", ""),
		"follows on a non-followup": answereval.SetHeader + "\n" + "q1\tin\toperator\t\t\thello\t\n" + "q2\tin\toperator\t\tq1\thello\t\n",
		"duplicate id":              answereval.SetHeader + "\n" + "q1\tin\toperator\t\t\thello\t\n" + "q1\tout\toperator\t\t\thello\t\n",
		"followup of a later row":   answereval.SetHeader + "\n" + "q2\tfollowup\toperator\t\tq3\thello\t\n" + "q3\tin\toperator\t\t\thello\t\n",
	} {
		if _, err := answereval.ReadSet(strings.NewReader(bad)); assistant.ErrorCode(err) != assistant.EInvalid {
			t.Errorf("%s: error %v, want EInvalid", name, err)
		}
	}
}
