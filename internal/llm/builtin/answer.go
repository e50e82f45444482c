package builtin

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/constraintlab/assistant/internal/persona"
	"github.com/constraintlab/assistant/internal/textproc"
	"github.com/constraintlab/assistant/internal/tooling"
)

// compose writes the answer: a decline out of scope; otherwise the
// persona's sections, each filled as its record says from the sentences of
// the entities read (cited) and the persona's questions, with a section
// that has nothing to hold left out. When what the answer can cite does
// not address what was asked, it says so, offers the nearest knowledge as
// the nearest, and asks what would settle it.
func (t turn) compose() string {
	switch {
	case !t.inScope():
		return t.decline()
	case t.productQuestionWithoutDocs():
		return t.declineProduct()
	case t.persona.ProductDocs && t.reading.HowTo && t.importedLeads():
		return t.howTo(t.entities[0])
	case len(t.entities) == 0:
		return t.nearest(nil)
	}
	p := t.newPicker()
	var sections []string
	for _, s := range t.persona.Sections {
		if body := t.fill(s, p); body != "" {
			sections = append(sections, "## "+t.heading(s)+"\n"+body)
		}
	}
	relevance, missing := t.reading.Addressed(p.addresses)
	// A clear diagnosis matched the situation itself, not only its words:
	// its frameworks' steps answer even when they share few words with
	// the question (the confidence still says how little they share).
	addressed := relevance >= nearestBelow || t.diagnosisLeads()
	// Warnings alone (pitfalls, with nothing found or to do) tell the
	// user what not to do about a question the knowledge does not answer.
	warnsOnly := !slices.ContainsFunc(p.chosen, func(s sentence) bool { return s.kind != "pitfall" })
	if len(p.chosen) < 2 || warnsOnly {
		return t.nearest(p)
	}
	var b strings.Builder
	t.preface(&b)
	if !addressed {
		// Sentences were found but hardly any of the question's words are
		// in them: say so before them, as the nearest the knowledge base
		// has, rather than offering one sentence that reads as a refusal.
		b.WriteString("The knowledge base holds nothing that speaks closely to this question; the nearest it has:\n\n")
	} else if notes := t.saidNow(t.industryWords(t.weighty(missing))); relevance < noteBelow && len(notes) > 0 {
		// Partly addressed: say plainly which industry the knowledge
		// holds nothing specific on before what it does hold. (Any rare
		// business word was named until a rater found most such notes
		// odd: a word cut from its phrase, "timers" from "part-timers",
		// "dark" from "went dark".)
		fmt.Fprintf(&b, "The knowledge base holds nothing specific on %s; the nearest it has:\n\n", quoteList(notes[:min(3, len(notes))]))
	}
	b.WriteString(strings.Join(sections, "\n\n"))
	if !addressed {
		b.WriteString("\n\n" + t.settleSection())
	}
	return strings.TrimSpace(b.String())
}

// The answer-level relevance bands of the builtin's own composition (the
// share of the question's key terms, by importance, that the cited
// sentences address): below nearestBelow it says first that nothing
// speaks closely to the question, gives what it found as the nearest
// knowledge and ends with the question that would settle it (with fewer
// than two sentences found, it offers only the nearest one: nearest);
// below noteBelow it opens by naming the industry the knowledge base
// holds nothing specific on. (nearestBelow was 0.12: readers took the
// short nearest-knowledge answer for a refusal, and 29 answers it had
// covered, composed in full instead, were rated 2.48 against 1.79; below
// it, the full form rated 1.67 against the one sentence's 1.41.)
const (
	nearestBelow = 0.05
	noteBelow    = 0.4
)

// rareFrom is the specificity from which a word counts as rare in the
// knowledge base: no entity or one uses it. The answer says the knowledge
// base holds nothing specific on such a word, so it must be true of the
// whole knowledge base, not only of what was cited (at 0.75, a handful of
// entities, it named "menu" beside a menu-engineering card and "saas"
// beside six cards tagged with it).
const rareFrom = 1

