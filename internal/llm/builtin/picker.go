package builtin

import (
	"cmp"
	"regexp"
	"slices"
	"strings"

	"github.com/constraintlab/assistant/internal/memo"
	"github.com/constraintlab/assistant/internal/persona"
	"github.com/constraintlab/assistant/internal/textproc"
	"github.com/constraintlab/assistant/internal/tooling"
)

var tokenPattern = regexp.MustCompile(`\[([a-z]+:[a-z0-9_-]+)\]`)

// yearPattern finds a year in a sentence.
var yearPattern = regexp.MustCompile(`\b(1[5-9]|20)\d\d\b`)

// aboutTheWork finds a sentence whose subject is the work itself, or that
// tells where an idea came from (who coined or popularised it, that it has
// no single author), or who the work is for ("For an owner facing an upset
// client, the article supplies..."), or that points at it from outside
// ("common practice well beyond that book"), or that explains a fact the
// card leaves out ("the year is left empty because..."): it describes the
// card, not the reader's business.
var aboutTheWork = regexp.MustCompile(`^(The|This|In the|Their|His|Her) (book|paper|article|essay|post|authors?|study|studies)\b|^(For|To) [^,]{3,140}, ((the|this) (book|paper|article|essay|post|study|review|practice|framework|method|model|theory|blueprint|work)|it \w+)\b|^The (practice|framework|method|model) is common\b|\brather than one author.s\b|\b(coined|populari[sz]ed|popularisation|popularization|originated)\b|\b(work|idea) of (one|a single) (author|person)\b|\bno single (author|originating)\b|\bthat (book|paper|article|essay|post|study)\b|\b(could not be confirmed|is left empty|are left empty)\b`)

// authorAtWork reports whether a sentence has one of the work's authors
// (by surname) going about the work: "Gurley reviews platforms across
// several industries", "Porter uses Southwest Airlines ... to show". It
// describes the work, like aboutTheWork's sentences.
func authorAtWork(authors []string, text string) bool {
	first, rest, ok := strings.Cut(text, " ")
	if !ok || !slices.ContainsFunc(authors, func(a string) bool {
		f := strings.Fields(a)
		return len(f) > 0 && f[len(f)-1] == first
	}) {
		return false
	}
	return authorGoesAbout.MatchString(rest)
}

// authorGoesAbout finds what follows an author's name in a sentence about
// how the work goes about its subject (authorAtWork).
var authorGoesAbout = regexp.MustCompile(`^(reviews|walks through|surveys|examines|recounts|draws (on|examples))\b|^uses [^.]{3,120}? to (show|explain|illustrate)\b`)

// danglingOpener finds a sentence that opens by pointing back at the one
// before it ("It...", "They...", "All three...", "This approach...", "The
// result...", "Each group...", "Hotels also...", "For an owner ..., it
// gives...", "For anyone setting prices, ..., it explains...", "Building
// on prospect theory, he also derived...", "Most startups, he found,
// ..."): quoted on its own, what it points at is missing.
var danglingOpener = regexp.MustCompile(`^(It|Its|It.s|Then|They|Their|Them|These|Those|This|That|Both|Such|He|She|His|Her|Each of (them|these)|Each (group|kind|type|one)|All (of them|two|three|four|five|six|seven)|The result)\b|^\S+ also\b|^(For|To) [^.]{3,200}?, it [a-z]+s\b|^[A-Z][^.]{2,160}?, (he|she) \b`)

// pointsElsewhere finds a sentence that names another entry of the
// knowledge base as such ("SMED, a separate entry, shortens each
// changeover"): it tells the reader of the card where to look, and
// quoted in an answer it speaks of an entry the answer does not cite.
var pointsElsewhere = regexp.MustCompile(`\ba separate entry\b`)

// pointsBackAfterVerb finds a step whose object points back at the step
// before it ("Divide them to...", "Compare it with...", "Add that
// percentage uplift to..."): the word after "that" tells the pronoun from
// the conjunction ("Check that the invoice...", which points at nothing).
var pointsBackAfterVerb = regexp.MustCompile(`^[A-Z][a-z]+ (it|them|these|those|that) (\w+)`)

