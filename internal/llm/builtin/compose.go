package builtin

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/constraintlab/assistant/internal/textproc"
)

// compose writes the answer. Out of scope, it declines; on a weak match it
// says what it is unsure of; otherwise it answers in the persona's
// sections. Sentences taken from an entity carry its citation token, and
// so do the steps of a confident diagnosis (the catalog's application of
// a framework); the persona's own words carry none, and the verifier
// counts them as claims like any other (D29).
func (t turn) compose() string {
	switch {
	case !t.inScope():
		return t.decline()
	case t.productQuestionWithoutDocs():
		return t.declineProduct()
	case len(t.entities) == 0:
		return t.nothingFound()
	case t.weak():
		return t.weakAnswer()
	}
	switch t.mode {
	case "customer":
		return t.customer()
	case "support":
		if lead := t.lead(); asksHowToUse(t.question) && t.importedLeads() {
			return t.howTo(lead)
		}
		return t.supportAnswer()
	case "success":
		return t.success()
	}
	return t.operator()
}

// weak reports a match the answer must hedge: a question in another
// language (understood only in part), or one the knowledge found speaks to
// less than half of.
func (t turn) weak() bool {
	s := t.scope()
	if s.Language != "en" && s.Language != "" {
		return true
	}
	return len(t.searches) > 0 && t.searches[0].Coverage < 0.4 && !t.confident()
}

var greeting = regexp.MustCompile(`(?i)^\W*(hi|hello|hey|hiya|good (morning|afternoon|evening)|greetings)\b`)
var thanks = regexp.MustCompile(`(?i)^\W*(thanks|thank you|cheers|ty)\b`)

// canHelpWith is what each persona offers, in its own voice, for a
// declined question.
var canHelpWith = map[string]string{
	"operator": "I work on what holds a business back: where work or customers pile up, cash, pricing, hiring, quality and focus. Tell me what your business sells and which number worries you, and I will start there.",
	"customer": "I help prepare sales conversations: discovery questions, framing value, price objections, an incumbent vendor or a deal that has gone quiet. Tell me who the buyer is and where the conversation stands.",
	"support":  "I help support teams get problems to their cause: recurring tickets, slow responses, customers stuck in setup, complaints. For questions about using your own product, import its help articles with `assistant kb import` and I will answer from them.",
	"success":  "I help account managers make customers successful and growing: adoption, a renewal at risk, a champion who left, and when to propose more. Tell me about the account and what is at stake.",
}

// decline answers a question outside the knowledge base's scope (D29):
// politely, in the persona's voice, saying what the assistant can help
// with, citing nothing.
func (t turn) decline() string {
	var b strings.Builder
	q := strings.TrimSpace(t.question)
	s := t.scope()
	switch {
	case s.Language != "en" && s.Language != "":
		b.WriteString("I answer in English, and I could not find a business question in your message that I can help with. ")
	case greeting.MatchString(q) && len(s.OffTopic) == 0:
		b.WriteString("Hello! ")
	case thanks.MatchString(q) && len(s.OffTopic) == 0:
		b.WriteString("You're welcome. ")
	default:
		b.WriteString("That is outside what I can help with, so I will not guess at it. ")
	}
	b.WriteString(canHelpWith[t.mode])
	return b.String()
}

// declineProduct answers a how-to question about the user's own product
// when the knowledge base holds none of its documentation.
func (t turn) declineProduct() string {
	return "I do not have your product's documentation, so I cannot tell you how to do that without guessing. " +
		"Import its help articles with `assistant kb import` (Markdown, JSON lines or BibTeX) and I will answer from them, citing the article. " +
		"Meanwhile I can help with the support process itself: recurring tickets, slow responses, customers stuck in setup."
}

func (t turn) nothingFound() string {
	return "## What I can say\n" +
		"The knowledge base has nothing that matches \"" + t.symptom() + "\" closely enough to ground an answer, and I will not guess.\n\n" +
		"## What would help\n" +
		"- What do you sell, and to whom?\n" +
		"- Where do work or customers pile up, and which number worries you?\n" +
		"- Is there a framework, paper or essay you have in mind?"
}

