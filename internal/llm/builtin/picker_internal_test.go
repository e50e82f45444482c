package builtin

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/persona"
	"github.com/constraintlab/assistant/internal/textproc"
	"github.com/constraintlab/assistant/internal/tooling"
)

// TestDanglingSentencesAreNotQuoted: a sentence that opens by pointing back
// at the one before it ("It...", "All three...") is not picked for
// quoting: on its own in an answer, what it points at is missing. (It
// still counts in how well its entity fits the question.)
func TestDanglingSentencesAreNotQuoted(t *testing.T) {
	e := &entityResult{
		Token:   "framework:example",
		Title:   "Example method",
		Summary: "The example method is a way to run weekly reviews. It helps an owner see which numbers moved and why. Weekly reviews catch slipping numbers before the month closes.",
		KeyIdeas: []string{
			"Review the same five numbers every week with the people who move them.",
			"All three shaped how satisfied the owners were with the review.",
			"This approach works best when the numbers are ready before the meeting.",
			"Owners also found the review shorter after a month.",
			"The result is a shorter meeting with fewer surprises at month end.",
			"Each group calls for a different owner and a different number.",
			"For an owner with a team of ten, it gives a weekly rhythm without long reports.",
			"For anyone running reviews, planning a budget or setting targets, it explains why the numbers drift.",
			"Building on weekly reviews, he also derived a rule for reviewing the numbers monthly.",
			"Most owners, she found, review the numbers only when the month closes.",
		},
	}
	p := emptyPicker()
	got := map[string]bool{}
	for _, s := range p.pick([]*entityResult{e}, 10, pickRule{loose: true, least: minOverlap}, "idea", "summary") {
		got[s.text] = true
	}
	for _, want := range []string{
		"Review the same five numbers every week with the people who move them.",
		"Weekly reviews catch slipping numbers before the month closes.",
	} {
		if !got[want] {
			t.Errorf("%q not offered", want)
		}
	}
	for _, dangling := range []string{
		"It helps an owner see which numbers moved and why.",
		"All three shaped how satisfied the owners were with the review.",
		"This approach works best when the numbers are ready before the meeting.",
		"Owners also found the review shorter after a month.",
		"The result is a shorter meeting with fewer surprises at month end.",
		"Each group calls for a different owner and a different number.",
		"For an owner with a team of ten, it gives a weekly rhythm without long reports.",
		"For anyone running reviews, planning a budget or setting targets, it explains why the numbers drift.",
		"Building on weekly reviews, he also derived a rule for reviewing the numbers monthly.",
		"Most owners, she found, review the numbers only when the month closes.",
	} {
		if got[dangling] {
			t.Errorf("%q offered on its own", dangling)
		}
	}
}

// TestNearlySame: two sentences that restate each other count as the same;
// a short sentence whose few words a long one happens to hold does not.
func TestNearlySame(t *testing.T) {
	terms := func(s string) []string { return analyse(s).terms }
	kingman := "Utilization factor: a resource at 80% load has a factor of 4, at 90% it is 9, and at 95% it is 19, so the last few points of busyness multiply queues."
	application := "Queueing theory explains why: at 80% load a resource's utilization factor is 4, at 90% it is 9 and at 95% it is 19, so the last few points of busyness at the constraint multiply queues."
	short := "Most lead time is waiting, not working."
	long := "Owners usually discover that most of their lead time is waiting, which points improvement toward queues and handoffs rather than asking people to work faster."
	if !nearlySame(terms(kingman), terms(application)) {
		t.Error("a restatement is not taken for the same sentence")
	}
	if nearlySame(terms(short), terms(long)) {
		t.Error("a short sentence is taken for a long one that holds its words")
	}
}