// weighty keeps the missing words worth naming as ones the knowledge base
// holds nothing on: rare in it, and a business or industry word, in the
// order given.
func (t turn) weighty(words []string) []string {
	named := map[string]bool{}
	for _, k := range t.reading.KeyTerms {
		// What was already tried is acknowledged, not looked up: it is
		// never "missing" from the knowledge base. A word many entities
		// use ("client", "revenue") is not one the knowledge base holds
		// nothing on, however little the cited sentences say of it; and
		// only a word that names something of a business or its industry
		// is worth naming ("gmv", "courier"), not an ordinary one ("took").
		if !slices.Contains(t.reading.TriedTerms, k.Stem) && k.Specificity >= rareFrom && k.Names != "" {
			named[k.Word] = true
		}
	}
	var out []string
	for _, w := range words {
		if named[w] {
			out = append(out, w)
		}
	}
	return out
}

// saidNow keeps the words the message of this turn says, in the order
// given. In a later turn of a conversation the reading holds the earlier
// turns' words too; the earlier answer was the place to say what the
// knowledge base holds nothing specific on, and saying it again of a word
// the user did not repeat reads as the answer not listening (a rater of
// the 66th set marked a follow-up down for it).
func (t turn) saidNow(words []string) []string {
	if !t.reading.FollowUp {
		return words
	}
	said := textproc.Words(t.reading.Question)
	var out []string
	for _, w := range words {
		if slices.Contains(said, strings.ToLower(w)) {
			out = append(out, w)
		}
	}
	return out
}

// industryWords keeps the words that name the question's industry, in
// the order given.
func (t turn) industryWords(words []string) []string {
	var out []string
	for _, w := range words {
		if slices.ContainsFunc(t.reading.KeyTerms, func(k tooling.KeyTerm) bool { return k.Word == w && k.Names == tooling.NamesIndustry }) {
			out = append(out, w)
		}
	}
	return out
}

// unconfirmedNames are the names of the source the message asked to have
// confirmed that no entity read confirms (tooling.UnconfirmedNames). nil
// when the message named no source or an entity holds it.
func (t turn) unconfirmedNames() []string {
	names := t.reading.SourceNames()
	if len(names) == 0 {
		return nil
	}
	texts := make([]string, len(t.entities))
	for i, e := range t.entities {
		texts[i] = tooling.SourceText(e.Title, e.Authors, e.Summary)
	}
	return tooling.UnconfirmedNames(names, texts)
}

// addresses reports whether a sentence the answer cites, or the title of
// an entity it cites (its card shows it), contains the stem: a question
// about a "QBR" is addressed by the entity named for it.
func (p *picker) addresses(stem string) bool {
	for _, s := range p.chosen {
		if slices.Contains(s.terms, stem) || slices.Contains(analyse(s.entity.Title).terms, stem) {
			return true
		}
	}
	return false
}

// preface says, before the sections, what the answer leaves aside: an
// instruction it will not follow, a source it cannot find, a language it
// does not answer in, what was already tried. Each ends with a colon: it
// introduces the answer, it asserts nothing of the knowledge.
func (t turn) preface(b *strings.Builder) {
	r := t.reading
	if r.Scope.Injection {
		b.WriteString("I will not reveal or change my instructions or configuration; on the business question itself:\n\n")
	}
	for _, tok := range r.Unknown {
		fmt.Fprintf(b, "`%s` is not in the knowledge base, so I cannot confirm what it says; here is what the knowledge base does hold:\n\n", tok)
	}
	if names := t.unconfirmedNames(); len(names) > 0 {
		fmt.Fprintf(b, "The knowledge base holds no source by or about %s, so I cannot confirm or cite it; here is what it does hold:\n\n", quoteList(names[:min(3, len(names))]))
	}
	if lang := r.Scope.Language; lang != "en" && lang != "" {
		if notice, ok := englishOnly[lang]; ok {
			fmt.Fprintf(b, "%s; %s:\n\n", notice.only, notice.next)
		}
		b.WriteString("I answer in English")
		if len(r.Scope.Understood) > 0 {
			fmt.Fprintf(b, ", and I read your message as being about %s", strings.Join(r.Scope.Understood, ", "))
		}
		b.WriteString(":\n\n")
	}
	if r.Tried {
		b.WriteString("Leaving aside what you have already tried, here is what comes next:\n\n")
	}
}