// weakAnswer hedges: it says what it understood and what it is unsure of,
// offers the closest knowledge as a lead to check, and asks what would
// settle it.
func (t turn) weakAnswer() string {
	var b strings.Builder
	s := t.scope()
	b.WriteString("## What I am unsure of\n")
	if s.Language != "en" && s.Language != "" {
		b.WriteString("I answer in English, and I understood only part of your message")
		if len(s.Understood) > 0 {
			fmt.Fprintf(&b, " (I read it as being about %s)", strings.Join(s.Understood, ", "))
		}
		b.WriteString(". ")
	} else {
		fmt.Fprintf(&b, "The knowledge base speaks only loosely to \"%s\"", t.symptom())
		if missing := t.searches[0].Missing; len(missing) > 0 {
			fmt.Fprintf(&b, ": it has nothing on %s", quoteList(missing[:min(3, len(missing))]))
		}
		b.WriteString(". ")
	}
	b.WriteString("Treat what follows as a lead to check, not a diagnosis.\n\n")
	p := t.newPicker()
	if best := p.best(t.entities, 1); len(best) > 0 {
		fmt.Fprintf(&b, "## The closest match\nFrom %s:\n- %s\n\n", best[0].entity.Title, cite(best[0]))
	}
	b.WriteString("## What would settle it\n")
	b.WriteString("- What do you sell, and to whom?\n")
	b.WriteString("- Which number moved, and since when?\n")
	b.WriteString("- What have you tried already?")
	return b.String()
}

func quoteList(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "\"" + w + "\""
	}
	return strings.Join(q, ", ")
}