// TestOffPersona: knowledge is off a persona's side when it helps with
// none of the constraints the persona's questions are about; the operator
// (no archetypes) and knowledge without archetypes are never off.
func TestOffPersona(t *testing.T) {
	personas, err := persona.Load()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		mode       string
		archetypes []string
		off        bool
	}{
		{"customer", []string{"support-load", "hiring-talent", "delivery-capacity"}, true},
		{"customer", []string{"support-load", "sales-conversion"}, false},
		{"success", []string{"product-market-fit", "strategic-focus"}, true},
		{"success", []string{"retention-churn"}, false},
		{"support", []string{"pricing-margin", "strategic-focus"}, true},
		{"operator", []string{"support-load"}, false},
		{"customer", nil, false},
	}
	for _, c := range cases {
		tr := turn{persona: personas[c.mode]}
		if got := tr.offPersona(c.archetypes); got != c.off {
			t.Errorf("%s, %v: off persona %v, want %v", c.mode, c.archetypes, got, c.off)
		}
	}
	// The operator takes the diagnosis's two likeliest constraints, when
	// the diagnosis placed the question at all; the runner-up only when
	// it is a real contender.
	placed := func(band string, runnerUp float64) turn {
		return turn{persona: personas["operator"], diagnosis: &diagnoseResult{Band: band,
			Matches: []diagnoseMatch{{ArchetypeID: "delivery-capacity", Probability: 0.6}, {ArchetypeID: "pricing-margin", Probability: runnerUp},
				{ArchetypeID: "support-load", Probability: 0.05}}}}
	}
	if !placed("medium", 0.3).offPersona([]string{"support-load", "hiring-talent"}) {
		t.Error("the operator read knowledge for neither of the diagnosis's two likeliest constraints as its own")
	}
	if placed("medium", 0.3).offPersona([]string{"pricing-margin"}) || placed("low", 0.3).offPersona([]string{"support-load"}) {
		t.Error("the operator set aside knowledge for a likely constraint, or followed a diagnosis that placed nothing")
	}
	if !placed("high", 0.02).offPersona([]string{"pricing-margin"}) {
		t.Error("the operator took a runner-up the diagnosis gives almost no chance as a likely constraint")
	}
}

// TestPointsBack: a step whose object points back at the step before it
// is told from one whose "that" opens a clause, and from a statement that
// opens with its subject.
func TestPointsBack(t *testing.T) {
	for text, want := range map[string]bool{
		"Divide them to get the burn multiple and plot the trend.":           true,
		"Compare it with the cost of acquiring a customer in each channel.":  true,
		"Divide that throughput by the time it takes on the busiest step.":   true,
		"Rank those past overruns and choose the uplift from the middle.":    true,
		"Accept that some homemade tools are the right answer for a while.":  false,
		"Check that the invoice reached the person who approves payment.":    false,
		"Compute lifetime value from your real churn and margin, by cohort.": false,
	} {
		if got := pointsBack(text); got != want {
			t.Errorf("pointsBack(%q) = %v, want %v", text, got, want)
		}
	}
	statement := sentence{kind: "idea", analysis: analyse("Hotels that started responding saw their ratings rise within a quarter.")}
	step := sentence{kind: "step", analysis: analyse("Divide that throughput by the time it takes on the busiest step.")}
	if statement.leansBack() || !step.leansBack() {
		t.Errorf("a statement leans back %v, a step %v; want false, true", statement.leansBack(), step.leansBack())
	}
}

// TestStepPointingBackNeedsItsStepInTheSameAnswer: a later step that
// points back ("Compare it with...") is quoted only after the step before
// it in the same answer; one said in an earlier answer of the conversation
// is not above it for the reader.
func TestStepPointingBackNeedsItsStepInTheSameAnswer(t *testing.T) {
	e := &entityResult{Token: "framework:unit-economics", Title: "Unit economics"}
	steps := []string{
		"Compute lifetime value from your real churn and margin, by acquisition cohort and channel.",
		"Compare it with the cost of acquiring a customer in each channel.",
	}
	newPicker := func() *picker {
		p := emptyPicker()
		p.terms = map[string]float64{"channel": 1, "cost": 1, "acquir": 1}
		p.analysed[e.Token] = withApplication(nil, e, "", steps)
		return p
	}
	texts := func(list []sentence) []string {
		var out []string
		for _, s := range list {
			out = append(out, s.text)
		}
		return out
	}
	p := newPicker()
	if got := texts(p.pick([]*entityResult{e}, 2, pickRule{loose: true, least: minOverlap}, "step")); len(got) != 2 || got[0] != steps[0] {
		t.Errorf("in one answer: %q, want both steps, the first first", got)
	}
	// The first step was said in an earlier answer: the second, which
	// points back at it, is not quoted alone.
	p = newPicker()
	first := analyse(steps[0]).key
	p.used[first], p.earlier[first] = true, true
	if got := texts(p.pick([]*entityResult{e}, 2, pickRule{loose: true, least: minOverlap}, "step")); len(got) != 0 {
		t.Errorf("after an earlier answer: %q, want nothing", got)
	}
}