// conjunctionFollowers are words that follow "that" as a conjunction
// ("Accept that some tools...") rather than as a pointer ("that
// throughput").
var conjunctionFollowers = map[string]bool{"the": true, "a": true, "an": true, "some": true, "every": true, "each": true,
	"all": true, "no": true, "any": true, "your": true, "you": true, "they": true, "it": true, "we": true, "most": true,
	"many": true, "few": true, "one": true, "this": true, "these": true, "those": true, "their": true, "its": true,
	"our": true, "there": true, "nobody": true, "none": true, "not": true, "he": true, "she": true, "customers": true,
	"people": true, "staff": true, "buyers": true}

// pointsBack reports whether a text reads as a verb whose object points
// back at the sentence before it (pointsBackAfterVerb). Only an
// instruction opens with a verb: a statement that matches opens with its
// subject ("Hotels that started responding..."), so sentence.leansBack
// asks it of instructions only.
func pointsBack(text string) bool {
	m := pointsBackAfterVerb.FindStringSubmatch(text)
	return m != nil && (m[1] != "that" || !conjunctionFollowers[strings.ToLower(m[2])])
}

// sentence is one citable sentence of an entity: every kind is shown on
// the entity's card (/resolve), so a reader can check it on hover; the
// catalog's application of a framework (kinds application and step) in
// neutral words there, in the vertical's words in the answer.
type sentence struct {
	entity *entityResult
	text   string
	*analysis
	kind string // idea, when, summary, pitfall
	// follows is the key of the step before it, for a step of the
	// catalog's sequence of first steps after the first ("Divide them to
	// get the burn multiple"): it is said only after that step.
	follows string
	score   float64
	strong  bool // shares at least minOverlap with the question
}

// analysis is what the picker compares of a text.
type analysis struct {
	key   string   // its words without citation tokens: how it is matched with what was already said
	words int      // its number of words
	terms []string // its distinct stems, in order of first use
	// history is whether, as a sentence of a summary, it tells the work's
	// history or provenance rather than anything to act on (sentences):
	// worked out once per text, since the regexps cost more than the rest
	// of the analysis.
	history bool
	// action is whether it opens with a verb of advice (persona.IsAction),
	// worked out once per text: every section's pick asks it of every
	// sentence read.
	action bool
	// dangling is whether it opens by pointing back at a sentence before
	// it (danglingOpener) or points to another entry (pointsElsewhere),
	// so it cannot be quoted alone.
	dangling bool
	// pointsBack is whether it reads as a verb whose object points back
	// at the sentence before it (pointsBackAfterVerb; sentence.leansBack).
	pointsBack bool
}

// analyses remembers analyse's results: every turn analyses again the
// sentences of the entities it reads and the conversation's earlier
// answers.
var analyses = texts[*analysis](20_000, 4096, 0.1, 4) // the text, its key and its terms

// analyse returns the analysis of text, remembered; it is shared, so it
// must not be modified.
func analyse(text string) *analysis {
	return analyses.Get(text, func(text string) *analysis {
		a := &analysis{key: normaliseText(text), words: textproc.WordCount(text),
			history: yearPattern.MatchString(text) || aboutTheWork.MatchString(text), action: persona.IsAction(text),
			dangling: danglingOpener.MatchString(text) || pointsElsewhere.MatchString(text), pointsBack: pointsBack(text)}
		for _, term := range textproc.SharedTerms(text) {
			if !slices.Contains(a.terms, term) {
				a.terms = append(a.terms, term)
			}
		}
		return a
	})
}

func normaliseText(s string) string {
	if strings.Contains(s, "[") { // every citation token starts with one
		s = tokenPattern.ReplaceAllString(s, "")
	}
	return strings.Join(textproc.Words(s), " ")
}

// sentences lists an entity's citable sentences: key ideas, the situations
// it is for, the sentences of its summary (not the first, which names the
// work), and its pitfalls.
func sentences(e *entityResult) []sentence {
	summary := textproc.SharedSentences(e.Summary) // read, never modified
	out := make([]sentence, 0, len(e.KeyIdeas)+len(e.WhenToUse)+len(summary)+len(e.Pitfalls))
	addOne := func(kind, s string) {
		s = strings.TrimSpace(s)
		if a := analyse(s); a.words >= 5 && !(kind == "summary" && (a.history || authorAtWork(e.Authors, s))) {
			out = append(out, sentence{entity: e, text: s, analysis: a, kind: kind})
		}
	}
	add := func(kind string, list []string) {
		for _, s := range list {
			addOne(kind, s)
		}
	}
	add("idea", e.KeyIdeas)
	add("when", e.WhenToUse)
	if len(summary) > 1 && (len(e.KeyIdeas) > 0 || len(e.WhenToUse) > 0) {
		summary = summary[1:]
	}
	// A summary sentence that dates the work ("It originated in 1996 at
	// ...") tells its history, one about the work itself ("The book
	// presents...") describes it, and one about where the idea came from
	// ("popularised by...") tells its provenance: none helps anyone act,
	// so all are left out.
	add("summary", summary)
	add("pitfall", e.Pitfalls)
	return out
}