// frameworks and supporting split the entities read.
func (t turn) frameworks() []entityResult {
	var out []entityResult
	for _, e := range t.entities {
		if strings.HasPrefix(e.Token, "framework:") {
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		return t.entities
	}
	return out
}

func (t turn) supporting() []entityResult {
	var out []entityResult
	for _, e := range t.entities {
		if !strings.HasPrefix(e.Token, "framework:") {
			out = append(out, e)
		}
	}
	return out
}

// lead is the entity the answer starts from: the workspace's own
// knowledge when it was the top hit, else the first framework read.
func (t turn) lead() entityResult {
	for _, e := range t.entities {
		if t.importedLeads() && e.Token == t.searches[0].Hits[0].Token {
			return e
		}
	}
	return t.frameworks()[0]
}

// importedLeads reports whether the workspace's own knowledge tops the
// search.
func (t turn) importedLeads() bool {
	return len(t.searches) > 0 && len(t.searches[0].Hits) > 0 && t.searches[0].Hits[0].Imported
}

// howTo answers a question about using the product from the workspace's
// own article, in the article's order: a how-to is followed step by step,
// not ranked.
func (t turn) howTo(article entityResult) string {
	var b strings.Builder
	b.WriteString("## What is going on\n")
	fmt.Fprintf(&b, "Your workspace's article \"%s\" covers this.\n\n", article.Title)
	b.WriteString("## Check first\n")
	b.WriteString("1. Are you signed in with an account that may change these settings?\n")
	b.WriteString("2. Is anything else relying on what you are about to change?\n")
	steps, rest := article.KeyIdeas, []string{}
	summary := textproc.Sentences(article.Summary)
	if len(summary) > 1 {
		summary = summary[1:] // the first sentence says what the article is about
	}
	if len(steps) == 0 {
		steps = summary
	} else {
		rest = summary
	}
	b.WriteString("\n## Fix it step by step\n")
	for i, s := range steps {
		fmt.Fprintf(&b, "%d. %s\n", i+1, citeText(article.Token, s))
	}
	b.WriteString("\n## If that does not work\n")
	for _, s := range slices.Concat(article.Pitfalls, rest) { // article is shared: never append to its lists
		fmt.Fprintf(&b, "- %s\n", citeText(article.Token, s))
	}
	b.WriteString("- Escalate with what you did, what you expected and what happened instead.\n")
	b.WriteString("\n## How you will know it is fixed\n")
	b.WriteString("- The steps above work end to end without a support contact.")
	return b.String()
}

// acknowledgeTried says what the conversation already tried, so a
// follow-up moves on instead of repeating the first answer.
func (t turn) acknowledgeTried(b *strings.Builder) {
	if tried := t.tried(); tried != "" {
		fmt.Fprintf(b, "You have already tried %s, so the advice below leaves that aside and moves to what comes next.\n\n", strings.TrimSuffix(tried, "."))
	} else if len(t.previous) > 0 {
		b.WriteString("Building on what we covered before, here is the next layer rather than the same advice again.\n\n")
	}
}

// diagnosisApplies reports whether the diagnosis's steps and metrics (the
// catalog's, for its likeliest constraint) fit the answer: when it is
// confident, or when that constraint is one the knowledge read serves.
func (t turn) diagnosisApplies() bool {
	d := t.diagnosis
	if d == nil || len(d.Applications) == 0 {
		return false
	}
	return t.confident() || slices.Contains(t.archetypes(), d.Matches[0].ArchetypeID)
}

// diagnosisSteps are the confident diagnosis's first steps, each cited to
// the framework whose application it comes from, skipping what the
// conversation already covered.
func (t turn) diagnosisSteps(p *picker, n int) []string {
	var out []string
	if !t.diagnosisApplies() {
		return nil
	}
	apps := t.diagnosis.Applications
	// The first two steps of the two best applications; when the
	// conversation already covered them, the steps that come next.
	for _, wide := range []bool{false, true} {
		limit := min(2, len(apps))
		if wide {
			limit = len(apps)
		}
		for _, a := range apps[:limit] {
			steps := a.FirstSteps
			if !wide {
				steps = steps[:min(2, len(steps))]
			}
			for _, s := range steps {
				if len(out) < n && p.fresh(s) {
					out = append(out, citeText(a.Token, s))
				}
			}
		}
	}
	return out
}

// metrics are the numbers to watch: the confident diagnosis's (the
// vertical's own first), else the measure of the archetypes the entities
// read serve.
func (t turn) metrics(n int) []string {
	var out []string
	seen := map[string]bool{}
	add := func(m string) {
		if m != "" && !seen[strings.ToLower(m)] && len(out) < n {
			seen[strings.ToLower(m)] = true
			out = append(out, m)
		}
	}
	if d := t.diagnosis; t.diagnosisApplies() {
		for _, m := range d.Metrics {
			add(m)
		}
		for _, m := range d.Applications[0].Metrics {
			add(m)
		}
	}
	for _, a := range t.archetypes() {
		add(archetypeMetric[a])
	}
	return out
}

// archetypes ranks the archetypes the entities read serve, by how many of
// them serve it and how early they were read; at most two.
func (t turn) archetypes() []string {
	score := map[string]float64{}
	var order []string
	for i, e := range t.entities {
		for j, a := range e.Archetypes {
			if _, ok := score[a]; !ok {
				order = append(order, a)
			}
			score[a] += 1 / float64(1+i+j)
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return score[order[i]] > score[order[j]] })
	return order[:min(2, len(order))]
}

// archetypeMetric is the number that shows each constraint moving, when
// there is no confident diagnosis to give the vertical's own.
var archetypeMetric = map[string]string{
	"lead-generation":    "Qualified leads per week, by channel",
	"sales-conversion":   "Win rate from first meeting to signed deal, and days to close",
	"pricing-margin":     "Gross margin per sale and the average discount given",
	"activation":         "Share of new customers who reach first value within their first week",
	"retention-churn":    "Monthly churn rate and the share of customers active after 90 days",
	"expansion":          "Net revenue retention: revenue this year from last year's customers",
	"delivery-capacity":  "Throughput per week at the bottleneck and lead time from order to delivery",
	"quality-rework":     "Share of work redone or returned, and hours spent on rework",
	"cash-flow":          "Cash conversion cycle in days and weeks of runway",
	"hiring-talent":      "Days to fill a role and 90-day retention of new hires",
	"founder-bottleneck": "Decisions per week that wait on the founder, and how long they wait",
	"strategic-focus":    "Share of revenue and effort in the top segment or offer",
	"product-market-fit": "Share of users who would be very disappointed without the product",
	"support-load":       "Tickets per 100 customers, first response time and repeat contacts",
}

// --- operator: diagnose the constraint, prescribe, measure ---

func (t turn) operator() string {
	var b strings.Builder
	p := t.newPicker()
	fw := t.frameworks()
	d := t.diagnosis

	b.WriteString("## The constraint\n")
	t.acknowledgeTried(&b)
	switch {
	case t.confident():
		top := d.Matches[0]
		fmt.Fprintf(&b, "What you describe (\"%s\") points to **%s**, with %s confidence.", t.symptom(), strings.ToLower(top.Name), d.Band)
		if len(d.Matches) > 1 && d.Matches[1].Probability >= 0.15 {
			fmt.Fprintf(&b, " If that is not it, look next at %s.", strings.ToLower(d.Matches[1].Name))
		}
		b.WriteString("\n\n")
	case d != nil && len(d.Matches) > 1:
		fmt.Fprintf(&b, "From \"%s\" alone I cannot name the constraint with confidence; the likeliest are %s and %s.\n",
			t.symptom(), strings.ToLower(d.Matches[0].Name), strings.ToLower(d.Matches[1].Name))
		b.WriteString("Which number moved first: sales, cash, lead time or churn?\n\n")
	}

	if when := p.best(fw, 1, "when"); len(when) > 0 && when[0].strong {
		fmt.Fprintf(&b, "Owners in this spot often put it like this:\n- %s\n\n", cite(when[0]))
	}

	b.WriteString("## Why it binds\n")
	if t.confident() && p.fresh(d.Applications[0].Application) {
		b.WriteString(citeText(d.Applications[0].Token, d.Applications[0].Application) + "\n\n")
	}
	for _, s := range p.best(fw, 2, "idea", "summary") {
		fmt.Fprintf(&b, "- %s\n", cite(s))
	}
	for _, s := range p.best(t.supporting(), 1, "idea", "summary") {
		fmt.Fprintf(&b, "- %s\n", cite(s))
	}

	b.WriteString("\n## What to do first\n")
	steps := t.diagnosisSteps(p, 4)
	for _, s := range p.best(fw, 4-len(steps), "idea") {
		steps = append(steps, cite(s))
	}
	for i, s := range steps {
		fmt.Fprintf(&b, "%d. %s\n", i+1, s)
	}
	if trap := p.best(fw[:1], 1, "pitfall"); len(trap) > 0 {
		fmt.Fprintf(&b, "\nA trap to avoid: %s\n", lowerFirst(cite(trap[0])))
	}

	b.WriteString("\n## What to measure\n")
	metrics := t.metrics(3)
	for _, m := range metrics {
		fmt.Fprintf(&b, "- %s\n", m)
	}
	if len(metrics) > 0 {
		fmt.Fprintf(&b, "\nIf %s has not moved after two or three weeks of these steps, the constraint is elsewhere.\n", lowerFirst(metrics[0]))
	}
	return strings.TrimSpace(b.String())
}

// --- customer: a talk track for the conversation the seller is in ---

// customerPlay is what the seller does in one stage of the conversation:
// how to read it, what to open with, three questions to ask, how to
// handle the objection, and the next step to close on.
type customerPlay struct {
	read, open  string
	questions   []string
	objection   string
	closeOnStep string
}

var customerPlays = map[string]customerPlay{
	"discount": {
		read: "A demand for a deep discount late in the deal tests how firm your price is, so trade rather than give.",
		open: "If we could find a way to get there, what would you be able to commit to on your side: term, volume or timing?",
		questions: []string{"What is the discount meant to solve for you: budget, approval or a comparison?", "What happens on your side if we cannot meet that number?",
			"Who decided on that figure, and what would change their mind?"},
		objection:   "If they hold firm, move within your limit only in exchange for something: a longer term, upfront payment or a reference.",
		closeOnStep: "Put two or three priced options side by side, each trading price against term or scope, and let them choose.",
	},
	"price": {
		read: "The price feels high to them because they are weighing it against something, so find out what, and move the conversation from price to what the problem costs them.",
		open: "Before we compare numbers, what does the way you do it today cost you each month in time, errors or lost sales?",
		questions: []string{"What are you comparing the price with, and what would that option leave unsolved?", "Who else will weigh the price, and what will they compare it with?",
			"If the price were right, what would still stop you?"},
		objection:   "If they ask for a discount, trade it for something of value: a longer term, a case study or faster payment.",
		closeOnStep: "Agree on the number the problem costs them, in their words, before you talk price again.",
	},
	"brush-off": {
		read: "\"Send me some info\" usually means they see no reason to talk yet, so earn one good question before you send anything.",
		open: "Happy to; so that I send the right thing, what made you take this call in the first place?",
		questions: []string{"What would have to be true for this to be worth twenty minutes?", "How do you handle this today?",
			"Who else deals with the problem day to day?"},
		objection:   "If they insist on the brochure, send one page tailored to what they told you and book the follow-up before you hang up.",
		closeOnStep: "Book a short follow-up on a named date to go through the one page together.",
	},
	"stalled": {
		read: "A deal that goes quiet has usually lost its urgency or its champion, so find out which before you chase.",
		open: "Has anything changed on your side since we last spoke, in priorities or in who is involved?",
		questions: []string{"Is solving this still a priority this quarter?", "Who else has to agree, and what do they need to see?",
			"What is the next step in your process, and who owns it?"},
		objection:   "If they say it is with legal or procurement, ask what those teams need and offer to talk to them directly.",
		closeOnStep: "Agree on a mutual plan: each remaining step, its owner and its date, written down and shared.",
	},
	"incumbent": {
		read: "They are happy with what they have, so do not attack it; look for the gap the incumbent leaves.",
		open: "If you could change one thing about how it works today, what would it be?",
		questions: []string{"When did you last review how well it works?", "What does it cost you when it falls short?",
			"What would make switching worth the effort?"},
		objection:   "If they fear the cost of switching, offer a small pilot on the gap they named rather than a full replacement.",
		closeOnStep: "Propose a small pilot on the one gap they named, with a date and a measure of success.",
	},
	"committee": {
		read: "Several people decide, so map who feels the problem, who signs and who can block before you pitch again.",
		open: "Besides you, who needs to be comfortable with this, and what will each of them look for?",
		questions: []string{"Who signs off on a purchase like this, and on what grounds?", "Who would lose something if this changed?",
			"How have decisions like this been made before?"},
		objection:   "If the signer is out of reach, arm your champion with a one-page business case in the signer's terms.",
		closeOnStep: "Get a meeting with the person who signs, with your champion in the room.",
	},
	"expansion": {
		read: "Pitch the bigger commitment on the value they already get, not on the discount.",
		open: "What has changed since you started, and what would a full year of it be worth to you?",
		questions: []string{"Which results have you seen so far?", "What would you do with more of it?",
			"What makes a longer commitment hard for you?"},
		objection:   "If they hesitate to commit for longer, show the saving against their current spend and offer a review point.",
		closeOnStep: "Put the yearly option next to their current spend, with the results they already had.",
	},
	"timing": {
		read: "\"Not now\" usually means \"not urgent\", so tie the problem to a date or a number they care about.",
		open: "What would have to be true for this to be a priority this quarter?",
		questions: []string{"What happens if nothing changes for six months?", "What is taking priority instead?",
			"When is the next point where this gets decided?"},
		objection:   "If it really is a matter of timing, agree on when to talk again and what will have changed by then.",
		closeOnStep: "Agree on the date to talk again and the trigger that would bring it forward.",
	},
	"": {
		read: "Start from the buyer's situation, not your product, and let them tell you what the problem costs.",
		open: "What made this worth a conversation now?",
		questions: []string{"What happens today when this goes wrong, and who feels it first?", "What have you tried already, and why did it not stick?",
			"If this were solved by next quarter, which number would be different?"},
		objection:   "If they say it is too expensive, go back to the cost of the problem they quantified, not to a discount.",
		closeOnStep: "Propose one concrete next step: a named person, a date, and what each side brings.",
	},
}

// conversationEntities splits the frameworks read for a talk track: the
// methods of a sales conversation (found by the persona's second search)
// and those about the buyer's situation.
func (t turn) conversationEntities() (methods, situation []entityResult) {
	isMethod := map[string]bool{}
	for _, s := range t.searches {
		if s.Query == conversationMethods {
			for _, h := range s.Hits {
				isMethod[h.Token] = true
			}
		}
	}
	for _, e := range t.frameworks() {
		if isMethod[e.Token] {
			methods = append(methods, e)
		} else {
			situation = append(situation, e)
		}
	}
	return methods, situation
}

func (t turn) customer() string {
	var b strings.Builder
	p := t.newPicker()
	play := customerPlays[t.stage().id]
	fw := t.frameworks()

	b.WriteString("## Open with\n")
	t.acknowledgeTried(&b)
	fmt.Fprintf(&b, "\"%s\": %s\n\n\"%s\"\n\n", upperFirst(t.symptom()), lowerFirst(play.read), play.open)

	b.WriteString("## Questions to ask\n")
	for _, q := range play.questions {
		if p.fresh(q) {
			fmt.Fprintf(&b, "- \"%s\"\n", q)
		}
	}

	b.WriteString("\n## How to frame the value\n")
	methods, situation := t.conversationEntities()
	for _, s := range p.best(methods, 2, "idea", "summary") {
		fmt.Fprintf(&b, "- %s\n", cite(s))
	}
	for _, s := range p.best(situation, 3-min(2, len(methods)), "idea", "summary") {
		fmt.Fprintf(&b, "- %s\n", cite(s))
	}
	for _, s := range p.best(t.supporting(), 1, "idea", "summary") {
		fmt.Fprintf(&b, "- %s\n", cite(s))
	}

	b.WriteString("\n## Objections to expect\n")
	if p.fresh(play.objection) {
		fmt.Fprintf(&b, "- %s\n", play.objection)
	}
	for _, s := range p.best(fw, 2, "pitfall") {
		fmt.Fprintf(&b, "- Where this conversation goes wrong: %s\n", lowerFirst(cite(s)))
	}

	b.WriteString("\n## Close on\n")
	n := 1
	if p.fresh(play.closeOnStep) {
		fmt.Fprintf(&b, "%d. %s\n", n, play.closeOnStep)
		n++
	}
	for _, s := range t.diagnosisSteps(p, 1) {
		fmt.Fprintf(&b, "%d. %s\n", n, s)
		n++
	}
	for _, s := range p.best(fw, 1, "when", "idea") {
		fmt.Fprintf(&b, "%d. Check the fit: %s\n", n, lowerFirst(cite(s)))
		n++
	}
	return strings.TrimSpace(b.String())
}

// --- support: a troubleshooting path to the cause ---

var supportReads = map[string]string{
	"repeat": "The same contacts keep coming back, so treat the volume as a process problem with a cause upstream, not as a staffing problem.",
	"slow":   "Responses slow down when work arrives faster or more unevenly than the team can clear it, so look at what changed in the arrivals before adding people.",
	"stuck":  "People get stuck at the same step, so the fix is in that step, not in answering each ticket faster.",
	"upset":  "An upset customer needs to feel heard before any fix lands, so acknowledge, own what went wrong, then fix it.",
	"defect": "Something reaches the customer broken or wrong, so find where it breaks before you answer each report.",
	"":       "Treat it as a process problem until proven otherwise: find the cause before the fix.",
}

// supportChecks are the questions to answer before fixing anything, by
// the kind of problem.
var supportChecks = map[string][]string{
	"repeat": {"Which three contact reasons make up most of the volume, counted over the last month?",
		"Where in the customer's journey does each one start: a screen, an email, a policy?",
		"Which of them could the customer have solved alone with a better page or message?"},
	"slow": {"What changed in the arrivals: more contacts, new kinds of contact, or bunching on certain days?",
		"How long does a typical contact take now compared with before?",
		"Which contacts wait longest, and are they waiting for the team or for someone else?"},
	"stuck": {"At which exact step do people stop, and how many reach it each week?",
		"What do the people who get through do differently from those who stop?",
		"What does the screen or email at that step ask of them?"},
	"upset": {"What exactly went wrong for this customer, in their words, and what did they expect instead?",
		"What can you put right today, and who has the authority to do it?",
		"Is this one case, or a pattern others have met without complaining?"},
	"defect": {"Can you reproduce it, step by step, and say what was expected and what happened instead?",
		"When did it start, and what changed just before: a release, a setting, a supplier, a new person?",
		"How often does it happen, and to whom: one case or a pattern?"},
}

func (t turn) supportAnswer() string {
	var b strings.Builder
	p := t.newPicker()
	lead := t.lead()
	fw := t.frameworks()
	st := t.stage()

	b.WriteString("## What is going on\n")
	t.acknowledgeTried(&b)
	fmt.Fprintf(&b, "\"%s\": %s\n\n", upperFirst(t.symptom()), lowerFirst(supportReads[st.id]))
	if lead.Token != fw[0].Token || len(t.searches) > 0 && len(t.searches[0].Hits) > 0 && t.searches[0].Hits[0].Imported {
		// The workspace's own article answers first.
		for _, s := range p.best([]entityResult{lead}, 3) {
			fmt.Fprintf(&b, "- %s\n", cite(s))
		}
		b.WriteString("\n")
	} else if when := p.best([]entityResult{lead}, 1, "when", "summary"); len(when) > 0 {
		fmt.Fprintf(&b, "The closest pattern in the knowledge base, from %s: %s\n\n", lead.Title, lowerFirst(cite(when[0])))
	}

	b.WriteString("## Check first\n")
	checks, ok := supportChecks[st.id]
	if !ok {
		checks = supportChecks["defect"] // the general troubleshooting checks
	}
	for i, q := range checks {
		fmt.Fprintf(&b, "%d. %s\n", i+1, q)
	}

	b.WriteString("\n## Fix it step by step\n")
	steps := t.diagnosisSteps(p, 2)
	for _, s := range p.best(fw, 4-len(steps), "idea") {
		steps = append(steps, cite(s))
	}
	for i, s := range steps {
		fmt.Fprintf(&b, "%d. %s\n", i+1, s)
	}
	fmt.Fprintf(&b, "%d. Write the fix into the checklist or help article people actually use, so it stays fixed.\n", len(steps)+1)

	b.WriteString("\n## If that does not work\n")
	for _, s := range p.best(fw, 2, "pitfall") {
		fmt.Fprintf(&b, "- Check you have not fallen into this: %s\n", lowerFirst(cite(s)))
	}
	for _, s := range p.best(t.supporting(), 1, "idea", "summary") {
		fmt.Fprintf(&b, "- Background worth reading: %s\n", cite(s))
	}
	b.WriteString("- Escalate with the reproduction steps and the counts from the checks above, not just the complaint.\n")

	b.WriteString("\n## How you will know it is fixed\n")
	for _, m := range t.metrics(2) {
		fmt.Fprintf(&b, "- %s\n", m)
	}
	return strings.TrimSpace(b.String())
}

// --- success: a plan for the account's actual situation ---

// successPlay is what an account manager does in one situation.
type successPlay struct {
	read, first, warning, propose string
}

var successPlays = map[string]successPlay{
	"champion-left": {
		read:    "Your champion has gone, and with them the account's memory of why it bought; treat the renewal as a new sale to a new person.",
		first:   "This week, find who inherited the budget and the problem, and ask for thirty minutes to learn their goals.",
		warning: "Nobody replies to the renewal thread, or the new contact talks about reviewing all vendors.",
		propose: "Propose nothing new until the new owner has seen value in their own terms; then tie the renewal to their goals.",
	},
	"incident": {
		read:    "The incidents are what the customer will remember at renewal, so own them openly before they raise them.",
		first:   "Before the call, write down each incident: what happened, the impact on them, what you changed so it does not recur.",
		warning: "Their team works around the product, or someone senior asks for the incident reports.",
		propose: "Talk about more only once the fixes have held for a full cycle and they say so.",
	},
	"at-risk": {
		read:    "Accounts rarely churn without warning; the signs show in behaviour weeks before anyone says so, so watch behaviour rather than waiting for the call.",
		first:   "List the accounts whose usage, logins or ticket tone changed in the last month, and call the three biggest this week.",
		warning: "Usage falls for two weeks in a row, the champion changes, or tickets turn into complaints.",
		propose: "Propose more only to accounts whose health is improving, tied to the outcome they already reached.",
	},
	"downgrade": {
		read:    "They are cutting cost, so show what the account would lose and find the smallest change that keeps the value.",
		first:   "Map which teams get the most value today and what the downgrade would remove from them.",
		warning: "The economic buyer stops coming to reviews, or usage falls in the teams you counted on.",
		propose: "Offer a right-sized plan that keeps the core value rather than losing the account; expand again when budgets return.",
	},
	"adoption": {
		read:    "Usage is thin, so the customer has not yet reached the value they bought; fix adoption before anything else.",
		first:   "Find the one outcome the customer bought for and the few users who already reach it, and learn what they do differently.",
		warning: "Logins drop for two weeks in a row, or invited users never complete their first task.",
		propose: "Propose more only when the teams using it hit a limit of what they have.",
	},
	"expansion": {
		read:    "The customer is happy, which is the moment to ask what they would do with more, not to push a bigger plan.",
		first:   "Agree with your contact on the result they already have and the next outcome they want.",
		warning: "Interest in more does not come with a named owner or a budget line.",
		propose: "Propose the add-on when they hit a limit or name the next outcome, tied to that outcome and its number.",
	},
	"renewal": {
		read:    "The renewal is coming, so make sure the customer can state the value they got before the price is discussed.",
		first:   "Prepare a one-page review of what they achieved, in their own numbers, and share it before the renewal call.",
		warning: "The renewal call keeps moving, or new people join it without explanation.",
		propose: "Raise expansion after the renewal is agreed, tied to the next outcome they want.",
	},
	"": {
		read:    "Separate two questions: has the customer reached the outcome they bought for, and is their usage growing or flat?",
		first:   "Agree with your contact on the one outcome that matters and the number that shows it.",
		warning: "The champion goes quiet, logins drop for two weeks in a row, or support tickets turn into complaints.",
		propose: "Propose expansion when the outcome is proven and the customer is hitting a limit of what they have, not on a calendar date.",
	},
}

func (t turn) success() string {
	var b strings.Builder
	p := t.newPicker()
	play := successPlays[t.stage().id]
	fw := t.frameworks()

	b.WriteString("## Where the account stands\n")
	t.acknowledgeTried(&b)
	fmt.Fprintf(&b, "\"%s\": %s\n\n", upperFirst(t.symptom()), lowerFirst(play.read))
	for _, s := range p.best(fw, 1, "idea", "summary") {
		fmt.Fprintf(&b, "The lens to use: %s\n\n", cite(s))
	}

	b.WriteString("## The plan\n")
	steps := []string{}
	if p.fresh(play.first) {
		steps = append(steps, play.first)
	}
	steps = append(steps, t.diagnosisSteps(p, 2)...)
	for _, s := range p.best(fw, 4-len(steps), "idea") {
		steps = append(steps, cite(s))
	}
	for i, s := range steps {
		fmt.Fprintf(&b, "%d. %s\n", i+1, s)
	}

	b.WriteString("\n## Signals to watch\n")
	for _, m := range t.metrics(2) {
		fmt.Fprintf(&b, "- %s\n", m)
	}
	fmt.Fprintf(&b, "- Warning signs: %s\n", lowerFirst(play.warning))
	for _, s := range p.best(fw, 1, "pitfall") {
		fmt.Fprintf(&b, "- A common mistake: %s\n", lowerFirst(cite(s)))
	}

	b.WriteString("\n## When to propose more\n")
	b.WriteString(play.propose)
	for _, s := range p.best(t.supporting(), 1, "idea", "summary") {
		fmt.Fprintf(&b, " Why it works: %s", cite(s))
	}
	return strings.TrimSpace(b.String())
}
