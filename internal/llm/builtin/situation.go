package builtin

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/constraintlab/assistant/internal/memo"
	"github.com/constraintlab/assistant/internal/textproc"
)

var tokenPattern = regexp.MustCompile(`\[([a-z]+:[a-z0-9_-]+)\]`)

// A stage is how a persona reads the situation behind a question: the
// buyer's objection or stage for the customer persona, the account's
// situation for success, the kind of problem for support. Each has the cues
// that reveal it and the words that select the knowledge that fits it.
type stage struct {
	id    string
	cues  *regexp.Regexp
	terms string // extra words for choosing the sentences that fit
}

var customerStages = []stage{
	{"discount", regexp.MustCompile(`(?i)(\b\d+ ?%|percent) off\b|\b(wants?|asks?|asking|demands?) (for )?(a |an )?(big |bigger |extra )?discount`),
		"discount price value concession negotiate trade"},
	{"price", regexp.MustCompile(`(?i)\b(expensive|price[sd]?|pricing|cost(s|ly)?|cheaper|discount\w*|budget|\d+ ?% off|too much)\b`),
		"price value cost willingness pay discount worth"},
	{"brush-off", regexp.MustCompile(`(?i)\b(send (me )?(some |more )?info\w*|not interested|hangs? up|brush(ed)? off|call (me )?(back )?later)\b`),
		"problem question interest attention insight"},
	{"stalled", regexp.MustCompile(`(?i)\b(stall\w*|stuck|ghost\w*|stopped (replying|answering|responding)|no (reply|response)|went (quiet|silent|dark)|slipp\w*|gone quiet)\b`),
		"champion decision process criteria pain urgency"},
	{"incumbent", regexp.MustCompile(`(?i)\b(current (vendor|provider|supplier|tool|solution)|already (use|have|has|work)|happy with|competitor\w*|switch\w*|incumbent)\b`),
		"status quo switch risk problem insight"},
	{"committee", regexp.MustCompile(`(?i)\b(decision.?maker\w*|who (actually )?(makes|decides)|stakeholders?|procurement|committee|sign.?off|legal|cfo|ceo|board)\b`),
		"decision economic buyer champion criteria process"},
	{"expansion", regexp.MustCompile(`(?i)\b(annual|upgrade|upsell|premium|add.?on|more seats|bigger plan)\b`),
		"value expansion price commitment"},
	{"timing", regexp.MustCompile(`(?i)\b(not now|next (year|quarter)|timing|later|not the right time)\b`),
		"urgency cost problem priority"},
	{"discovery", regexp.MustCompile(`(?i)\b(first (call|meeting)|discovery|what (questions|should i ask)|questions? (to|should) (i )?ask|prepare for)\b`),
		"question situation problem implication need"},
}

var successStages = []stage{
	{"champion-left", regexp.MustCompile(`(?i)\b(champion|sponsor|main contact|our contact|point of contact)\b.*\b(left|leaving|quit|moved|gone|departed)\b|\bnew (contact|stakeholder|sponsor)\b`),
		"champion relationship stakeholder value outcome"},
	{"incident", regexp.MustCompile(`(?i)\b(outages?|incidents?|downtime|bugs?|escalat\w*|broke\w*)\b`),
		"service recovery expectation trust quality"},
	{"downgrade", regexp.MustCompile(`(?i)\b(downgrad\w*|cancel\w*|budget cuts?|cut(ting)? costs?)\b`),
		"churn retention value outcome risk"},
	{"at-risk", regexp.MustCompile(`(?i)\b(at risk|risk of churn\w*|churn\w*|health scores?|early warning|before they (tell|leave|cancel))\b`),
		"churn health usage signal early retention"},
	{"adoption", regexp.MustCompile(`(?i)\b(seats?|only (use|uses|using)|one (feature|module|course)|never (invite|use|log)|log(s|ging)? in less|usage|adoption|stop(ped)? using|inactive|drop(ped)? off|then stop)\b`),
		"adoption activation habit value onboarding"},
	{"expansion", regexp.MustCompile(`(?i)\b(upsell\w*|upgrade|add.?on|premium|grow the account|expan\w*|more seats|cross.?sell)\b`),
		"expansion value outcome revenue"},
	{"renewal", regexp.MustCompile(`(?i)\b(renewal|renew\w*)\b`),
		"renewal retention value outcome"},
}