// picker chooses the sentences that best answer the question, each used
// once per answer and none said earlier in the conversation.
type picker struct {
	// terms weighs the question's stems: its key terms as the reading
	// weighs them, the persona's situation's words less.
	terms map[string]float64
	// importance weighs the same stems by how specific they are to the
	// knowledge base too (tooling.KeyTerm.Importance): it ranks the
	// sentences that pass, so a sentence about the question's specific
	// words comes before one that shares only common ones.
	importance map[string]float64
	// used holds the normalised lines already said, earlier in the
	// conversation or in this answer.
	used map[string]bool
	// earlier holds the lines said in earlier answers of the conversation
	// (a subset of used): a later step of a sequence may follow one of
	// them, since the user has it just above.
	earlier map[string]bool
	// said holds the terms of the sentences of the conversation's earlier
	// answers: a sentence that says one of them again in other words is
	// not offered either.
	said [][]string
	// avoid holds stems of what was already tried: a sentence that is
	// mostly about it is not offered again.
	avoid map[string]bool
	// chosen are the sentences this answer cites, in order.
	chosen []sentence
	// cands is pick's list of candidates, kept for the next section.
	cands []sentence
	// analysed keeps each entity's sentences, so the sections of one
	// answer list an entity once.
	analysed map[string][]sentence
	// fitting are the frameworks read that fit the question, best first
	// (turn.fitting), worked out once per answer.
	fitting []*entityResult
	// related are the question's key terms that the business vocabulary
	// relates to concept phrases, in the reading's order.
	related []tooling.KeyTerm
	// naming are the question's key terms specific enough to name an
	// entity (turn.named): every sentence of an entity whose title holds
	// one speaks to it.
	naming []string
	// applied holds, by framework token, the diagnosis's application of it
	// when the diagnosis applies to the answer: its text and first steps
	// are the framework's sentences too (its card shows them).
	applied map[string]diagnoseApplying
}

func (t turn) newPicker() *picker {
	p := &picker{terms: map[string]float64{}, importance: map[string]float64{}, used: map[string]bool{}, earlier: map[string]bool{}, avoid: map[string]bool{},
		analysed: map[string][]sentence{}, applied: map[string]diagnoseApplying{}}
	if t.diagnosisApplies() {
		for _, a := range t.diagnosis.Applications {
			p.applied[a.Token] = a
		}
	}
	for _, term := range textproc.SharedTerms(t.reading.SituationTerms) {
		p.terms[term] = 0.4
		p.importance[term] = situationImportance
	}
	for _, k := range t.reading.KeyTerms {
		p.terms[k.Stem] = max(p.terms[k.Stem], k.Weight)
		p.importance[k.Stem] = max(p.importance[k.Stem], k.Importance())
		if len(k.Related) > 0 {
			p.related = append(p.related, k)
		}
		if namesEntity(k) {
			p.naming = append(p.naming, k.Stem)
		}
	}
	for _, term := range t.reading.TriedTerms {
		p.avoid[term] = true
		delete(p.terms, term)
	}
	for _, prev := range t.previous {
		for _, line := range strings.Split(prev, "\n") {
			key := analyse(line).key
			p.used[key], p.earlier[key] = true, true
			for _, s := range textproc.Sentences(line) {
				a := analyse(s)
				p.used[a.key], p.earlier[a.key] = true, true
				if len(a.terms) > 0 {
					p.said = append(p.said, a.terms)
				}
			}
		}
	}
	return p
}

func (p *picker) sentencesOf(e *entityResult) []sentence {
	if list, ok := p.analysed[e.Token]; ok {
		return list
	}
	list := entitySentences.Get(e.Token, e, sameSentenceSource, func(e *entityResult) []sentence {
		// The list points at its entity for the token and title: a copy,
		// so the memo keeps nothing of the turn alive.
		c := *e
		return slices.Clip(sentences(&c))
	})
	if a, ok := p.applied[e.Token]; ok {
		// Cited in the words the card shows, so a reader can check them.
		text, steps := a.Application, a.FirstSteps
		if a.CardApplication != "" {
			text, steps = a.CardApplication, a.CardFirstSteps
		}
		// The catalog's applications recur (one per archetype and
		// vertical), so the list with them is remembered too.
		src := appliedSource{entity: e, text: text, steps: steps}
		list = appliedSentences.Get(e.Token, src, sameAppliedSource, func(src appliedSource) []sentence {
			c := *src.entity // as for entitySentences: nothing of the turn kept
			return withApplication(list, &c, src.text, src.steps)
		})
	}
	p.analysed[e.Token] = list
	return list
}