// TestFrameworksWrittenForOtherSituationsStayOut: beside the best-fitting
// framework, one whose whole text shares the question's words but whose
// title and "When to use" hold less than half the share the
// best-written-for one holds does not speak; one written for a situation
// like the question's does.
func TestFrameworksWrittenForOtherSituationsStayOut(t *testing.T) {
	tr := turnFor([]string{"refund", "duplicate", "invoice"}, nil,
		entityResult{Token: "framework:billing-errors", Title: "Billing errors",
			KeyIdeas:  []string{"Send the refund for a duplicate invoice on the day the customer reports it."},
			WhenToUse: []string{"A customer paid a duplicate invoice and wants a refund today."}},
		entityResult{Token: "framework:agent-overtime", Title: "Agent overtime",
			KeyIdeas:  []string{"Agents who handle every duplicate invoice complaint late at night burn out within months."},
			WhenToUse: []string{"My agents ask for a refund of unpaid overtime hours."}},
		entityResult{Token: "framework:service-recovery", Title: "Service recovery",
			KeyIdeas:  []string{"Offer a refund or a fix quickly when a customer was wronged by a billing mistake."},
			WhenToUse: []string{"An angry customer received a duplicate invoice and nobody apologised yet."}})
	got := frameworksThatSpeak(tr)
	if want := "framework:billing-errors framework:service-recovery"; strings.Join(got, " ") != want {
		t.Errorf("frameworks that speak: %v, want %s", got, want)
	}
}

// TestFrameworksTheSearchRankedLowStayOut: a framework below the search's
// first three hits whose title holds none of the question's key terms
// stays out however many of their words its text holds; one as low whose
// title names the subject still speaks, and so does one the search ranked
// high.
func TestFrameworksTheSearchRankedLowStayOut(t *testing.T) {
	tr := turnFor([]string{"refund", "policy", "shop"},
		[]string{"framework:refund-rules", "framework:loyalty", "framework:other-a", "framework:seasonal-peaks", "framework:policy-writing"},
		entityResult{Token: "framework:refund-rules", Title: "Refund rules",
			KeyIdeas: []string{"Write the refund policy as a short table of cases for the shop's staff."}},
		entityResult{Token: "framework:seasonal-peaks", Title: "Seasonal peaks",
			KeyIdeas: []string{"Before the peak, rewrite the shop's refund policy in plain words and train temporary staff on it."}},
		entityResult{Token: "framework:policy-writing", Title: "Policy writing",
			KeyIdeas: []string{"A refund policy a shop publishes should be short and dated."}},
		entityResult{Token: "framework:loyalty", Title: "Loyalty programmes",
			KeyIdeas: []string{"A shop's refund policy shapes whether customers come back."}})
	got := frameworksThatSpeak(tr)
	slices.Sort(got)
	if want := "framework:loyalty framework:policy-writing framework:refund-rules"; strings.Join(got, " ") != want {
		t.Errorf("frameworks that speak: %v, want %s", got, want)
	}
}

// TestAFrameworkSetAsideSetsNoBar: a framework that stays out (the search
// ranked it low and its title is off the question) does not raise the bar
// the others must come close to: the card the search ranked first still
// speaks, though a set-aside card shares more of the question's words.
func TestAFrameworkSetAsideSetsNoBar(t *testing.T) {
	tr := turnFor([]string{"project", "ship", "start"},
		[]string{"framework:portfolio", "framework:other-a", "framework:other-b", "framework:flow"},
		entityResult{Token: "framework:portfolio", Title: "Project portfolio",
			KeyIdeas: []string{"Cap the number of projects in progress and say which ones wait."}},
		entityResult{Token: "framework:flow", Title: "Flow of work",
			KeyIdeas: []string{"Work ships sooner when fewer projects start at once.", "Start nothing new until something ships."}})
	if got := frameworksThatSpeak(tr); strings.Join(got, " ") != "framework:portfolio" {
		t.Errorf("frameworks that speak: %v, want framework:portfolio alone", got)
	}
}