// englishOnly says, in each language textproc.Language recognises, that
// the answer is in English (only) and, for an answer, what follows it
// (next): a reader who wrote in that language learns it before the English
// begins. Neither asserts anything of the knowledge.
var englishOnly = map[string]struct{ only, next string }{
	"es": {"Solo puedo responder en inglés", "a continuación, lo que la base de conocimientos tiene sobre su pregunta"},
	"fr": {"Je ne peux répondre qu'en anglais", "voici ce que la base de connaissances contient sur votre question"},
	"de": {"Ich kann nur auf Englisch antworten", "hier folgt, was die Wissensbasis zu Ihrer Frage enthält"},
	"it": {"Posso rispondere solo in inglese", "ecco che cosa contiene la base di conoscenza sulla sua domanda"},
	"pt": {"Só consigo responder em inglês", "a seguir, o que a base de conhecimento tem sobre a sua pergunta"},
	"nl": {"Ik kan alleen in het Engels antwoorden", "hieronder staat wat de kennisbank over uw vraag bevat"},
}

// heading is the section's heading, with the diagnosed constraint where
// the persona's record asks for it: named when the diagnosis is clear, as
// a question between the two likeliest when it is not.
func (t turn) heading(s persona.Section) string {
	d := t.diagnosis
	if !s.NamesDiagnosis || d == nil {
		return s.Heading
	}
	if t.diagnosisLeads() {
		return s.Heading + ": " + strings.ToLower(d.Matches[0].Name)
	}
	if len(d.Matches) > 1 {
		return fmt.Sprintf("%s: %s or %s?", s.Heading, strings.ToLower(d.Matches[0].Name), strings.ToLower(d.Matches[1].Name))
	}
	return s.Heading
}

