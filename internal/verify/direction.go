package verify

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/constraintlab/assistant/internal/textproc"
)

// This file reads the direction of what a sentence says, so that a claim
// that repeats a source's words with the opposite meaning is caught:
//
//   - a move: a word of change or comparison (more/less, raises/lowers,
//     increases/decreases, faster/slower, before/after, better/worse) and
//     the content words around it in its clause, its targets ("profit
//     rises over time": rises, up, of profit and time); a negation just
//     before the word turns it round ("does not raise" is down);
//   - a bound: a number a comparison word puts a limit on ("under 2%",
//     "at least 40 percent"), and the plain amounts a sentence states
//     ("2.5%"), each with its unit (% or the word after the number).
//
// A claim is reversed by a passage that speaks of the same thing (shares
// most of the clause the move is in) and moves the same target the other
// way, while no passage of the source moves it the claim's way; or that
// states an amount outside the claim's bound, or a bound the claim's
// amount is outside.

// moveKind groups the words of one scale: a word is the opposite only of
// the words of its own kind.
type moveKind uint8

const (
	amountScale  moveKind = iota + 1 // more/less, higher/lower, raises/lowers
	speedScale                       // faster/slower
	timeOrder                        // before/after, earlier/later
	qualityScale                     // better/worse
)

// moveWords lists, for each kind, the words that move up (or forward)
// and those that move down (or back). They are matched by stem.
var moveWords = []struct {
	kind     moveKind
	up, down []string
}{
	{amountScale,
		[]string{"more", "most", "increase", "increases", "increased", "increasing", "rise", "rises", "rising", "rose", "raise", "raises", "raised",
			"grow", "grows", "growing", "higher", "highest", "larger", "bigger", "greater", "boost", "boosts", "lift", "lifts", "expand", "expands", "gain", "gains"},
		[]string{"less", "least", "fewer", "fewest", "decrease", "decreases", "decreased", "decreasing", "fall", "falls", "falling", "fell", "lower", "lowers",
			"lowered", "lowest", "shrink", "shrinks", "smaller", "reduce", "reduces", "reduced", "cut", "cuts", "decline", "declines", "drop", "drops", "lessen"}},
	{speedScale, []string{"faster", "quicker", "sooner", "accelerate", "accelerates"}, []string{"slower", "slow", "slows", "delay", "delays"}},
	{timeOrder, []string{"after", "later"}, []string{"before", "earlier"}},
	{qualityScale, []string{"better", "best", "improve", "improves"}, []string{"worse", "worst", "worsen", "worsens"}},
}

// pole is +1 for a word that moves up, -1 down.
type pole int8

type moveWord struct {
	kind moveKind
	pole pole
}

// moveOf maps the stem of each move word to its kind and pole.
var moveOf = func() map[string]moveWord {
	m := map[string]moveWord{}
	for _, mw := range moveWords {
		for _, w := range mw.up {
			m[stemAny(w)] = moveWord{mw.kind, 1}
		}
		for _, w := range mw.down {
			m[stemAny(w)] = moveWord{mw.kind, -1}
		}
	}
	return m
}()

// move is one move word of a sentence with its targets.
type move struct {
	moveWord
	clause  int      // index of its clause in the sentence
	targets []string // the content stems within moveReach words of it in its clause
}

// moveReach is how many words on each side of a move word its targets
// are looked for.
const moveReach = 3

// clauseOf splits text into clauses for the direction checks: at
// punctuation and at the words that join two statements.
func clausesOf(text string) [][]string {
	var out [][]string
	for _, piece := range clauseBreak.Split(text, -1) {
		var cur []string
		for _, w := range textproc.Words(piece) {
			if clauseJoin[w] {
				if len(cur) > 0 {
					out = append(out, cur)
				}
				cur = nil
				continue
			}
			cur = append(cur, w)
		}
		if len(cur) > 0 {
			out = append(out, cur)
		}
	}
	return out
}

var clauseJoin = map[string]bool{"so": true, "but": true, "while": true, "whereas": true, "because": true, "which": true, "yet": true, "instead": true}