// TestFrameworksPresumingWhatIsNotShownStayOut: a framework written for a
// precondition (a champion who has left) stays out of an answer to a
// question that does not show it, though it fits the question's words
// best; it speaks when the question shows the precondition in any word
// form, when the question names it, and when nothing else could speak.
func TestFrameworksPresumingWhatIsNotShownStayOut(t *testing.T) {
	champion := entityResult{Token: "framework:champion-departure", Title: "Champion departure",
		KeyIdeas:  []string{"Before the renewal, ask the departed champion to introduce you to the successor and the renewal signer."},
		WhenToUse: []string{"Our champion quit weeks before the renewal."},
		Presumes:  []string{"champion", "sponsor left"}}
	escalation := entityResult{Token: "framework:escalation", Title: "Escalation calls",
		KeyIdeas:  []string{"Open the renewal call by owning the missed pickups before any plan."},
		WhenToUse: []string{"A client escalated missed pickups to our chief executive."}}
	for _, c := range []struct {
		name     string
		question string
		words    []string
		read     []entityResult
		want     string
	}{
		{"not shown", "Missed pickups before the renewal: how do I run the call?", []string{"renewal", "pickups", "successor"},
			[]entityResult{champion, escalation}, "framework:escalation"},
		{"shown in another word form", "Our sponsor left and missed pickups hurt the renewal.", []string{"renewal", "pickups", "successor"},
			[]entityResult{champion, escalation}, "framework:champion-departure framework:escalation"},
		{"denied", "Without a champion change, how do I handle missed pickups before the renewal?", []string{"renewal", "pickups", "successor"},
			[]entityResult{champion, escalation}, "framework:escalation"},
		{"named", "How does champion departure work before a renewal?", []string{"champion", "departure", "renewal"},
			[]entityResult{champion, escalation}, "framework:champion-departure"},
		{"nothing else", "Missed pickups before the renewal: who is the successor?", []string{"renewal", "successor"},
			[]entityResult{champion}, "framework:champion-departure"},
	} {
		tr := turnFor(c.words, nil, c.read...)
		tr.reading.Search = c.question
		got := frameworksThatSpeak(tr)
		slices.Sort(got)
		if strings.Join(got, " ") != c.want {
			t.Errorf("%s: frameworks that speak: %v, want %s", c.name, got, c.want)
		}
	}
}