var supportStages = []stage{
	{"repeat", regexp.MustCompile(`(?i)\b(same (ticket|question|issue|complaint)s?|again and again|repeat\w*|keep (getting|asking)|every (week|month)|most of our (tickets|volume)|\d+ ?% of (our )?(volume|tickets))\b`),
		"ticket volume demand root cause repeat"},
	{"slow", regexp.MustCompile(`(?i)\b(response times?|backlog|queue|overwhelmed|burn\w* out|swamped|slow|waiting|sla|caught up|piles? up)\b`),
		"capacity queue demand variability response time"},
	{"stuck", regexp.MustCompile(`(?i)\b(stuck|setup|set up|onboarding|import|get started|confus\w*)\b`),
		"onboarding activation first value friction"},
	{"upset", regexp.MustCompile(`(?i)\b(angry|upset|furious|complain\w*|threaten\w*|bad review|refund)\b`),
		"service recovery expectation complaint trust"},
	{"defect", regexp.MustCompile(`(?i)\b(damaged|broken|error|wrong|defect\w*|faulty|never arrive\w*|fails?|bug)\b`),
		"quality defect root cause process"},
}

// classify returns the first stage whose cues the text shows, or "".
func classify(stages []stage, text string) stage {
	for _, s := range stages {
		if s.cues.MatchString(text) {
			return s
		}
	}
	return stage{}
}

// stageReader is the stages a persona reads, with the memo of its
// readings: every round of a turn, and several parts of its answer, read
// the same question again, and the stages' cues are a dozen regexps.
type stageReader struct {
	stages   []stage
	readings *memo.Bounded[string, stage] // question -> classify(stages, question)
}

var stageReaders = map[string]*stageReader{
	"customer": {stages: customerStages, readings: texts[stage](1024, 4096)},
	"success":  {stages: successStages, readings: texts[stage](1024, 4096)},
	"support":  {stages: supportStages, readings: texts[stage](1024, 4096)},
}

// stage is the persona's reading of the situation.
func (t turn) stage() stage {
	r, ok := stageReaders[t.mode]
	if !ok {
		return stage{}
	}
	return r.readings.Get(t.question, func(q string) stage { return classify(r.stages, q) })
}

// howToProduct recognises a question about how to use a product ("how do
// I export invoices to CSV"): one only the product's own documentation can
// answer.
var howToProduct = regexp.MustCompile(`(?i)^\s*(how (do|can|should) (i|we|you)|where (do|can) (i|we)|can (i|we|you)|is there a way to)\b.*\b(export|import|csv|pdf|download|upload|settings?|password|log ?in|sign ?in|api|key|token|permissions?|admin|configure|install|integrat\w*|button|dashboard|app|notifications?|rotate|reset|enable|disable|invite|add a (new )?user)\b`)

// productQuestionWithoutDocs reports whether a support question asks how to
// use the product while the knowledge base holds none of the product's own
// documentation that matches it: then the answer says so instead of
// bending a management framework to it.
func (t turn) productQuestionWithoutDocs() bool {
	if t.mode != "support" || !asksHowToUse(t.question) || len(t.searches) == 0 {
		return false
	}
	return !t.importedLeads()
}

// asksHowToUse reports whether howToProduct matches the question,
// remembered because every round of a support turn asks again.
func asksHowToUse(question string) bool {
	return howToQuestions.Get(question, howToProduct.MatchString)
}

var howToQuestions = texts[bool](1024, 4096)

// triedPattern finds what the conversation says was already tried.
var triedPattern = regexp.MustCompile(`(?i)\b(?:we(?:'ve| have)? (?:already )?tried|i(?:'ve| have)? (?:already )?tried|already tried|we already|i already|tried)\s+([^.?!;]+)`)