// withApplication returns a new list of the sentences of list, then those
// of a framework's application text and first steps as the diagnosis
// applies it, each step after the first following the one before.
func withApplication(list []sentence, e *entityResult, text string, steps []string) []sentence {
	application := textproc.SharedSentences(text)
	out := append(make([]sentence, 0, len(list)+len(application)+len(steps)), list...)
	// add lists s unless it is too short to cite, and reports whether it
	// did.
	add := func(kind, s string) bool {
		an := analyse(s)
		if an.words < 5 {
			return false
		}
		out = append(out, sentence{entity: e, text: strings.TrimSpace(s), analysis: an, kind: kind})
		return true
	}
	for _, s := range application {
		add("application", s)
	}
	prev := "" // the key of the step before, once one is listed
	for _, s := range steps {
		if add("step", s) {
			last := &out[len(out)-1]
			last.follows, prev = prev, last.key
		}
	}
	return slices.Clip(out)
}

// appliedSource is what an applied framework's sentences are read from.
type appliedSource struct {
	entity *entityResult
	text   string
	steps  []string
}

// appliedSentences remembers an applied framework's sentences
// (withApplication) per entity version and application.
var appliedSentences = memo.Versions[string, appliedSource, []sentence]{PerKey: 4, MaxKeys: 4096,
	Keep: func(s appliedSource) appliedSource {
		c := *s.entity
		s.entity, s.steps = &c, slices.Clone(s.steps)
		return s
	}}

func sameAppliedSource(a, b appliedSource) bool {
	return a.text == b.text && slices.Equal(a.steps, b.steps) && sameSentenceSource(a.entity, b.entity)
}

// entitySentences remembers each entity's sentences (sentences), per
// version of what they are read from: every turn reads again the entities
// the turns before it read, and listing their sentences was a tenth of the
// builtin model's allocation. Their number is bounded by the knowledge
// base.
var entitySentences = memo.Versions[string, *entityResult, []sentence]{PerKey: 2, MaxKeys: 4096,
	Keep: func(e *entityResult) *entityResult { c := *e; return &c }}

// sameSentenceSource reports whether sentences reads the same from a and
// b: the fields it lists and the title and token its sentences show.
// Results decoded from one memo share their strings, so this is cheap.
func sameSentenceSource(a, b *entityResult) bool {
	return a.Token == b.Token && a.Title == b.Title && a.Summary == b.Summary && slices.Equal(a.KeyIdeas, b.KeyIdeas) &&
		slices.Equal(a.WhenToUse, b.WhenToUse) && slices.Equal(a.Pitfalls, b.Pitfalls)
}

// instructs reports whether a sentence says what to do: a step of the
// catalog's sequence, or a sentence that opens with a verb of advice.
func (s sentence) instructs() bool { return s.kind == "step" || s.analysis.action }

// leansBack reports whether an instruction's object points back at the
// step before it ("Divide them...", "Compare it with..."): quoted without
// that step just above, what it acts on is missing.
func (s sentence) leansBack() bool { return s.analysis.pointsBack && s.instructs() }

// best returns up to n sentences of the given kinds from the entities,
// best match to the question first, and marks them used. Only a sentence
// that shares enough with the question is offered, except from the first
// entity when loose is set.
func (p *picker) best(entities []*entityResult, n int, loose bool, kinds ...string) []sentence {
	return p.pick(entities, n, pickRule{loose: loose, least: minOverlap}, kinds...)
}

// pickRule says which sentences a section may take: loose lets the first
// of the two best entities that has something of the kinds asked left to
// say speak even where it shares little with the question (a paper that
// fits best but instructs nothing leaves the steps to the framework after
// it; in a later turn, the earlier answers may have used up the
// best-fitting one); least is the
// overlap a sentence needs otherwise; actions prefers sentences that say
// what to do.
type pickRule struct {
	loose       bool
	least       float64
	actions     bool
	actionsOnly bool
	// noActions leaves out sentences that say what to do: a section that
	// explains leaves them to the steps.
	noActions bool
	// statements leaves out sentences that ask rather than assert: a
	// question cannot stand as a finding.
	statements bool
	// questions takes only the questions a card puts to the user or the
	// buyer ("Questions to ask: ...").
	questions bool
}