// readDirection finds the moves, bounds and amounts of text and the
// content stems of each of its clauses.
func readDirection(text string) direction {
	d := direction{quantities: quantitiesOf(text)}
	for ci, words := range clausesOf(text) {
		var terms []string
		for _, w := range words {
			if !textproc.IsStopWord(w) {
				terms = append(terms, textproc.Stem(w))
			}
		}
		d.clauses = append(d.clauses, terms)
		d.moves = append(d.moves, movesOf(words, ci)...)
		d.causes = append(d.causes, causesOf(words, ci)...)
	}
	return d
}

// direction is what readDirection finds in a sentence.
type direction struct {
	moves      []move
	causes     []cause
	quantities []quantity
	clauses    [][]string // content stems of each clause
}

func movesOf(words []string, clause int) []move {
	var out []move
	for i, w := range words {
		mw, ok := moveOf[stemAny(w)]
		if !ok {
			continue
		}
		if negatedAt(words, i) {
			mw.pole = -mw.pole
		}
		m := move{moveWord: mw, clause: clause}
		for j := max(0, i-moveReach); j < min(len(words), i+moveReach+1); j++ {
			if j == i || textproc.IsStopWord(words[j]) {
				continue
			}
			if _, isMove := moveOf[stemAny(words[j])]; !isMove {
				m.targets = append(m.targets, textproc.Stem(words[j]))
			}
		}
		out = append(out, m)
	}
	return out
}

// cause is a verb of causing in a clause with the content stems on each
// side of it: "long queues drive churn" has left long, queue and right
// churn.
type cause struct {
	clause      int
	left, right []string
}

// causeVerbs are the verbs of causing, by stem; "lead" and "result" count
// only before "to" and "in".
var causeVerbs = map[string]string{"caus": "", "drive": "", "driven": "", "produc": "", "lead": "to", "led": "to", "result": "in", "trigger": ""}

func causesOf(words []string, clause int) []cause {
	var out []cause
	for i, w := range words {
		st := stemAny(w)
		next, ok := causeVerbs[st]
		if !ok || next != "" && (i+1 == len(words) || words[i+1] != next) || i > 0 && words[i-1] == "by" {
			continue
		}
		c := cause{clause: clause, left: contentStems(words[:i]), right: contentStems(words[i+1:])}
		if len(c.left) > 0 && len(c.right) > 0 {
			out = append(out, c)
		}
	}
	return out
}

func contentStems(words []string) []string {
	var out []string
	for _, w := range words {
		if !textproc.IsStopWord(w) {
			out = append(out, textproc.Stem(w))
		}
	}
	return out
}

// negatedAt reports whether one of the two words before words[i] negates
// it ("not more", "did not raise", "doesn't grow").
func negatedAt(words []string, i int) bool {
	for j := max(0, i-2); j < i; j++ {
		w := words[j]
		if negations[w] || w == "t" && j > 0 && contracted[words[j-1]] {
			return true
		}
	}
	return false
}

// quantity is a number a sentence states, with its unit and, for a bound,
// its side.
type quantity struct {
	value float64
	unit  string // "%" or the stem of the word after the number
	bound int    // -1: at most, +1: at least, 0: the amount itself
	// strict: the bound itself is excluded ("under 2%", "more than 40"),
	// not with "at most", "within", "no more than", "at least".
	strict bool
}

// quantityPattern finds a number, the comparison before it and its unit.
var quantityPattern = regexp.MustCompile(`(?i)\b(?:(under|below|within|over|above|exceeding|at most|at least|no more than|(?:less|fewer|lower|smaller|more|greater|higher|larger) than)\s+)?(\d+(?:\.\d+)?)\s*(%|[a-z]+)?`)

// boundSide is the side of each comparison of quantityPattern.
var boundSide = map[string]int{"under": -1, "below": -1, "within": -1, "at most": -1, "no more than": -1,
	"less than": -1, "fewer than": -1, "lower than": -1, "smaller than": -1,
	"over": 1, "above": 1, "exceeding": 1, "at least": 1,
	"more than": 1, "greater than": 1, "higher than": 1, "larger than": 1}

