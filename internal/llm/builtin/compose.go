package builtin

import (
	"fmt"
	"sort"
	"strings"

	"github.com/constraintlab/assistant/internal/chat"
	"github.com/constraintlab/assistant/internal/textproc"
)

// compose writes the answer in the persona's sections from what the tools
// returned. Sentences taken from an entity carry its citation token; advice
// the catalog composes for the situation (steps, metrics) does not, since
// it is not a claim about the cited work.
func (t turn) compose() string {
	if len(t.entities) == 0 && t.diagnosis == nil {
		return t.nothingFound()
	}
	switch t.mode {
	case "customer":
		return t.customer()
	case "support":
		return t.supportAnswer()
	case "success":
		return t.success()
	}
	return t.operator()
}

func (t turn) nothingFound() string {
	return "## What I can say\n" +
		"The knowledge base has nothing that matches \"" + topic(t.question) + "\" closely enough to ground an answer, and I will not guess.\n\n" +
		"## What would help\n" +
		"- Describe the situation in a sentence or two: what you sell, where work or customers pile up, and which number worries you.\n" +
		"- Or name the framework, paper or essay you have in mind."
}

// claim renders a sentence of an entity with its citation: "text [tok]."
func claim(e chat.EntityResult, text string) string {
	text = strings.TrimSpace(text)
	end := "."
	if n := len(text); n > 0 && strings.ContainsAny(text[n-1:], ".!?") {
		end = text[n-1:]
		text = text[:n-1]
	}
	return text + " [" + e.Token + "]" + end
}

func idea(e chat.EntityResult, i int) string {
	if len(e.KeyIdeas) == 0 {
		return claim(e, firstSentence(e.Summary))
	}
	return claim(e, e.KeyIdeas[i%len(e.KeyIdeas)])
}

func firstSentence(s string) string {
	if sentences := textproc.Sentences(s); len(sentences) > 0 {
		return sentences[0]
	}
	return s
}

// topic is the question as the answer quotes it back.
func topic(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	if i := strings.IndexAny(q, ".?!"); i > 20 {
		q = q[:i]
	}
	if len(q) > 140 {
		cut := strings.LastIndex(q[:140], " ")
		q = q[:max(cut, 60)] + "…"
	}
	return strings.TrimRight(q, ".?! ")
}