func (p *picker) pick(entities []*entityResult, n int, rule pickRule, kinds ...string) []sentence {
	// The candidates are only read here: one list serves every section
	// of the answer.
	cands := p.cands[:0]
	defer func() { p.cands = cands[:0] }()
	looseAt := -1 // the entity that may speak loosely, once known
	for i, e := range entities {
		// A card named for a word of the question ("QBR") speaks to it in
		// every sentence, whether or not the sentence repeats the word.
		var named []string
		if len(p.naming) > 0 {
			title := analyse(e.Title).terms
			for _, stem := range p.naming {
				if slices.Contains(title, stem) {
					named = append(named, stem)
				}
			}
		}
		for _, s := range p.sentencesOf(e) {
			if !slices.Contains(kinds, s.kind) || p.used[s.key] || s.dangling || s.leansBack() && s.follows == "" {
				continue // a sentence pointing back at one before it still counts in the fit, but is never quoted alone
			}
			if rule.statements && strings.HasSuffix(s.text, "?") || rule.questions != asks(s.text) {
				continue
			}
			if rule.actionsOnly && !s.instructs() || rule.noActions && s.instructs() {
				continue
			}
			overlap, important, avoided := 0.0, 0.0, 0
			for _, term := range s.terms {
				overlap += p.terms[term]
				important += p.importance[term]
				if p.avoid[term] {
					avoided++
				}
			}
			if avoided >= 2 && s.kind != "pitfall" {
				// About what was tried: not offered again. A pitfall about
				// it is offered, since it tells what goes wrong with it
				// ("mass-closing old tickets..." for a user who bulk-closed
				// tickets and now has angry replies).
				continue
			}
			if looseAt < 0 && i < 2 && (s.follows == "" || p.earlier[s.follows]) {
				looseAt = i // the first entity with a sentence it may still say
			}
			for _, stem := range named {
				if !slices.Contains(s.terms, stem) {
					overlap += p.terms[stem]
					important += p.importance[stem]
				}
			}
			// A question's word the sentence says in the knowledge base's
			// own words ("economic buyer" for "CFO") counts for part.
			for _, k := range p.related {
				if !slices.Contains(s.terms, k.Stem) && slices.ContainsFunc(k.Related, func(phrase []string) bool {
					return !slices.ContainsFunc(phrase, func(st string) bool { return !slices.Contains(s.terms, st) })
				}) {
					overlap += relatedCredit * p.terms[k.Stem]
					important += relatedCredit * p.importance[k.Stem]
				}
			}
			s.score = important / (1 + 0.05*float64(len(s.terms)))
			if rule.actions && s.instructs() {
				s.score += 1
			}
			s.strong = overlap >= rule.least
			if !s.strong && !(rule.loose && i == looseAt) {
				continue
			}
			cands = append(cands, s)
		}
	}
	slices.SortStableFunc(cands, func(a, b sentence) int {
		switch {
		case a.strong != b.strong && a.strong:
			return -1
		case a.strong != b.strong:
			return 1
		}
		return cmp.Compare(b.score, a.score)
	})
	var out []sentence
	if len(cands) > 0 {
		out = make([]sentence, 0, min(n, len(cands)))
	}
	// The best candidates speak, whichever entity they come from: an
	// answer that keeps to the knowledge that fits best reads better than
	// one spread over the knowledge read (120 answers rated blind in
	// pairs went from 2.77 to 2.89 once an entity cited twice no longer
	// gave way to another; docs/evaluation.md, "Twenty-first session").
	// Two looks over the candidates: a later step of a sequence that
	// ranks above the step before it is passed over on the first look and
	// may follow it on the second, once the step before it is chosen.
	for look := 0; look < 2 && len(out) < n; look++ {
		for _, c := range cands {
			if len(out) == n {
				break
			}
			if p.used[c.key] {
				continue
			}
			if slices.ContainsFunc(p.chosen, func(s sentence) bool { return nearlySame(s.terms, c.terms) }) {
				continue // says again what the answer already says, in other words
			}
			if slices.ContainsFunc(p.said, func(terms []string) bool { return nearlySame(terms, c.terms) }) {
				continue // says again what an earlier answer said, in other words
			}
			if c.follows != "" && (c.leansBack() || !p.earlier[c.follows]) && !slices.ContainsFunc(p.chosen, func(s sentence) bool { return s.key == c.follows }) {
				// A later step of a sequence, out of its context: the step
				// before it must be in this answer or an earlier one of the
				// conversation; in this one when the step points back at it
				// ("Divide them..."), since the reader cannot see what
				// "them" is in the answer above.
				continue
			}
			p.used[c.key] = true
			p.chosen = append(p.chosen, c)
			out = append(out, c)
		}
	}
	return out
}