// triedTail is what follows the tried action in "we tried X, now what".
var triedTail = regexp.MustCompile(`(?i)[, ]+(and |but )?(now|what|it|that|nothing|still)\b.*$`)

// tried returns what the user says was already tried, in their words, or
// "".
func (t turn) tried() string {
	texts := []string{t.question}
	for i := len(t.earlier) - 1; i >= 0; i-- {
		texts = append(texts, t.earlier[i])
	}
	for _, text := range texts {
		if what := triedIn(text); what != "" {
			return what
		}
	}
	return ""
}

// triedIn returns what one message says was already tried, or "". It is
// remembered because the answer asks several times, every turn asks
// again of the conversation's earlier messages, and triedPattern is slow.
func triedIn(text string) string {
	return triedReadings.Get(text, func(text string) string {
		if m := triedPattern.FindStringSubmatch(text); m != nil {
			what := strings.TrimSpace(m[1])
			what = triedTail.ReplaceAllString(what, "")
			if len(textproc.Terms(what)) > 0 {
				return strings.TrimRight(what, ", ") // not empty: it has a content word
			}
		}
		return ""
	})
}

var triedReadings = texts[string](4096, 4096)

// questionTerms are the stems of what the conversation asks about: the
// question, and the earlier user turns when it is a follow-up.
func (t turn) questionTerms() map[string]bool {
	set := textproc.TermSet(t.situation())
	if st := t.stage(); st.terms != "" {
		for term := range textproc.TermSet(st.terms) {
			set[term] = true
		}
	}
	return set
}

var clauseBreak = regexp.MustCompile(`[.?!;,]+\s*|\s+(?:but|so|and then)\s+`)

// symptom is the clause of the question that carries the most business
// words: what the user said is wrong, quoted back in their words.
func (t turn) symptom() string {
	q := strings.Join(strings.Fields(t.question), " ")
	if t.tried() != "" && len(t.earlier) > 0 {
		// A follow-up about what was tried: the problem is the one stated
		// before.
		q = strings.Join(strings.Fields(t.earlier[len(t.earlier)-1]), " ")
	}
	business := map[string]bool{}
	for _, w := range t.scope().Business {
		for _, part := range strings.Fields(w) {
			business[strings.ToLower(part)] = true
		}
	}
	best, bestScore := "", -1
	for _, clause := range clauseBreak.Split(q, -1) {
		clause = strings.TrimSpace(clause)
		if len(textproc.Words(clause)) < 3 {
			continue
		}
		score := 0
		for _, w := range textproc.Words(clause) {
			if business[w] {
				score++
			}
		}
		if score > bestScore {
			best, bestScore = clause, score
		}
	}
	if best == "" {
		best = q
	}
	return textproc.Cut(strings.TrimRight(best, ".?! "), 120)
}

// sentence is one citable sentence of an entity.
type sentence struct {
	entity *entityResult
	text   string
	*analysis
	kind   string // idea, when, summary, pitfall
	score  float64
	strong bool // shares at least minOverlap with the question
	order  int
}

// analysis is what the picker compares of a text (a sentence of an
// entity, a line of advice or of an earlier answer).
type analysis struct {
	key   string   // normalise(text): how it is matched with what was already said
	words int      // its number of words (textproc.Words)
	terms []string // its distinct stems (textproc.TermSet), in order of first use
}

// analyses remembers analyse's results: every turn analyses again the
// sentences of the entities it reads, the persona's lines of advice and
// the conversation's earlier answers, and that analysis (words, stems and
// the regexp of normalise) was most of the cost of composing an answer.
var analyses = texts[*analysis](20_000, 4096)

// analyse returns the analysis of text, remembered; it is shared, so it
// must not be modified.
func analyse(text string) *analysis {
	return analyses.Get(text, func(text string) *analysis {
		a := &analysis{key: normaliseText(text), words: len(textproc.Words(text))}
		for _, term := range textproc.Terms(text) {
			if !slices.Contains(a.terms, term) {
				a.terms = append(a.terms, term)
			}
		}
		return a
	})
}