func percent(p float64) int { return int(p*100 + 0.5) }

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// frameworks and supports split the entities read.
func (t turn) frameworks() []chat.EntityResult {
	var out []chat.EntityResult
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

func (t turn) supporting() []chat.EntityResult {
	var out []chat.EntityResult
	for _, e := range t.entities {
		if !strings.HasPrefix(e.Token, "framework:") {
			out = append(out, e)
		}
	}
	return out
}

// --- operator: diagnose the constraint, prescribe, measure ---

func (t turn) operator() string {
	var b strings.Builder
	fw := t.frameworks()
	d := t.diagnosis

	b.WriteString("## The constraint\n")
	if d != nil && !t.confident() {
		fmt.Fprintf(&b, "From \"%s\" alone I cannot tell the constraint with confidence. The likeliest is **%s** (%d%%): %s",
			topic(t.question), strings.ToLower(d.Matches[0].Name), percent(d.Matches[0].Probability), lowerFirst(d.Matches[0].Description))
		if len(d.Matches) > 1 {
			fmt.Fprintf(&b, " Next comes %s (%d%%).", lowerFirst(d.Matches[1].Name), percent(d.Matches[1].Probability))
		}
		b.WriteString(" Tell me which number moved (sales, cash, lead time, churn) and where work or customers pile up, and I will narrow it down.\n\n")
		if len(fw) > 0 {
			fmt.Fprintf(&b, "Meanwhile, the closest match in the knowledge base is %s: %s\n\n", fw[0].Title, claim(fw[0], lowerFirst(pick(fw[0].WhenToUse, 0))))
		}
	} else if d != nil {
		top := d.Matches[0]
		fmt.Fprintf(&b, "**%s.** %s\n\n", top.Name, top.Description)
		fmt.Fprintf(&b, "From what you describe (\"%s\"), this is the constraint to work on first", topic(t.question))
		fmt.Fprintf(&b, ": %d%% likely, %s confidence", percent(top.Probability), d.Band)
		if len(d.Matches) > 1 {
			fmt.Fprintf(&b, "; the next candidate is %s (%d%%)", lowerFirst(d.Matches[1].Name), percent(d.Matches[1].Probability))
		}
		b.WriteString(".")
		if top.Evidence != "" {
			fmt.Fprintf(&b, " It matches the pattern owners describe as \"%s\".", top.Evidence)
		}
		b.WriteString("\n\n")
	} else if len(fw) > 0 {
		fmt.Fprintf(&b, "\"%s\" reads like the situation %s is built for: %s\n\n", topic(t.question), fw[0].Title,
			claim(fw[0], lowerFirst(pick(fw[0].WhenToUse, 0))))
	}

	b.WriteString("## Why it binds\n")
	if t.confident() {
		b.WriteString(d.Applications[0].Application + "\n\n")
	}
	for i, e := range fw[:min(2, len(fw))] {
		fmt.Fprintf(&b, "- %s\n", idea(e, i))
	}
	for _, e := range t.supporting()[:min(1, len(t.supporting()))] {
		fmt.Fprintf(&b, "- %s\n", idea(e, 0))
	}
	b.WriteString("\n## What to do first\n")
	steps := t.steps()
	for i, s := range steps[:min(4, len(steps))] {
		fmt.Fprintf(&b, "%d. %s\n", i+1, s)
	}
	if len(fw) > 0 && len(fw[0].Pitfalls) > 0 {
		fmt.Fprintf(&b, "\nA trap to avoid: %s\n", claim(fw[0], lowerFirst(fw[0].Pitfalls[0])))
	}

	b.WriteString("\n## What to measure\n")
	metrics := t.metrics()
	for _, m := range metrics[:min(4, len(metrics))] {
		fmt.Fprintf(&b, "- %s\n", m)
	}
	if len(metrics) > 0 {
		fmt.Fprintf(&b, "\nRead them weekly. If %s has not moved after two or three weeks of the first steps, the constraint is elsewhere", lowerFirst(metrics[0]))
		if d != nil && len(d.Matches) > 1 {
			fmt.Fprintf(&b, ": look next at %s", lowerFirst(d.Matches[1].Name))
		}
		b.WriteString(".\n")
	}
	return strings.TrimSpace(b.String())
}

// steps are the first moves: the diagnosis's steps in the vertical's
// terms, or, without a diagnosis, the framework's own ideas turned to
// action.
func (t turn) steps() []string {
	var out []string
	if d := t.diagnosis; t.confident() {
		for _, a := range d.Applications[:min(2, len(d.Applications))] {
			out = append(out, a.FirstSteps[:min(2, len(a.FirstSteps))]...)
		}
	}
	if len(out) == 0 {
		for _, e := range t.frameworks()[:min(2, len(t.frameworks()))] {
			out = append(out, "Apply "+e.Title+" to this case: "+idea(e, 0))
		}
	}
	return out
}

func (t turn) metrics() []string {
	var out []string
	seen := map[string]bool{}
	add := func(m string) {
		if m != "" && !seen[strings.ToLower(m)] {
			seen[strings.ToLower(m)] = true
			out = append(out, m)
		}
	}
	if d := t.diagnosis; t.confident() {
		for _, a := range d.Applications[:min(1, len(d.Applications))] {
			for _, m := range a.Metrics {
				add(m)
			}
		}
		for _, m := range d.Metrics {
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

// archetypeMetric is the number that shows each constraint moving, for
// the personas that do not run a diagnosis.
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

func pick(list []string, i int) string {
	if len(list) == 0 {
		return ""
	}
	return list[i%len(list)]
}

// --- customer: a talk track for a sales conversation ---

func (t turn) customer() string {
	var b strings.Builder
	fw := t.frameworks()
	lead := fw[0]
	fmt.Fprintf(&b, "## Open with\n")
	fmt.Fprintf(&b, "Start from the buyer's situation, not the product. For \"%s\", say what you have noticed and ask whether it matches: \"Before I show anything, can I check what this is costing you today?\"\n\n", topic(t.question))
	fmt.Fprintf(&b, "The thinking behind the talk track: %s\n\n", idea(lead, 0))

	b.WriteString("## Questions to ask\n")
	b.WriteString("- \"What happens today when this goes wrong, and who feels it first?\"\n")
	b.WriteString("- \"What have you tried already, and why did it not stick?\"\n")
	b.WriteString("- \"If this were solved by next quarter, which number would be different?\"\n")
	if len(lead.KeyIdeas) > 1 {
		fmt.Fprintf(&b, "- Listen for the pattern %s names: %s\n", lead.Title, idea(lead, 1))
	}

	b.WriteString("\n## How to frame the value\n")
	for i, e := range fw[1:min(3, len(fw))] {
		fmt.Fprintf(&b, "- %s\n", idea(e, i))
	}
	for _, e := range t.supporting()[:min(1, len(t.supporting()))] {
		fmt.Fprintf(&b, "- What buyers respond to: %s\n", idea(e, 0))
	}
	b.WriteString("- Put a number on it in their terms: hours saved, revenue recovered or risk removed per month, using the figures they gave you.\n")

	b.WriteString("\n## Objections to expect\n")
	for _, e := range fw[:min(2, len(fw))] {
		if len(e.Pitfalls) > 0 {
			fmt.Fprintf(&b, "- Where this conversation usually goes wrong: %s\n", claim(e, lowerFirst(e.Pitfalls[0])))
		}
	}
	b.WriteString("- \"It's too expensive\": go back to the cost of the problem they quantified, not to a discount.\n")
	b.WriteString("- \"Not now\": ask what would have to be true for it to be the right time, and agree when to check.\n")

	b.WriteString("\n## Close on\n")
	b.WriteString("1. Sum up the problem in the buyer's words and the number they put on it.\n")
	b.WriteString("2. Propose one concrete next step: a named person, a date, and what each side brings.\n")
	b.WriteString("3. Send a short written recap the same day, so their champion can forward it.\n")
	b.WriteString("\nMeasure the talk track by how many first conversations turn into a second meeting or a proposal, and review the ones that did not.")
	if ms := t.metrics(); len(ms) > 0 {
		fmt.Fprintf(&b, " On their side, the number to move is: %s.", lowerFirst(ms[0]))
	}
	return strings.TrimSpace(b.String())
}

// --- support: a troubleshooting path ---

func (t turn) supportAnswer() string {
	var b strings.Builder
	fw := t.frameworks()
	lead := fw[0]
	b.WriteString("## What is going on\n")
	fmt.Fprintf(&b, "\"%s\" is a symptom; treat it as a process problem until proven otherwise. ", topic(t.question))
	fmt.Fprintf(&b, "The closest pattern in the knowledge base: %s\n\n", claim(lead, lowerFirst(pick(lead.WhenToUse, 0))))

	b.WriteString("## Check first\n")
	b.WriteString("1. Reproduce it: write down the exact steps, what was expected and what happened instead.\n")
	b.WriteString("2. Find when it started and what changed just before (a release, a setting, a supplier, a new person).\n")
	b.WriteString("3. Count how often it happens and to whom, so you know whether it is one case or a pattern.\n")

	b.WriteString("\n## Fix it step by step\n")
	n := 1
	for i, e := range fw[:min(2, len(fw))] {
		for j := 0; j < 2 && j < len(e.KeyIdeas); j++ {
			fmt.Fprintf(&b, "%d. %s\n", n, idea(e, i+j))
			n++
		}
	}
	fmt.Fprintf(&b, "%d. Write the fix into the checklist or help article people actually use, so it stays fixed.\n", n)

	b.WriteString("\n## If that does not work\n")
	for _, e := range fw[:min(2, len(fw))] {
		if len(e.Pitfalls) > 0 {
			fmt.Fprintf(&b, "- Check you have not fallen into this: %s\n", claim(e, lowerFirst(e.Pitfalls[0])))
		}
	}
	for _, e := range t.supporting()[:min(1, len(t.supporting()))] {
		fmt.Fprintf(&b, "- Background worth reading: %s\n", idea(e, 0))
	}
	b.WriteString("- Escalate with the reproduction steps and the count from the checks above, not just the complaint.\n")

	b.WriteString("\n## How you will know it is fixed\n")
	b.WriteString("- Repeat contacts about this issue fall to zero over the next two weeks.\n")
	for _, m := range t.metrics()[:min(2, len(t.metrics()))] {
		fmt.Fprintf(&b, "- %s\n", m)
	}
	return strings.TrimSpace(b.String())
}

// --- success: an adoption or expansion plan ---

func (t turn) success() string {
	var b strings.Builder
	fw := t.frameworks()
	lead := fw[0]
	b.WriteString("## Where the account stands\n")
	fmt.Fprintf(&b, "For \"%s\", separate two questions: has the customer reached the outcome they bought for, and is their usage growing or flat? ", topic(t.question))
	fmt.Fprintf(&b, "The lens to use: %s\n\n", idea(lead, 0))

	b.WriteString("## The plan\n")
	b.WriteString("1. Weeks 1-2: agree with the champion on the one outcome that matters and the number that shows it; get them to first value on it.\n")
	if len(fw) > 1 {
		fmt.Fprintf(&b, "2. Weeks 3-6: build the habit around that outcome. %s\n", idea(fw[1], 0))
	} else {
		fmt.Fprintf(&b, "2. Weeks 3-6: build the habit around that outcome. %s\n", idea(lead, 1))
	}
	fmt.Fprintf(&b, "3. Weeks 7-12: review results with the economic buyer and show the gain in their own numbers. %s\n", idea(lead, 2))

	b.WriteString("\n## Signals to watch\n")
	for _, m := range t.metrics()[:min(3, len(t.metrics()))] {
		fmt.Fprintf(&b, "- %s\n", m)
	}
	b.WriteString("- Warning signs: the champion goes quiet, logins drop for two weeks in a row, or support tickets turn into complaints.\n")
	for _, e := range fw[:min(1, len(fw))] {
		if len(e.Pitfalls) > 0 {
			fmt.Fprintf(&b, "- A common mistake: %s\n", claim(e, lowerFirst(e.Pitfalls[0])))
		}
	}

	b.WriteString("\n## When to propose more\n")
	b.WriteString("Propose expansion when the outcome is proven and the customer is hitting a limit of what they have, not on a calendar date. ")
	for _, e := range t.supporting()[:min(1, len(t.supporting()))] {
		fmt.Fprintf(&b, "Why it works: %s ", idea(e, 0))
	}
	b.WriteString("Tie the proposal to the next outcome they want.")
	return strings.TrimSpace(b.String())
}