// fill makes a section's lines from its fills, in order, up to its count.
func (t turn) fill(s persona.Section, p *picker) string {
	var lines []string
	if s.NamesDiagnosis && t.diagnosis != nil && !t.diagnosisLeads() && len(t.diagnosis.Matches) > 1 {
		lines = append(lines, t.tellApart())
	}
	for _, f := range s.Fill {
		if len(lines) >= s.Count {
			break
		}
		lines = append(lines, t.fillLines(f, s.Count-len(lines), p)...)
	}
	if len(lines) == 0 {
		return ""
	}
	var b strings.Builder
	for i, l := range lines {
		if s.Numbered {
			fmt.Fprintf(&b, "%d. %s\n", i+1, l)
		} else {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// tellApart is the question that tells the two likeliest constraints
// apart, in the catalog's words for each.
func (t turn) tellApart() string {
	m := t.diagnosis.Matches
	describe := func(i int) string {
		d := strings.TrimRight(m[i].Description, ". ")
		if d == "" {
			return strings.ToLower(m[i].Name)
		}
		return lowerFirst(d)
	}
	return fmt.Sprintf("Which is closer to what you see: %s, or %s?", describe(0), describe(1))
}

// fillLines makes up to n lines of one kind.
func (t turn) fillLines(kind string, n int, p *picker) []string {
	var out []string
	citeAll := func(list []sentence) {
		for _, s := range list {
			out = append(out, cite(s))
		}
	}
	switch kind {
	case "application":
		citeAll(p.best(t.diagnosed(), n, true, "application"))
	case "ideas":
		// What explains the situation: statements, not instructions
		// (those are the steps) nor questions.
		citeAll(p.pick(t.fitting(p), n, pickRule{loose: true, least: minOverlap, statements: true, noActions: true}, "application", "idea", "summary"))
	case "steps":
		// Only what says what to do: the catalog's first steps, and key
		// ideas that open with a verb of advice; the best-fitting
		// framework's even where they share few words with the question.
		citeAll(p.pick(p.instructing(t.fitting(p), stepsFrom), n, pickRule{loose: true, least: minOverlap, actionsOnly: true}, "step", "idea"))
	case "pitfalls":
		citeAll(p.best(t.fitting(p), n, false, "pitfall"))
	case "evidence":
		// What a paper or essay found or argues: its key ideas and
		// summary, stated, not asked. Its "when to use" lines are
		// situations in a user's words, not findings, so they never stand
		// as evidence.
		citeAll(p.pick(t.supporting(), min(n, 1), pickRule{least: minOverlap, statements: true}, "idea", "summary"))
	case "metrics":
		// Only the numbers that bear on what was asked: the catalog lists
		// every number of a constraint, and a list that ignores the
		// question is noise the reader has to skip. A clear diagnosis
		// matched the situation itself, so its first two stand whatever
		// their words.
		//
		// The vertical's numbers and the constraint's often name the same
		// one twice ("lead time and backlog in weeks", "lead time from
		// order to delivery"): a number that shares two words with one
		// listed already is left out.
		var listed [][]string
		for i, m := range t.metrics() {
			terms := analyse(m).terms
			if slices.ContainsFunc(listed, func(l []string) bool { return sharedCount(l, terms) >= 2 }) {
				continue
			}
			if len(out) < n && (p.shares(m) || i < 2 && t.diagnosisLeads()) && p.fresh(m) {
				out = append(out, upperFirst(m))
				listed = append(listed, terms)
			}
		}
	case "questions", "checks":
		// The questions a fitting framework's card asks come first, cited:
		// they belong to the knowledge that answers. The persona's own
		// questions follow; past the first, only those that share
		// something with what was asked.
		// Under its own heading, a card's "Questions to ask...: ..." is
		// quoted from its first question on.
		for _, s := range p.pick(t.fitting(p), min(n, 1), pickRule{least: minOverlap, questions: true}, "idea") {
			out = append(out, citeText(s.entity.Token, askedQuestions(s.text)))
		}
		for i, q := range t.rankedQuestions() {
			first := i == 0 && len(out) == 0 // the answer's first question stands alone
			if len(out) >= n || !first && !p.shares(q) {
				break
			}
			if p.fresh(q) {
				if kind == "questions" {
					q = "\"" + q + "\""
				}
				out = append(out, q)
			}
		}
	}
	return out
}

// rankedQuestions are the situation's questions, those that share the
// most with the question first (the persona's order breaks ties).
func (t turn) rankedQuestions() []string { return t.ranked(t.situationQuestions()) }

// ranked orders questions by what they share with the question, most
// first (the given order breaks ties).
func (t turn) ranked(questions []string) []string {
	qs := slices.Clone(questions)
	weight := map[string]float64{}
	for _, k := range t.reading.KeyTerms {
		weight[k.Stem] = k.Weight
	}
	score := func(q string) float64 {
		s := 0.0
		for _, term := range analyse(q).terms {
			s += weight[term]
		}
		return s
	}
	slices.SortStableFunc(qs, func(a, b string) int { return cmp.Compare(score(b), score(a)) })
	return qs
}

// situationQuestions are the questions of the persona's situation the
// question shows, or of its default situation, or, for a persona with
// none, the questions that settle any question of its kind.
func (t turn) situationQuestions() []string {
	id := t.reading.Situation
	if s := t.persona.Situation(id); len(s.Questions) > 0 {
		return s.Questions
	}
	if t.persona.DefaultSituation == "" {
		return t.persona.Settle
	}
	return t.persona.Situation(t.persona.DefaultSituation).Questions
}

// metrics are the numbers to watch: the diagnosis's (the vertical's own
// first) when the diagnosis applies to the answer.
func (t turn) metrics() []string {
	if !t.diagnosisApplies() {
		return nil
	}
	d := t.diagnosis
	return slices.Concat(d.Metrics, d.Applications[0].Metrics)
}

// diagnosisApplies reports whether the diagnosis's applications and
// metrics belong in the answer: when it leads, or when its likeliest
// constraint is one the knowledge read serves.
func (t turn) diagnosisApplies() bool {
	d := t.diagnosis
	if d == nil || len(d.Applications) == 0 {
		return false
	}
	applies := t.diagnosisLeads()
	for _, e := range t.entities {
		applies = applies || slices.Contains(e.Archetypes, d.Matches[0].ArchetypeID)
	}
	return applies
}

// nearest is the answer when what the knowledge base holds does not
// address the question: it says so, names what it found nothing on,
// offers the nearest sentence it has as the nearest, and asks what would
// settle it.
func (t turn) nearest(p *picker) string {
	var b strings.Builder
	t.preface(&b)
	b.WriteString("## What the knowledge base covers\n")
	if p == nil {
		p = t.newPicker() // it has chosen nothing: every key term is missing
	}
	_, missing := t.reading.Addressed(p.addresses)
	missing = t.weighty(missing) // an unconfirmed source is named by the preface
	if len(missing) > 0 {
		fmt.Fprintf(&b, "It holds nothing that speaks to %s", quoteList(missing[:min(3, len(missing))]))
	} else {
		b.WriteString("It holds nothing that speaks to this question closely enough to ground an answer")
	}
	var best []sentence
	if len(t.entities) > 0 {
		best = p.best(t.frameworks(), 1, true, "idea", "summary")
	}
	if len(best) > 0 {
		fmt.Fprintf(&b, "; the nearest it has, from %s:\n- %s\n", best[0].entity.Title, cite(best[0]))
	} else {
		b.WriteString(".\n") // nothing to offer: no colon introducing nothing
	}
	b.WriteString("\n" + t.settleSection())
	return strings.TrimSpace(b.String())
}

// settleSection is the section that closes an answer the knowledge does
// not cover: the question that would settle it.
func (t turn) settleSection() string {
	return "## What would settle it\n- " + t.settleQuestion()
}

// settleQuestion is the persona's question that would settle an answer
// the knowledge does not cover: the one that shares most with the
// question, never one asking what was tried when the user said it.
func (t turn) settleQuestion() string {
	qs := t.ranked(t.persona.Settle)
	for _, q := range qs {
		if !t.reading.Tried || !strings.Contains(strings.ToLower(q), "tried") {
			return q
		}
	}
	return qs[0]
}

// decline answers a question outside the knowledge base's scope: the
// subject's note when it has one (to get medical help, for health), then
// what the persona helps with, in its voice, citing nothing. Where someone
// may need help now (a person's health or safety), the note comes first
// and the persona's offer is left out.
func (t turn) decline() string {
	var b strings.Builder
	s := t.reading.Scope
	if s.CareUrgent {
		// Someone may need help now: that comes first, before anything
		// said of the message's instructions, and nothing is said of what
		// else the assistant does.
		fmt.Fprintf(&b, "%s %s is outside what I can advise on, so I will not guess at it.", s.CareNote, cmp.Or(s.CareSubject, "That"))
		if s.Injection {
			b.WriteString(" I will not reveal or change my instructions or configuration, or take on another role.")
		}
		return b.String()
	}
	if s.Injection {
		b.WriteString("I will not reveal or change my instructions or configuration, or take on another role. ")
	}
	switch {
	case s.Care != "":
		fmt.Fprintf(&b, "%s is outside what I can advise on, so I will not guess at it. ", cmp.Or(s.CareSubject, "That"))
		if s.CareNote != "" {
			b.WriteString(s.CareNote + " ")
		}
	case s.Language != "en" && s.Language != "":
		if notice, ok := englishOnly[s.Language]; ok {
			b.WriteString(notice.only + ". ")
		}
		b.WriteString("I answer in English, and I could not find a business question in your message that I can help with. ")
	default:
		b.WriteString("That is outside what I can help with, so I will not guess at it. ")
	}
	b.WriteString(t.persona.Help)
	return b.String()
}

// productQuestionWithoutDocs reports whether the question asks how to use
// the product while the knowledge base holds none of the product's own
// documentation that matches it: then the answer says so instead of
// bending a management framework to it.
func (t turn) productQuestionWithoutDocs() bool {
	return t.persona.ProductDocs && t.reading.HowTo && len(t.searches) > 0 && !t.importedLeads()
}

// declineProduct answers a how-to question about the user's own product
// when the knowledge base holds none of its documentation.
func (t turn) declineProduct() string {
	return t.persona.NoProductDocs
}

// importedLeads reports whether the workspace's own knowledge tops the
// search.
func (t turn) importedLeads() bool {
	return len(t.searches) > 0 && len(t.searches[0].Hits) > 0 && t.searches[0].Hits[0].Imported
}

// howTo answers a question about using the product from the workspace's
// own article, in the article's order: a how-to is followed step by step.
func (t turn) howTo(article entityResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## What is going on\nYour workspace's article \"%s\" covers this; its steps:\n\n", article.Title)
	steps := article.KeyIdeas
	summary := textproc.Sentences(article.Summary)
	if len(summary) > 1 {
		summary = summary[1:] // the first sentence says what the article is about
	}
	if len(steps) == 0 {
		steps, summary = summary, nil
	}
	b.WriteString("## Fix it step by step\n")
	for i, s := range steps {
		fmt.Fprintf(&b, "%d. %s\n", i+1, citeText(article.Token, s))
	}
	if rest := slices.Concat(article.Pitfalls, summary); len(rest) > 0 {
		b.WriteString("\n## If that does not work\n")
		for _, s := range rest {
			fmt.Fprintf(&b, "- %s\n", citeText(article.Token, s))
		}
	}
	return strings.TrimSpace(b.String())
}

// fitting are the frameworks read that fit the question, best first: each
// one's fit is the share of the question's key terms (by importance) that
// its text holds (its application to the diagnosed constraint included);
// a framework that fits much less well than the best (closeToBest), or
// hardly at all, or that is written for situations much less like the
// question's than another read (closeToBestWrittenFor), or that the
// search ranked below its first few hits while its title holds none of
// the question's key terms (searchTop), is left out (unless the question
// names it), so an entity the search ranked for a generic word does not
// speak; one a clear diagnosis applies to the situation stays. A
// framework written for a precondition the question does not show
// (entityResult.Presumes) stays out too, whenever another may speak.
func (t turn) fitting(p *picker) []*entityResult {
	if p.fitting == nil {
		p.fitting = t.byFit(p)
	}
	return p.fitting
}

// byFit orders and filters the frameworks read by their fit (fitting).
func (t turn) byFit(p *picker) []*entityResult {
	type scored struct {
		e       *entityResult
		fit     float64
		order   float64 // fit, with the search's ranking to break near ties
		written float64
		named   bool // the question names it (turn.named)
		// always: it speaks whatever its fit, named by the question or
		// applied by a clear diagnosis
		always bool
		aside  bool // off the search's first hits and its title off the question
		// presumed: written for a precondition the question does not
		// show (premiseUnshown)
		presumed bool
	}
	var list []scored
	best, bestWritten := 0.0, 0.0
	situation := textproc.SharedTerms(t.reading.SituationTerms)
	leads := t.diagnosisLeads()
	var question []string // the stems of what was asked, once a framework presumes something
	for _, e := range t.all() {
		sentences, title := p.sentencesOf(e), analyse(e.Title).terms
		// A scan rather than a set: the question has a handful of key
		// terms, and a set of the entity's terms would be built anew
		// for every framework of every turn.
		fit := t.reading.AddressedShare(func(stem string) bool { return holds(title, sentences, stem, "") })
		written := -1.0 // no situations listed (an imported article, say)
		if len(e.WhenToUse) > 0 {
			written = t.reading.AddressedShare(func(stem string) bool { return holds(title, sentences, stem, "when") })
			fit = (1-writtenForWeight)*fit + writtenForWeight*written
		}
		// The persona's situation the question shows (an upset customer,
		// a renewal at risk) is what the user needs, so a framework about
		// it fits even where the industry's words are not in it.
		fit += situationFitWeight * situationFit(situation, sentences, title)
		// The search ranked the whole entity against the whole question
		// (phrases, related concepts, its vocabulary): its order breaks
		// near ties that a share of single words cannot. It orders the
		// frameworks that fit; it never lets in one that does not.
		credit := t.searchRankCredit(e.Token)
		order := fit + searchRankWeight*credit
		// A framework the search placed below its first few hits, whose
		// title holds none of the question's key terms, shares words with
		// the question rather than its subject (a peak-season plan for a
		// refund policy, a first hire for idle vans): it stays out.
		aside := len(t.searches) > 0 && credit < 1/float64(searchTop) &&
			t.reading.AddressedShare(func(stem string) bool { return slices.Contains(title, stem) }) == 0
		named := t.named(e.Title)
		_, diagnosed := p.applied[e.Token]
		always := named || diagnosed && leads
		presumed := false
		if len(e.Presumes) > 0 {
			if question == nil {
				question = textproc.Stems(t.reading.Search)
			}
			presumed = !shows(question, e.Presumes)
		}
		list = append(list, scored{e, fit, order, written, named, always, aside, presumed})
	}
	// A framework written for a precondition the question does not show
	// (steps for a champion who has left, asked about a missed delivery)
	// answers a situation the asker is not in: it stays out, unless the
	// question names it or no framework that presumes nothing (or what
	// the question shows) may speak instead.
	if slices.ContainsFunc(list, func(s scored) bool { return !s.presumed && (s.always || !s.aside) }) {
		for i := range list {
			if list[i].presumed && !list[i].named {
				list[i].aside, list[i].always = true, false
			}
		}
	}
	// A framework that stays out sets no bar for the others: the best fit
	// and the best written-for are those of the frameworks that may speak.
	for _, s := range list {
		if s.always || !s.aside {
			best = max(best, s.fit)
			if s.written >= 0 {
				bestWritten = max(bestWritten, s.written)
			}
		}
	}
	// A framework the question names ("QBR") is what it asks about: it
	// leads, whatever its fit, so its sentences speak first.
	slices.SortStableFunc(list, func(a, b scored) int {
		if a.named != b.named {
			if a.named {
				return -1
			}
			return 1
		}
		return cmp.Compare(b.order, a.order)
	})
	out := []*entityResult{} // not nil: worked out
	for _, s := range list {
		// A framework the question names ("QBR") speaks whatever its fit,
		// and so does one a clear diagnosis applies.
		if s.always {
			out = append(out, s.e)
			continue
		}
		// Beside the best-fitting framework, one written for situations
		// much less like the question's than the best-written-for one is
		// (its title and "When to use" hold less than half the share of
		// the question's key terms) shares words with the question rather
		// than its situation: its steps would be padding.
		writtenForOthers := s.fit < best && s.written >= 0 && s.written < bestWritten*closeToBestWrittenFor
		// One the search ranked low and whose title is off the question
		// is aside (above).
		if s.fit >= minFit && s.fit >= best*closeToBest && !writtenForOthers && !s.aside {
			out = append(out, s.e)
		}
	}
	return out
}

// shows reports whether a question's stems (textproc.Stems) hold one of
// the phrases, each matched by its stems in order ("cancel" shows in "they
// cancelled").
func shows(question []string, phrases []string) bool {
	affirmed := func(at int) bool { return !negated(question, at) }
	return slices.ContainsFunc(phrases, func(phrase string) bool {
		return textproc.ContainsRunWhere(question, phraseStems.Get(phrase, textproc.Stems), affirmed)
	})
}

// phraseStems remembers the stems of premise phrases (textproc.Stems):
// the same few hundred phrases come with the frameworks every turn reads.
var phraseStems = texts[[]string](4096, 200, 0.01, 4)

// negated reports whether one of the two words before position i of a
// question's stems denies what follows ("without hiring", "we haven't
// lost any", "never cancelled"): a phrase said that way shows the
// opposite of the precondition.
func negated(question []string, i int) bool {
	return slices.ContainsFunc(question[max(0, i-2):i], func(stem string) bool { return negators[stem] })
}

// negators are the stems of the words that deny the phrase after them;
// "t" is what remains of "n't" once the words are split ("can't" is can,
// t).
var negators = map[string]bool{"without": true, "no": true, "not": true, "never": true, "t": true, "cannot": true, "nor": true}

// situationFit is the share of the situation's words (the stems of
// reading.SituationTerms) that an entity's sentences or title hold; 0
// when the question shows no situation.
func situationFit(terms []string, sentences []sentence, title []string) float64 {
	if len(terms) == 0 {
		return 0
	}
	found := 0
	for _, term := range terms {
		if holds(title, sentences, term, "") {
			found++
		}
	}
	return float64(found) / float64(len(terms))
}

// holds reports whether an entity's title or one of its sentences of the
// given kind ("" for any) holds a stem.
func holds(title []string, sentences []sentence, stem, kind string) bool {
	if slices.Contains(title, stem) {
		return true
	}
	for _, s := range sentences {
		if (kind == "" || s.kind == kind) && slices.Contains(s.terms, stem) {
			return true
		}
	}
	return false
}

// searchRankCredit is 1 for the first search's best hit, 1/2 for its
// second, 1/3 for its third and so on; 0 for an entity it did not find.
func (t turn) searchRankCredit(token string) float64 {
	if len(t.searches) == 0 {
		return 0
	}
	for i, h := range t.searches[0].Hits {
		if h.Token == token {
			return 1 / float64(i+1)
		}
	}
	return 0
}

// searchRankWeight is what the search's ranking counts for in the order
// of the frameworks that fit (40 answers rated blind in pairs went from
// 2.50 to 2.77 with it; docs/evaluation.md, "Fifteenth session").
const searchRankWeight = 0.15

// searchTop is how many of the search's first hits a framework must be
// among, unless its title holds one of the question's key terms, to speak
// (106 answers rated blind in pairs went from 2.48 to 2.65 with it, 33
// better and 16 worse; docs/evaluation.md, "Eighteenth session").
const searchTop = 3

// situationFitWeight is what the situation's share counts for in a
// framework's fit, beside the share of the question's key terms.
const situationFitWeight = 0.5

// writtenForWeight is the share of a framework's fit that comes from the
// situations it is written for (its title and "When to use"), against its
// whole text.
const writtenForWeight = 0.5

// closeToBestWrittenFor is how close to the best share of the question's
// key terms that a framework's title and "When to use" hold another's
// must come for it to speak beside the best-fitting framework (two packets
// of 40 answers rated blind in pairs went from 2.38 to 2.55 and from 2.42
// to 2.52 with it; docs/evaluation.md, "Ninth session").
const closeToBestWrittenFor = 0.5

// diagnosed are the frameworks read that the diagnosis applies, in the
// diagnosis's order: its application of each belongs to them, whatever
// their words share with the question.
func (t turn) diagnosed() []*entityResult {
	var out []*entityResult
	if !t.diagnosisApplies() {
		return nil
	}
	for _, a := range t.diagnosis.Applications {
		for i := range t.entities {
			if t.entities[i].Token == a.Token {
				out = append(out, &t.entities[i])
			}
		}
	}
	return out
}

// minFit is the least share of the question's key terms a framework's
// text must hold to speak in the answer; closeToBest how close to the
// best-fitting framework's fit another's must come (it was a half: 40
// answers rated blind in pairs went from 2.50 to 2.62 at 0.65).
const (
	minFit      = 0.1
	closeToBest = 0.65
)

// frameworks are the frameworks read (all entities read when there is no
// framework among them); supporting the papers and essays.
func (t turn) frameworks() []*entityResult {
	all := t.all()
	out := slices.DeleteFunc(slices.Clone(all), func(e *entityResult) bool { return !strings.HasPrefix(e.Token, "framework:") })
	if len(out) == 0 {
		return all
	}
	return out
}

func (t turn) supporting() []*entityResult {
	var out []*entityResult
	for i := range t.entities {
		if !strings.HasPrefix(t.entities[i].Token, "framework:") {
			out = append(out, &t.entities[i])
		}
	}
	return out
}

func quoteList(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "\"" + w + "\""
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// upperFirst capitalises the first letter of s.
func upperFirst(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[size:]
}

// lowerFirst lowercases the first letter of s unless its first word is an
// acronym or "I".
func lowerFirst(s string) string {
	first, _, _ := strings.Cut(s, " ")
	if first == "" || first == "I" {
		return s
	}
	r, size := utf8.DecodeRuneInString(first)
	if rest := first[size:]; rest != "" {
		if r2, _ := utf8.DecodeRuneInString(rest); unicode.IsUpper(r2) || unicode.IsDigit(r2) {
			return s
		}
	}
	return string(unicode.ToLower(r)) + s[size:]
}

// all are the entities read, in the order read.
func (t turn) all() []*entityResult {
	out := make([]*entityResult, len(t.entities))
	for i := range t.entities {
		out[i] = &t.entities[i]
	}
	return out
}