// inclusiveBound are the comparisons that admit the number itself.
var inclusiveBound = map[string]bool{"within": true, "at most": true, "no more than": true, "at least": true}

func quantitiesOf(text string) []quantity {
	var out []quantity
	for _, m := range quantityPattern.FindAllStringSubmatchIndex(text, -1) {
		v, err := strconv.ParseFloat(text[m[4]:m[5]], 64)
		if err != nil {
			continue
		}
		cmp, unit := "", ""
		if m[2] >= 0 {
			cmp = strings.ToLower(strings.Join(strings.Fields(text[m[2]:m[3]]), " "))
		}
		if m[6] >= 0 {
			unit = strings.ToLower(text[m[6]:m[7]])
		}
		q := quantity{value: v, bound: boundSide[cmp], strict: !inclusiveBound[cmp]}
		// "40 or less", "5% or more": a bound written after its number.
		after := text[m[1]:]
		if unit != "or" {
			after = strings.TrimPrefix(strings.TrimLeft(after, " "), "or")
		}
		if s := orBound.FindStringSubmatch(after); s != nil && (unit == "or" || len(after) < len(text[m[1]:])) {
			q.bound, q.strict = boundSide[strings.ToLower(s[1])+" than"], false
			if unit != "%" && unit != "percent" {
				unit = "#" // a bare number: compared only with a bound of its own kind
			}
		}
		switch {
		case unit == "percent" || unit == "per":
			q.unit = "%"
		case unit == "%" || unit == "#" || unit == "":
			q.unit = unit
		default:
			q.unit = textproc.Stem(unit)
		}
		out = append(out, q)
	}
	return out
}

// orBound reads the comparison of "N or less" after the number's "or".
var orBound = regexp.MustCompile(`(?i)^\s+(less|fewer|lower|smaller|more|greater|higher|larger)\b`)

// outside reports whether amount a (a plain number) falls outside bound b
// of the same unit.
func outside(a, b quantity) bool {
	if a.unit != b.unit || a.unit == "" {
		return false
	}
	if a.bound != 0 && b.bound != 0 {
		// Two bounds on opposite sides of one number ("40 or less"
		// against "40 or more") say opposite things.
		return a.bound != b.bound && a.value == b.value
	}
	if a.bound != 0 || b.bound == 0 || a.unit == "#" {
		return false
	}
	if a.value == b.value {
		return b.strict
	}
	return b.bound < 0 && a.value > b.value || b.bound > 0 && a.value < b.value
}

// readDirections reads the direction of every passage, once per evidence:
// only a cited claim that has a move, a cause or a number needs them.
func (ev *evidence) readDirections() {
	ev.dirs = make([]direction, len(ev.texts))
	if b := ev.base; b != nil { // a variant: base's passages are read once
		b.dirOnce.Do(b.readDirections)
		copy(ev.dirs, b.dirs[:ev.at])
		copy(ev.dirs[ev.at+ev.n:], b.dirs[ev.at:])
		for i, k := range ev.inserted {
			ev.dirs[ev.at+i] = k.direction()
		}
		return
	}
	for i, text := range ev.texts {
		ev.dirs[i] = readDirection(text)
	}
}

// reversalShare is the share of a claim's clause a passage must use for a
// move of the passage to speak of the same thing.
const reversalShare = 0.6