// sentences lists an entity's citable sentences: key ideas, the situations
// it is for, the sentences of its summary (not the first, which names the
// work), and its pitfalls.
func sentences(e *entityResult) []sentence {
	var out []sentence
	add := func(kind string, list []string) {
		for _, s := range list {
			s = strings.TrimSpace(s)
			if a := analyse(s); a.words >= 5 {
				out = append(out, sentence{entity: e, text: s, analysis: a, kind: kind, order: len(out)})
			}
		}
	}
	add("idea", e.KeyIdeas)
	add("when", e.WhenToUse)
	summary := textproc.Sentences(e.Summary)
	if len(summary) > 1 && (len(e.KeyIdeas) > 0 || len(e.WhenToUse) > 0) {
		summary = summary[1:]
	}
	add("summary", summary)
	add("pitfall", e.Pitfalls)
	return out
}

// picker chooses the sentences that best answer the question, each used
// once per answer.
type picker struct {
	// terms weighs the question's stems: its business words count most,
	// words that say little of a situation ("week", "make") least.
	terms map[string]float64
	// used holds the normalised lines already said: those of the earlier
	// answers and those of this one so far.
	used map[string]bool
	// said are the lines of the earlier answers that a sentence could be
	// part of (longer than 20 bytes), and usedNow the lines this answer
	// used so far: used's lines, for usedInPrevious to search.
	said, usedNow []string
	// inSaid remembers, for this answer, whether a line is part of one of
	// said: the answer's sections look at the same sentences again.
	inSaid map[string]bool
	// avoid holds stems of what was already tried: a sentence that is
	// mostly about it is not offered again.
	avoid map[string]bool
	// cited counts the sentences taken from each entity so far.
	cited map[string]int
	// analysed keeps each entity's sentences with their stems, so the
	// sections of one answer analyse an entity once.
	analysed map[string][]sentence
}

// sentencesOf returns the entity's sentences with their analyses, listed
// once per answer.
func (p *picker) sentencesOf(e entityResult) []sentence {
	if list, ok := p.analysed[e.Token]; ok {
		return list
	}
	list := sentences(&e)
	if p.analysed == nil {
		p.analysed = map[string][]sentence{}
	}
	p.analysed[e.Token] = list
	return list
}

func (t turn) newPicker() *picker {
	p := &picker{terms: map[string]float64{}, used: map[string]bool{}, avoid: map[string]bool{}, cited: map[string]int{}, inSaid: map[string]bool{}}
	for term := range t.questionTerms() {
		p.terms[term] = 0.6
		if vague[term] {
			p.terms[term] = 0.1
		}
	}
	for _, w := range t.scope().Business {
		for _, term := range textproc.Terms(w) {
			p.terms[term] = 1
		}
	}
	if tried := t.tried(); tried != "" {
		p.avoid = textproc.TermSet(tried)
		for term := range p.avoid {
			delete(p.terms, term) // what was tried is not what to answer
		}
	}
	for _, prev := range t.previous {
		for _, line := range strings.Split(prev, "\n") {
			key := normalise(line)
			if !p.used[key] && len(key) > 20 {
				p.said = append(p.said, key)
			}
			p.used[key] = true
		}
	}
	return p
}

// normalise is the form in which lines are compared with what was already
// said: their words, without citation tokens.
func normalise(s string) string { return analyse(s).key }

func normaliseText(s string) string {
	if strings.Contains(s, "[") { // every citation token starts with one
		s = tokenPattern.ReplaceAllString(s, "")
	}
	return strings.Join(textproc.Words(s), " ")
}