// instructing returns the first n entities, in the order given, that
// still have an instruction to give (a sentence that says what to do,
// not yet said): the steps of an answer come from the best-fitting few,
// not from every entity that shares a word with the question.
func (p *picker) instructing(entities []*entityResult, n int) []*entityResult {
	var out []*entityResult
	for _, e := range entities {
		if len(out) == n {
			break
		}
		if slices.ContainsFunc(p.sentencesOf(e), func(s sentence) bool { return s.instructs() && !p.used[s.key] && !s.dangling }) {
			out = append(out, e)
		}
	}
	return out
}

// stepsFrom is how many entities an answer's steps come from.
const stepsFrom = 2

// asks reports whether a card's sentence is its list of questions to ask
// ("Questions to ask: ..."): those fill the questions of an answer, not
// its explanations or steps.
func asks(text string) bool { return strings.HasPrefix(text, "Questions to ask") }

// askedQuestions is a card's list of questions to ask without its lead
// ("Questions to ask a buyer: how are you..." is "How are you..."), for a
// section whose heading already says what they are.
func askedQuestions(text string) string {
	if _, list, ok := strings.Cut(text, ":"); ok && asks(text) && strings.TrimSpace(list) != "" {
		return upperFirst(strings.TrimSpace(list))
	}
	return text
}

// shares reports whether a line shares at least one ordinary word of the
// question (or two of the persona's situation words).
func (p *picker) shares(line string) bool {
	overlap := 0.0
	for _, term := range analyse(line).terms {
		overlap += p.terms[term]
	}
	return overlap >= 0.5
}

// fresh reports whether a line the persona asks has not been said in the
// conversation yet, marking it said.
func (p *picker) fresh(line string) bool {
	key := analyse(line).key
	if p.used[key] {
		return false
	}
	p.used[key] = true
	return true
}

// relatedCredit is the share of a question word's weight that a sentence
// holding one of its related concept phrases, not the word, carries (as
// the reading's Addressed counts it).
const relatedCredit = 0.5

// situationImportance is what a word of the persona's situation counts
// for when sentences are ranked: the situation is what the user needs
// (an upset customer calls for recovery, whatever the industry's words),
// so a sentence about it ranks, but below one about the question's own
// specific words.
const situationImportance = 0.3

// minOverlap is the least weight of the question's terms a sentence must
// share to be offered: one business word, or two ordinary ones.
const minOverlap = 1.0

// cite renders a sentence of an entity with its citation: "text [tok]."
func cite(s sentence) string { return citeText(s.entity.Token, s.text) }

func citeText(token, text string) string {
	text = strings.TrimSpace(text)
	end := "."
	if n := len(text); n > 0 && strings.ContainsAny(text[n-1:], ".!?") {
		end = text[n-1:]
		text = text[:n-1]
	}
	return text + " [" + token + "]" + end
}

// nearlySame reports whether two sentences say nearly the same thing: most
// of the shorter one's distinct stems are in the other, and they are a
// good part of the other's (the catalog's application of a framework often
// restates one of its key ideas; a short sentence whose words a long one
// happens to hold says something else).
func nearlySame(a, b []string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(a) < 4 {
		return false
	}
	shared := sharedCount(a, b)
	return float64(shared) >= nearlySameShare*float64(len(a)) && float64(shared) >= nearlySameShare/2*float64(len(b))
}

// sharedCount is the number of stems of a that b holds (both lists of
// distinct stems).
func sharedCount(a, b []string) int {
	n := 0
	for _, t := range a {
		if slices.Contains(b, t) {
			n++
		}
	}
	return n
}

// nearlySameShare is the share of the shorter sentence's stems the other
// must hold for the two to count as saying the same thing (and half of it,
// the share of the longer one's).
const nearlySameShare = 0.7