// TestAskedQuestionsLoseTheirLead: under a heading that already says they
// are questions, a card's list is quoted from its first question on.
func TestAskedQuestionsLoseTheirLead(t *testing.T) {
	for in, want := range map[string]string{
		"Questions to ask: what did the prospect say would happen next?":         "What did the prospect say would happen next?",
		"Questions to ask a buyer: how are you dealing with this now?":           "How are you dealing with this now?",
		"Questions to ask about turnover: What does it cost each time?":          "What does it cost each time?",
		"Agree at the start of every meeting what happens at the end.":           "Agree at the start of every meeting what happens at the end.",
		"Questions to ask matter more than a pitch, in the first half of a call": "Questions to ask matter more than a pitch, in the first half of a call",
	} {
		if got := askedQuestions(in); got != want {
			t.Errorf("askedQuestions(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestNearestWithNothingToOffer: when the knowledge read holds no sentence
// to offer as the nearest, the answer says what it holds nothing on and
// asks the settling question; no line introduces, with a colon, a list
// that is not there.
func TestNearestWithNothingToOffer(t *testing.T) {
	personas, err := persona.Load()
	if err != nil {
		t.Fatal(err)
	}
	tr := turnFor([]string{"cafes"}, nil)
	tr.persona = personas["operator"]
	got := tr.nearest(nil)
	lines := strings.Split(got, "\n")
	for i, l := range lines {
		next := ""
		if i+1 < len(lines) {
			next = lines[i+1]
		}
		if strings.HasSuffix(l, ":") && !strings.HasPrefix(strings.TrimSpace(next), "- ") {
			t.Errorf("line %q introduces nothing:\n%s", l, got)
		}
	}
	if !strings.Contains(got, "## What would settle it") {
		t.Errorf("no settling question:\n%s", got)
	}
}

// TestReadsWhatIsWrittenForTheSituation: among the search's hits, one
// whose title and "When to use" hold the question's words is read before
// one the search ranked a little higher for words its text happens to
// share, and a hit beyond the first six still counts.
func TestReadsWhatIsWrittenForTheSituation(t *testing.T) {
	personas, err := persona.Load()
	if err != nil {
		t.Fatal(err)
	}
	tr := turn{persona: personas["success"], reading: tooling.Reading{KeyTerms: []tooling.KeyTerm{keyTerm("upsell"), keyTerm("client"), keyTerm("service")}}}
	hits := []searchHit{{Token: "framework:service-recovery", Title: "Service recovery", Score: 1,
		WhenToUse: []string{"An angry guest complained about a cold room."}}}
	for i := range 6 {
		hits = append(hits, searchHit{Token: fmt.Sprintf("framework:filler-%d", i), Title: "Filler", Score: 0.5})
	}
	hits = append(hits, searchHit{Token: "framework:land-and-expand", Title: "Land and expand", Score: 0.8,
		WhenToUse: []string{"Our client buys one service and I want to upsell a second one."}})
	tr.searches = []searchResult{{Query: "q", Hits: hits}}
	if got := tr.toRead(); len(got) == 0 || got[0] != "framework:land-and-expand" {
		t.Errorf("read %v, want the card written for the situation first", got)
	}
}

// TestLooseGoesToWhatCanSpeak: a section that lets the best-fitting
// entity speak loosely gives that leave to the first one with something
// of the kind asked: when a paper fits best but instructs nothing, the
// framework after it still gives its steps.
func TestLooseGoesToWhatCanSpeak(t *testing.T) {
	paper := entityResult{Token: "paper:queues", Title: "Queues in heavy traffic",
		KeyIdeas: []string{"Waiting time grows steeply as a server's load approaches its capacity."}}
	framework := entityResult{Token: "framework:owner-systems", Title: "Owner systems",
		KeyIdeas: []string{"Write a checklist for the three tasks that take most of your week.", "Give one of those tasks to a named person this month."}}
	p := emptyPicker()
	p.terms, p.importance = map[string]float64{"estim": 1}, map[string]float64{"estim": 1}
	got := p.pick([]*entityResult{&paper, &framework}, 3, pickRule{loose: true, least: minOverlap, actionsOnly: true}, "step", "idea")
	if len(got) != 2 || got[0].entity.Token != "framework:owner-systems" {
		t.Errorf("steps %v, want the framework's two", got)
	}
}

// TestStepsComeFromTheBestFew: the steps of an answer come from the first
// two entities, in order of fit, that still have an instruction to give;
// one that instructs nothing (a paper's findings) or has said all it
// instructs is passed over, and the rest do not pad the steps.
func TestStepsComeFromTheBestFew(t *testing.T) {
	first := &entityResult{Token: "framework:first", Title: "First", KeyIdeas: []string{"Write the three numbers on the board every morning."}}
	findings := &entityResult{Token: "paper:findings", Title: "Findings", KeyIdeas: []string{"Teams that saw their numbers daily improved faster than the others."}}
	second := &entityResult{Token: "framework:second", Title: "Second", KeyIdeas: []string{"Ask each shift lead which number moved and why."}}
	third := &entityResult{Token: "framework:third", Title: "Third", KeyIdeas: []string{"Cut the weekly meeting to fifteen minutes."}}
	p := emptyPicker()
	var got []string
	for _, e := range p.instructing([]*entityResult{first, findings, second, third}, stepsFrom) {
		got = append(got, e.Token)
	}
	if want := "framework:first framework:second"; strings.Join(got, " ") != want {
		t.Errorf("steps from %v, want %s", got, want)
	}
	p.used[analyse(first.KeyIdeas[0]).key] = true
	got = got[:0]
	for _, e := range p.instructing([]*entityResult{first, findings, second, third}, stepsFrom) {
		got = append(got, e.Token)
	}
	if want := "framework:second framework:third"; strings.Join(got, " ") != want {
		t.Errorf("once the first has said its step, steps from %v, want %s", got, want)
	}
}

// TestSentencesAboutTheWorkAreNotQuoted: a summary sentence in which an
// author goes about the work ("Gurley reviews platforms...") describes the
// card, not the reader's business, and is not offered for quoting; one
// that merely opens with a name or the same verb stays.
func TestSentencesAboutTheWorkAreNotQuoted(t *testing.T) {
	e := &entityResult{
		Token:   "essay:example",
		Title:   "Example essay",
		Authors: []string{"Bill Gurley"},
		Summary: "The essay asks how much a platform should keep from each sale. " +
			"Gurley reviews platforms across several industries to show the pattern. " +
			"Gurley uses three marketplaces to show how a high fee invites rivals. " +
			"A lean fee makes a platform hard to displace for years. " +
			"Weekly reviews of the fee catch rivals entering underneath it.",
	}
	got := map[string]bool{}
	for _, s := range sentences(e) {
		got[s.text] = true
	}
	for _, gone := range []string{
		"Gurley reviews platforms across several industries to show the pattern.",
		"Gurley uses three marketplaces to show how a high fee invites rivals.",
	} {
		if got[gone] {
			t.Errorf("%q offered for quoting", gone)
		}
	}
	for _, kept := range []string{
		"A lean fee makes a platform hard to displace for years.",
		"Weekly reviews of the fee catch rivals entering underneath it.",
	} {
		if !got[kept] {
			t.Errorf("%q not offered", kept)
		}
	}
}

// TestFollowUpDoesNotRestateAnEarlierAnswer: in a later turn, a sentence
// that says again in other words what an earlier answer of the
// conversation said is not offered; one that says something new is.
func TestFollowUpDoesNotRestateAnEarlierAnswer(t *testing.T) {
	earlier := "## Why it binds\n- Utilization factor: a resource at 80% load has a factor of 4, at 90% it is 9, and at 95% it is 19, so the last few points of busyness multiply queues [framework:kingman].\n"
	e := &entityResult{
		Token: "framework:example",
		Title: "Example constraint method",
		KeyIdeas: []string{
			"Queueing theory explains why: at 80% load a resource's utilization factor is 4, at 90% it is 9 and at 95% it is 19, so the last few points of busyness at the constraint multiply queues.",
			"Move inspection next to the busiest resource so that its queues are checked before they reach it.",
		},
	}
	p := turn{previous: []string{earlier}}.newPicker()
	p.terms["queue"], p.terms["resourc"] = 1, 1
	got := map[string]bool{}
	for _, s := range p.pick([]*entityResult{e}, 10, pickRule{loose: true, least: minOverlap}, "idea") {
		got[s.text] = true
	}
	if got[e.KeyIdeas[0]] {
		t.Errorf("a restatement of the earlier answer is offered again")
	}
	if !got[e.KeyIdeas[1]] {
		t.Errorf("a new sentence is not offered: %v", got)
	}
}

// keyTerm is a key term of a question for the tests: weight 1, halfway
// specific.
func keyTerm(word string) tooling.KeyTerm {
	return tooling.KeyTerm{Stem: textproc.Stem(word), Word: word, Weight: 1, Specificity: 0.5}
}

// turnFor is a turn whose question has the key terms of words, whose first
// search found hits (in order; none when hits is nil) and which read
// entities.
func turnFor(words, hits []string, entities ...entityResult) turn {
	tr := turn{entities: entities}
	for _, w := range words {
		tr.reading.KeyTerms = append(tr.reading.KeyTerms, keyTerm(w))
	}
	if hits != nil {
		res := searchResult{Query: "q"}
		for _, h := range hits {
			res.Hits = append(res.Hits, searchHit{Token: h})
		}
		tr.searches = []searchResult{res}
	}
	return tr
}

// frameworksThatSpeak returns the tokens of the frameworks tr's answer
// lets speak (byFit), best first, with nothing yet picked.
func frameworksThatSpeak(tr turn) []string {
	p := emptyPicker()
	var got []string
	for _, e := range tr.byFit(p) {
		got = append(got, e.Token)
	}
	return got
}

// TestTriedPitfallOffered: a follow-up leaves out what the user already
// tried, but a pitfall about it tells what went wrong with it, so it is
// still offered.
func TestTriedPitfallOffered(t *testing.T) {
	e := &entityResult{Token: "framework:queue", Title: "Queue plan",
		KeyIdeas: []string{"Close stale tickets in bulk once the queue passes a thousand."},
		Pitfalls: []string{"Closing tickets in bulk without a reply, which brings customers back angrier."}}
	p := emptyPicker()
	p.terms, p.importance = map[string]float64{"angri": 1, "custom": 1}, map[string]float64{"angri": 1, "custom": 1}
	p.avoid = map[string]bool{"close": true, "ticket": true, "bulk": true}
	var got []string
	for _, s := range p.pick([]*entityResult{e}, 5, pickRule{loose: true, least: minOverlap}, "idea", "pitfall") {
		got = append(got, s.text)
	}
	if len(got) != 1 || got[0] != e.Pitfalls[0] {
		t.Errorf("offered %q, want the pitfall alone (not the key idea about what was tried)", got)
	}
}

// emptyPicker is a picker with nothing asked, said or read yet: a test
// sets the question's terms and what to avoid.
func emptyPicker() *picker {
	return &picker{terms: map[string]float64{}, importance: map[string]float64{}, used: map[string]bool{}, earlier: map[string]bool{},
		avoid: map[string]bool{}, analysed: map[string][]sentence{}, applied: map[string]diagnoseApplying{}}
}