// best returns up to n sentences of the given kinds (all kinds when none
// is given) from the entities, best match to the question first, and marks
// them used.
func (p *picker) best(entities []entityResult, n int, kinds ...string) []sentence {
	var cands []sentence
	for _, e := range entities {
		for _, s := range p.sentencesOf(e) {
			if len(kinds) > 0 && !slices.Contains(kinds, s.kind) {
				continue
			}
			key := s.key
			if p.used[key] || p.usedInPrevious(key) {
				continue
			}
			terms := s.terms
			overlap, avoided := 0.0, 0
			for _, term := range terms {
				overlap += p.terms[term]
				if p.avoid[term] {
					avoided++
				}
			}
			if avoided >= 2 {
				continue // about what was tried
			}
			s.score = overlap / (1 + 0.05*float64(len(terms)))
			s.strong = overlap >= minOverlap
			if !s.strong && e.Token != entities[0].Token {
				continue // beyond the best entity read, only what fits the question
			}
			cands = append(cands, s)
		}
	}
	// Sentences about the question come first, best match first; the
	// rest keep the entities' own order (their key ideas lead), so an
	// entity chosen for its relevance as a whole still speaks.
	slices.SortStableFunc(cands, func(a, b sentence) int {
		switch {
		case a.strong != b.strong && a.strong:
			return -1
		case a.strong != b.strong:
			return 1
		case a.strong:
			return cmp.Compare(b.score, a.score)
		}
		return 0
	})
	var out []sentence
	// Spread the answer over the knowledge read: an entity already cited
	// twice in the answer gives way to one cited less, when there is one.
	for pass := 0; pass < 2 && len(out) < n; pass++ {
		for _, c := range cands {
			if len(out) == n {
				break
			}
			key := c.key
			if p.used[key] || (pass == 0 && p.cited[c.entity.Token] >= 2 && len(entities) > 1) {
				continue
			}
			p.cited[c.entity.Token]++
			p.markUsed(key)
			out = append(out, c)
		}
	}
	return out
}

// usedInPrevious reports whether key (longer than 20 bytes) is part of a
// line already said, in an earlier answer or in this one.
func (p *picker) usedInPrevious(key string) bool {
	if len(key) <= 20 {
		return false
	}
	in, ok := p.inSaid[key]
	if !ok {
		in = slices.ContainsFunc(p.said, func(line string) bool { return strings.Contains(line, key) })
		p.inSaid[key] = in
	}
	return in || slices.ContainsFunc(p.usedNow, func(line string) bool { return strings.Contains(line, key) })
}

// markUsed records that this answer says the line key.
func (p *picker) markUsed(key string) {
	if !p.used[key] {
		p.usedNow = append(p.usedNow, key)
	}
	p.used[key] = true
}

// fresh reports whether a line of advice has not been given earlier in
// the conversation, and is not mostly about what was already tried;
// marking it used.
func (p *picker) fresh(line string) bool {
	a := analyse(line)
	key := a.key
	if p.used[key] || p.usedInPrevious(key) {
		return false
	}
	avoided := 0
	for _, term := range a.terms {
		if p.avoid[term] {
			avoided++
		}
	}
	if avoided >= 2 {
		return false
	}
	p.markUsed(key)
	return true
}

// minOverlap is the least weight of the question's words a sentence must
// share to be offered: one business word, or two ordinary ones.
const minOverlap = 1.0

// vague are stems that say little about a situation; they barely count
// when matching sentences to a question.
var vague = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`week weeks day days month months year years hour hours minute time times every
		always never get make take need want know way thing things lot good bad new first last next stop start help
		try tried use look find give tell ask go come run still really right better best like think feel people person`) {
		m[textproc.Stem(w)] = true
	}
	return m
}()

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

// upperFirst capitalises the first letter of s.
func upperFirst(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[size:]
}

// lowerFirst lowercases the first letter of a sentence to continue another
// one, unless its first word is "I", an acronym or a name ("OKRs",
// "Little's law").
func lowerFirst(s string) string {
	first, _, _ := strings.Cut(s, " ")
	if first == "" || first == "I" || strings.HasPrefix(first, "I'") || strings.HasPrefix(first, "I’") {
		return s
	}
	r, size := utf8.DecodeRuneInString(first)
	if rest := first[size:]; rest != "" {
		if r2, _ := utf8.DecodeRuneInString(rest); unicode.IsUpper(r2) || unicode.IsDigit(r2) {
			return s // an acronym
		}
	}
	return string(unicode.ToLower(r)) + s[size:]
}