// reversal finds a passage that says the opposite of the claim: it moves a
// target of one of the claim's moves the other way while no relevant
// passage moves it the claim's way, or it states an amount outside the
// claim's bound (or a bound outside the claim's amount) while no relevant
// passage agrees with the claim's number. It returns the passage's index
// and a reason, or -1.
func (ev *evidence) reversal(c *unit) (int, string) {
	if len(c.dir.moves) == 0 && len(c.dir.causes) == 0 && len(c.dir.quantities) == 0 {
		return -1, ""
	}
	ev.dirOnce.Do(ev.readDirections)
	for _, cm := range c.dir.moves {
		if j := ev.movedAgainst(cm, c.dir.clauses[cm.clause]); j >= 0 {
			return j, "the source says the opposite"
		}
	}
	for _, cc := range c.dir.causes {
		if j := ev.causedAgainst(cc, c.dir.clauses[cc.clause]); j >= 0 {
			return j, "the source gives the cause and effect the other way round"
		}
	}
	if len(c.dir.quantities) > 0 {
		if j := ev.quantityAgainst(c); j >= 0 {
			return j, "the source states a number on the other side"
		}
	}
	return -1, ""
}

// movedAgainst is reversal for one move of a claim, whose clause has the
// content stems clause.
func (ev *evidence) movedAgainst(cm move, clause []string) int {
	if len(clause) < 3 || len(cm.targets) == 0 {
		return -1
	}
	against := -1
	for j := range ev.size() {
		p, pd := ev.unitAt(j), &ev.dirs[j]
		if len(pd.moves) == 0 {
			continue
		}
		relevant := 0 // 1 when the passage speaks of the claim's clause, -1 when not, 0 not yet known
		for _, pm := range pd.moves {
			if pm.kind != cm.kind || !sharesTarget(cm.targets, pm.targets) {
				continue
			}
			if relevant == 0 {
				relevant = -1
				if share(clause, p.stems) >= reversalShare {
					relevant = 1
				}
			}
			if relevant < 0 {
				break
			}
			if pm.pole == cm.pole {
				return -1 // a passage says it the claim's way
			}
			if against < 0 {
				against = j
			}
		}
	}
	return against
}

// causedAgainst is reversal for one causal clause of a claim: a relevant
// passage that puts the claim's effect before its verb of causing and the
// claim's cause after it, while none puts them the claim's way.
func (ev *evidence) causedAgainst(cc cause, clause []string) int {
	if len(clause) < 3 {
		return -1
	}
	against := -1
	for j := range ev.size() {
		p, pd := ev.unitAt(j), &ev.dirs[j]
		if len(pd.causes) == 0 || share(clause, p.stems) < reversalShare {
			continue
		}
		for _, pc := range pd.causes {
			same := sharesTarget(cc.left, pc.left) && sharesTarget(cc.right, pc.right)
			swapped := sharesTarget(cc.left, pc.right) && sharesTarget(cc.right, pc.left)
			switch {
			case same:
				return -1
			case swapped && against < 0:
				against = j
			}
		}
	}
	return against
}

// quantityAgainst is reversal for the numbers of a claim.
func (ev *evidence) quantityAgainst(c *unit) int {
	against := -1
	for j := range ev.size() {
		p, pd := ev.unitAt(j), &ev.dirs[j]
		if len(pd.quantities) == 0 || share(c.terms, p.stems) < reversalShare {
			continue
		}
		for _, cq := range c.dir.quantities {
			for _, pq := range pd.quantities {
				if pq.unit != cq.unit || cq.unit == "" {
					continue
				}
				if outside(pq, cq) || outside(cq, pq) {
					if against < 0 {
						against = j
					}
				} else if pq.value == cq.value {
					return -1
				}
			}
		}
	}
	return against
}

// share is the share of terms that stems holds, directly or through a
// related word form.
func share(terms []string, stems map[string]bool) float64 {
	if len(terms) == 0 {
		return 0
	}
	n := 0
	for _, t := range terms {
		if hasForm(stems, t) {
			n++
		}
	}
	return float64(n) / float64(len(terms))
}

// hasForm reports whether stems holds t or one of its related forms.
func hasForm(stems map[string]bool, t string) bool {
	if stems[t] {
		return true
	}
	for _, r := range relatedForms(t) {
		if stems[r] {
			return true
		}
	}
	return false
}

// sharesTarget reports whether two moves have a target in common (word
// forms included).
func sharesTarget(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y || slicesContains(relatedForms(x), y) {
				return true
			}
		}
	}
	return false
}

func slicesContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
