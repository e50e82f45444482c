package verify

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/constraintlab/assistant/internal/memo"
	"github.com/constraintlab/assistant/internal/textproc"
)

// This file is the scoring core shared by the knowledge base and WiCE-style
// evidence: a claim is held against an ordered list of passages (an
// entity's fields, or the sentences of a web page) and gets the
// probability that the passages support all of it.

// unit is an analysed claim or passage.
type unit struct {
	terms   []string        // unique stems of the content words, in order
	set     map[string]bool // the same as a set
	numbers []string        // normalised numbers ("260000", "2004", "3")
	words   []string        // lowercase words, stop words included
	names   []string        // claims only: lowercase capitalised words not at the start
	claim   *claimFacts     // claims only: what the metadata and quotation checks read
	negated map[string]bool // stems in the scope of a negation (the three content words after it)
	// bareNegations counts the negations no content word follows in their
	// clause ("where buyers cannot get it").
	bareNegations int
	stems         map[string]bool // stems of all the words, stop words included
	weights       []float64       // weight of each of terms, in the same order
	line          string          // the words joined by spaces, with a space at each end
	dir           direction       // claims only: its moves, bounds and amounts (direction.go)
}

var (
	numberPattern = regexp.MustCompile(`\d[\d,]*(?:\.\d+)?`)
	// Number words that are also used loosely ("one of", "first") are left out.
	numberWords = map[string]string{"two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
		"seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "third": "3", "fourth": "4", "fifth": "5", "dozen": "12", "hundred": "100", "thousand": "1000"}
	negations = map[string]bool{"not": true, "no": true, "never": true, "none": true, "nor": true, "without": true,
		"cannot": true, "nobody": true, "nothing": true, "neither": true}
)

// yearRange is a range of years whose end is written with two digits
// ("2018–19", "1992-93"), not followed by more of a date ("2018-05-12").
var yearRange = regexp.MustCompile(`\b(1[6-9]|20)(\d\d)\s?[–-]\s?(\d\d)\b(?:[^–\-\d]|$)`)

// numbersOf returns the numbers written in digits in text, normalised
// ("260,000" is 260000); the end of a range of years written with two
// digits is the full year ("2018–19" states 2018 and 2019).
func numbersOf(text string) []string {
	ends := map[int]string{} // offset of a range's two-digit end -> its full year
	for _, m := range yearRange.FindAllStringSubmatchIndex(text, -1) {
		century, from, to := text[m[2]:m[3]], text[m[4]:m[5]], text[m[6]:m[7]]
		if to > from {
			ends[m[6]] = century + to
		}
	}
	var out []string
	for _, m := range numberPattern.FindAllStringIndex(text, -1) {
		if year, ok := ends[m[0]]; ok {
			out = append(out, year)
			continue
		}
		out = append(out, strings.TrimRight(strings.ReplaceAll(text[m[0]:m[1]], ",", ""), "."))
	}
	return out
}

// clauseBreak ends the scope of a negation.
var clauseBreak = regexp.MustCompile(`[,;:.!?"“”()\[\]–—]+`)

// negationScope is how many content words after a negation it covers.
const negationScope = 3

// contracted are the fragments before "t" in a split contraction ("don't"
// is don, t).
var contracted = map[string]bool{"don": true, "doesn": true, "didn": true, "isn": true, "aren": true, "wasn": true,
	"weren": true, "won": true, "can": true, "couldn": true, "shouldn": true, "wouldn": true, "haven": true,
	"hasn": true, "hadn": true, "ain": true, "mustn": true, "needn": true}

func analyse(text string, claim bool) unit {
	u := unit{set: map[string]bool{}, stems: map[string]bool{}, negated: map[string]bool{}}
	u.words = textproc.Words(text)
	// Quoted phrases (titles, names of ideas) assert nothing: a negation
	// inside one ("How Not to Die") negates nothing.
	var quoted []bool
	var pieces []string
	last := 0
	for _, m := range quotedPhrase.FindAllStringIndex(text, -1) {
		pieces, quoted = append(pieces, text[last:m[0]], text[m[0]:m[1]]), append(quoted, false, true)
		last = m[1]
	}
	pieces, quoted = append(pieces, text[last:]), append(quoted, false)
	var clauses []string
	var inQuote []bool
	for k, p := range pieces {
		for _, cl := range clauseBreak.Split(p, -1) {
			clauses, inQuote = append(clauses, cl), append(inQuote, quoted[k])
		}
	}
	for k, clause := range clauses {
		// A negation covers the next negationScope content words of its
		// clause; a second negation in that scope cancels the first. A
		// negation followed by no content word in its clause ("buyers
		// cannot get it") is counted bare.
		scope, negated, covered := 0, false, true
		words := textproc.Words(clause)
		for i, w := range words {
			if !inQuote[k] && (negations[w] || w == "t" && i > 0 && contracted[words[i-1]] || strings.HasSuffix(w, "nt") && textproc.IsStopWord(w)) {
				if !covered {
					u.bareNegations++
				}
				negated = scope == 0 || !negated
				scope, covered = negationScope, false
				continue
			}
			if textproc.IsStopWord(w) {
				u.stems[w] = true
				continue
			}
			t := textproc.Stem(w)
			u.stems[t] = true
			if scope > 0 {
				u.negated[t] = u.negated[t] || negated
				scope--
				covered = true
			}
			if !u.set[t] {
				u.set[t] = true
				u.terms = append(u.terms, t)
			}
		}
		if !covered {
			u.bareNegations++
		}
	}
	u.numbers = numbersOf(text)
	for _, w := range u.words {
		if n, ok := numberWords[w]; ok {
			u.numbers = append(u.numbers, n)
		}
	}
	if claim {
		u.names = capitalised(text)
		u.claim = readClaim(text, u.stems)
	}
	u.weights = make([]float64, len(u.terms))
	for i, t := range u.terms {
		u.weights[i] = weight(t)
	}
	u.line = " " + strings.Join(u.words, " ") + " "
	if claim {
		u.dir = readDirection(text)
	}
	return u
}

// capitalised returns the lowercase form of the capitalised words of text
// that do not start a sentence and are not stop words: the names a claim
// relies on.
func capitalised(text string) []string {
	var out []string
	start := true
	for _, f := range strings.Fields(text) {
		w := strings.TrimFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		r, _ := utf8.DecodeRuneInString(w)
		if w != "" && !start && unicode.IsUpper(r) {
			for _, part := range textproc.Words(w) {
				if !textproc.IsStopWord(part) && len(part) > 1 {
					out = append(out, part)
				}
			}
		}
		start = strings.HasSuffix(f, ".") || strings.HasSuffix(f, ":") || w == ""
	}
	return out
}

// evidence is an ordered list of analysed passages.
type evidence struct {
	texts []string
	units []unit
	// group[i] identifies the source of passage i (an entity); passages
	// are windowed only within one source.
	group []int
	// postings lists, for each term, the passages that use it, in
	// ascending order: a claim is scored by looking up each of its terms
	// once, not once per passage.
	postings map[string][]int
	// locs[i] is where passage i is in its entity (nil for evidence that
	// is not an entity's).
	locs     []location
	tagStems [][]string // the stems of each tag of the entity, for locating the tags line
	// dirs[i] is the direction of passage i, read on first use by
	// reversal (dirOnce).
	dirOnce sync.Once
	dirs    []direction
	words   map[string]bool
	nums    map[string]bool
	// base, when set, makes this evidence a variant of base: base's
	// passages with n more inserted at index at (an entity's passages with
	// the turn's applications of it among its key ideas; variantOf).
	// texts, group and locs are the variant's own, all of them; inserted
	// holds what the inserted passages add, and the rest is read from base
	// through unitAt, post, hasPost, hasWord, hasNum and eachWord.
	base     *evidence
	at, n    int
	inserted []*passageKeys
}

// size is the number of passages.
func (ev *evidence) size() int { return len(ev.texts) }

// unitAt is the analysis of passage j.
func (ev *evidence) unitAt(j int) *unit {
	switch {
	case ev.base == nil:
		return &ev.units[j]
	case j < ev.at:
		return &ev.base.units[j]
	case j < ev.at+ev.n:
		return &ev.inserted[j-ev.at].unit
	}
	return &ev.base.units[j-ev.n]
}

// passageKeys are what a variant reads of a passage it inserts: its
// analysis, the terms it is posted under (its terms and their related
// forms), its words and its numbers, each sorted, and its direction,
// read on first use (direction).
type passageKeys struct {
	unit
	posts, words, nums []string
	text               string
	dirOnce            sync.Once
	dir                direction
}

// direction is readDirection of the passage, read once.
func (k *passageKeys) direction() direction {
	k.dirOnce.Do(func() { k.dir = readDirection(k.text) })
	return k.dir
}

// insertedKeys remembers the passageKeys of texts, within its share of
// memo.Budget: the passages a turn inserts come from the catalog.
var insertedKeys = memo.Bounded[string, *passageKeys]{Max: maxRememberedAnalyses, MaxBytes: memo.Share(0.1),
	Size: func(text string, k *passageKeys) int64 {
		return unitBytes(analysedKey{text: text}, k.unit) + memo.StringsBytes(k.posts) + memo.StringsBytes(k.words) + memo.StringsBytes(k.nums) + 4*int64(len(text))
	}}

func keysOf(text string) *passageKeys {
	return insertedKeys.Get(text, func(text string) *passageKeys {
		u := analysePassage(text)
		k := &passageKeys{unit: u, words: slices.Clone(u.words), nums: slices.Clone(u.numbers), text: text}
		for _, t := range u.terms {
			k.posts = append(k.posts, t)
			k.posts = append(k.posts, relatedForms(t)...)
		}
		for _, list := range []*[]string{&k.posts, &k.words, &k.nums} {
			slices.Sort(*list)
			*list = slices.Clip(slices.Compact(*list))
		}
		return k
	})
}

func sortedHas(list []string, s string) bool {
	_, ok := slices.BinarySearch(list, s)
	return ok
}

// post returns the passages that use term t, ascending. A variant's list
// is merged from its base's (renumbered past the inserted passages) and
// the inserted passages', into buf's storage: it stays valid until buf
// is reset.
func (ev *evidence) post(t string, buf *[]int) []int {
	if ev.base == nil {
		return ev.postings[t]
	}
	from := ev.base.postings[t]
	split, _ := slices.BinarySearch(from, ev.at)
	start := len(*buf)
	*buf = append(*buf, from[:split]...)
	for i, k := range ev.inserted {
		if sortedHas(k.posts, t) {
			*buf = append(*buf, ev.at+i)
		}
	}
	if split == len(from) && len(*buf)-start == split {
		*buf = (*buf)[:start]
		return from // nothing inserted uses t, and base's numbers hold
	}
	for _, j := range from[split:] {
		*buf = append(*buf, j+ev.n)
	}
	return (*buf)[start:len(*buf):len(*buf)]
}

// hasPost reports whether a passage uses term t.
func (ev *evidence) hasPost(t string) bool {
	if ev.base == nil {
		return len(ev.postings[t]) > 0
	}
	return ev.base.hasPost(t) || slices.ContainsFunc(ev.inserted, func(k *passageKeys) bool { return sortedHas(k.posts, t) })
}

// hasWord reports whether a passage uses word w.
func (ev *evidence) hasWord(w string) bool {
	if ev.base == nil {
		return ev.words[w]
	}
	return ev.base.hasWord(w) || slices.ContainsFunc(ev.inserted, func(k *passageKeys) bool { return sortedHas(k.words, w) })
}

// hasNum reports whether a passage states number n.
func (ev *evidence) hasNum(n string) bool {
	if ev.base == nil {
		return ev.nums[n]
	}
	return ev.base.hasNum(n) || slices.ContainsFunc(ev.inserted, func(k *passageKeys) bool { return sortedHas(k.nums, n) })
}

// eachWord calls f with the words of the passages (some more than once
// in a variant) until it returns true, and reports whether it did.
func (ev *evidence) eachWord(f func(string) bool) bool {
	if ev.base == nil {
		for w := range ev.words {
			if f(w) {
				return true
			}
		}
		return false
	}
	for _, k := range ev.inserted {
		if slices.ContainsFunc(k.words, f) {
			return true
		}
	}
	return ev.base.eachWord(f)
}

// variantOf returns base's evidence with the key ideas extra inserted at
// index at, after base's keyIdeas key ideas, reading as buildEvidence
// would build it from all the variant's passages but sharing base's
// analyses and postings: a turn's applications vary with the question,
// so the variants of one entity are many and each is built per check,
// while base is worked out once per version of the entity.
func variantOf(base *evidence, at, keyIdeas int, extra []string) *evidence {
	ev := &evidence{base: base, at: at, n: len(extra), tagStems: base.tagStems}
	size := len(base.texts) + len(extra)
	ev.texts = slices.Concat(base.texts[:at], extra, base.texts[at:])
	ev.locs = make([]location, 0, size)
	ev.locs = append(ev.locs, base.locs[:at]...)
	for i, text := range extra { // as locatedPassages locates them
		ev.locs = append(ev.locs, location{"key_ideas[" + strconv.Itoa(keyIdeas+i) + "]", 0, len(text)})
	}
	ev.locs = append(ev.locs, base.locs[at:]...)
	ev.group = make([]int, size)
	ev.inserted = make([]*passageKeys, len(extra))
	for i, text := range extra {
		ev.inserted[i] = keysOf(text)
	}
	return ev
}

func newEvidence() *evidence {
	return &evidence{postings: map[string][]int{}, words: map[string]bool{}, nums: map[string]bool{}}
}

// Analysed passages are remembered (up to maxRememberedAnalyses texts of up
// to 4 KB): a turn checks its claims against the same knowledge-base
// passages as the turns before it. Claims are remembered the same way: the
// builtin model composes its answers from the knowledge base's own
// sentences. A unit is never modified once built, so sharing it is safe.
var analysed = memo.Bounded[analysedKey, unit]{Max: maxRememberedAnalyses,
	Remember: func(k analysedKey) bool { return len(k.text) <= 4096 },
	MaxBytes: memo.Share(0.3), Size: unitBytes}

// unitBytes estimates the bytes a remembered unit holds: its text, its
// lists (each word about three times: words, terms, stems and line) and
// its maps, whose entries cost about memo.EntryBytes each.
func unitBytes(k analysedKey, u unit) int64 {
	n := memo.EntryBytes + 2*int64(len(k.text)) + memo.StringsBytes(u.terms) + memo.StringsBytes(u.words) +
		memo.StringsBytes(u.numbers) + memo.StringsBytes(u.names) + int64(len(u.line)) + 8*int64(len(u.weights))
	n += memo.EntryBytes * int64(len(u.set)+len(u.negated)+len(u.stems))
	if u.claim != nil {
		n += 2 * int64(len(k.text))
	}
	return n
}

type analysedKey struct {
	text  string
	claim bool
}

const maxRememberedAnalyses = 50_000

// analyseCached is analyse, remembered.
func analyseCached(text string, claim bool) unit {
	return analysed.Get(analysedKey{text, claim}, func(k analysedKey) unit { return analyse(k.text, k.claim) })
}

// analysePassage is analyse(text, false), remembered.
func analysePassage(text string) unit { return analyseCached(text, false) }

func (ev *evidence) add(text string, group int) {
	u := analysePassage(text)
	ev.texts = append(ev.texts, text)
	ev.units = append(ev.units, u)
	ev.group = append(ev.group, group)
	// A passage is posted under each of its terms and under their related
	// word forms (wordforms.go), so that a claim's "proved" finds the
	// passages that say "proof" with one lookup. Passages are added in
	// order: each list stays ascending, and a passage that has two forms
	// of one stem is posted once.
	j := len(ev.units) - 1
	post := func(t string) {
		if list := ev.postings[t]; len(list) == 0 || list[len(list)-1] != j {
			ev.postings[t] = append(list, j)
		}
	}
	for _, t := range u.terms {
		post(t)
		for _, r := range relatedForms(t) {
			post(r)
		}
	}
	for _, w := range u.words {
		ev.words[w] = true
	}
	for _, n := range u.numbers {
		ev.nums[n] = true
	}
}

// weight is how much a claim term counts: rare words (names, specific
// nouns, numbers) count more than common ones.
func weight(term string) float64 { return termWeight(term) }

// postedInto is the postings of each of the claim's terms (the passages
// that use the term or one of its derivationally related forms), written
// into buf's storage, a variant's merged lists into sc.flat's.
func (ev *evidence) postedInto(sc *scratch, buf *[][]int, c *unit) [][]int {
	out := zeroed(buf, len(c.terms))
	for i, t := range c.terms {
		out[i] = ev.post(t, &sc.flat)
	}
	return out
}

// scratch holds the buffers the scoring of one claim against one evidence
// reuses: a turn scores every claim against every source, and these
// buffers were most of what it allocated. features takes one from
// scratches and gives it back; nothing it returns points into one.
type scratch struct {
	posts, subPosts    [][]int
	flat               []int // a variant's merged postings (evidence.post)
	single, pair, gain []float64
	count              []int
	covered, inTop     []bool
	scoring            scoring
	claim              unit
}

var scratches = sync.Pool{New: func() any { return new(scratch) }}

// zeroed returns n zero values in buf's storage, growing it if needed.
func zeroed[T any](buf *[]T, n int) []T {
	if cap(*buf) < n {
		*buf = make([]T, n)
	}
	*buf = (*buf)[:n]
	clear(*buf)
	return *buf
}

// inAny reports whether one of the passages idx is in the postings list.
func inAny(post []int, idx []int) bool {
	for _, j := range idx {
		if _, ok := slices.BinarySearch(post, j); ok {
			return true
		}
	}
	return false
}

// allFeatures makes features compute every feature, those the model does
// not use included (for fitting).
var allFeatures = false

// features of a claim against evidence, in the order of modelWeights.
type features struct {
	x     [nFeatures]float64
	terms int   // content terms of the claim
	best  []int // the passages that support the claim best
	top   int   // the passage of best that holds most of the claim, -1 when none
	plain float64
	// contrastCover is the plain coverage of the claim by the passage the
	// negation and antonym features compare it with.
	contrastCover float64
}

const (
	fBest = iota
	fGreedy
	fUnion
	fSubMin
	fMissNum
	fMissName
	fLen
	fMissWeight
	fPlain
	fNeg
	fAntonym
	fMissNameLog
	nFeatures
)

// featureSet names each feature and says how it is computed from a
// scoring; the order is the order of modelWeights. The cheap features
// come first: bestWindow sets the window the later ones read.
var featureSet = [nFeatures]struct {
	name    string
	compute func(*scoring) float64
}{
	fBest:        {"best", (*scoring).bestWindow},
	fGreedy:      {"greedy3", (*scoring).greedyCover},
	fUnion:       {"union", (*scoring).unionCover},
	fSubMin:      {"submin", (*scoring).weakestPart},
	fMissNum:     {"missnum", (*scoring).missingNumbers},
	fMissName:    {"missname", (*scoring).missingNames},
	fLen:         {"len", (*scoring).length},
	fMissWeight:  {"missweight", (*scoring).missingWeight},
	fPlain:       {"plain", (*scoring).plainCover},
	fNeg:         {"negation", (*scoring).negationContrast},
	fAntonym:     {"antonym", (*scoring).antonymContrast},
	fMissNameLog: {"missnamelog", (*scoring).missingNamesLog},
}

var featureNames = func() (names [nFeatures]string) {
	for i, f := range featureSet {
		names[i] = f.name
	}
	return names
}()

// scoring is one claim held against one evidence: what the features read.
type scoring struct {
	ev    *evidence
	claim *unit
	text  string
	posts [][]int   // the passages that use each claim term (posted)
	ws    []float64 // the weight of each claim term
	total float64   // their sum, at least minClaimWeight
	// single[j] is the claim weight found in passage j, pair[j] in
	// passages j-1 and j together.
	single, pair []float64
	best         []int // the best window, set by bestWindow
	top          int   // the passage of the best window that covers most, -1 when none
	// inTop[i] tells whether claim term i is in passage top (set by
	// bestWindow): what the contrasts compare.
	inTop []bool
	// scratch holds the buffers above (and greedy's), reused across
	// claims.
	scratch *scratch
}

func (ev *evidence) features(claim string) features {
	c := analyseCached(claim, true)
	sc := scratches.Get().(*scratch)
	sc.flat = sc.flat[:0]
	defer func() {
		sc.scoring, sc.claim = scoring{}, unit{} // hold no evidence while pooled
		scratches.Put(sc)
	}()
	sc.claim = c
	s := &sc.scoring
	*s = scoring{ev: ev, claim: &sc.claim, text: claim, posts: ev.postedInto(sc, &sc.posts, &sc.claim), ws: c.weights, top: -1, scratch: sc}
	for _, w := range s.ws {
		s.total += w
	}
	// A claim of a few words is matched by chance more easily: its
	// coverage is measured against at least minClaimWeight.
	s.total = max(s.total, minClaimWeight)
	s.windows()
	f := features{terms: len(c.terms)}
	for i, feat := range featureSet {
		if allFeatures || modelWeights[i] != 0 || alwaysComputed[i] {
			f.x[i] = feat.compute(s)
		}
	}
	f.best, f.top, f.plain = s.best, s.top, f.x[fPlain]
	f.contrastCover = s.sharedWithTop()
	return f
}

// alwaysComputed are the features the checks of verify.go read whatever
// their weight: the window, coverage and contrasts.
var alwaysComputed = [nFeatures]bool{fBest: true, fMissNum: true, fMissName: true, fMissWeight: true, fPlain: true, fNeg: true, fAntonym: true}

// windows sums, for each passage and each pair of neighbouring passages,
// the claim weight they hold, in the claim's term order as cover does.
func (s *scoring) windows() {
	n := s.ev.size()
	s.single, s.pair = zeroed(&s.scratch.single, n), zeroed(&s.scratch.pair, n)
	for i, post := range s.posts {
		for k, j := range post {
			s.single[j] += s.ws[i]
			s.pair[j] += s.ws[i]
			if j+1 < n && (k+1 == len(post) || post[k+1] != j+1) {
				s.pair[j+1] += s.ws[i]
			}
		}
	}
}

// bestWindow is the weighted coverage of the claim by its best passage or
// window of two neighbouring passages of one source.
func (s *scoring) bestWindow() float64 {
	// The best window is its last passage (end) and whether it is a pair;
	// its list is made once, at the end.
	bestScore, end, pair := -1.0, -1, false
	for i := range s.single {
		if sc := s.single[i] / s.total; sc > bestScore {
			bestScore, end, pair = sc, i, false
		}
		if i > 0 && s.ev.group[i] == s.ev.group[i-1] {
			if sc := s.pair[i] / s.total; sc > bestScore+1e-9 {
				bestScore, end, pair = sc, i, true
			}
		}
	}
	best := []int{}
	switch {
	case pair:
		best = []int{end - 1, end}
	case end >= 0:
		best = []int{end}
	}
	s.best = best
	for _, i := range best {
		if s.top < 0 || s.single[i] > s.single[s.top] {
			s.top = i
		}
	}
	if s.top >= 0 {
		s.inTop = zeroed(&s.scratch.inTop, len(s.posts))
		for i, post := range s.posts {
			_, s.inTop[i] = slices.BinarySearch(post, s.top)
		}
	}
	return max(bestScore, 0)
}

// plainCover is the unweighted coverage of the claim by the best window.
func (s *scoring) plainCover() float64 {
	if len(s.best) == 0 || len(s.claim.terms) == 0 {
		return 0
	}
	// The share of the claim's terms found in the best window, each term
	// weighing 1 (as a sum of weights of one would: such a sum is exact).
	got := 0
	for _, post := range s.posts {
		if inAny(post, s.best) {
			got++
		}
	}
	return float64(got) / float64(len(s.claim.terms))
}

// greedyCover is the weighted coverage reached by up to three passages
// together.
func (s *scoring) greedyCover() float64 { return s.ev.greedy(s.scratch, s.posts, s.ws, s.total, 3) }

// missingWeight is the weight of the claim's terms no passage uses.
func (s *scoring) missingWeight() float64 {
	miss := 0.0
	for i, post := range s.posts {
		if len(post) == 0 {
			miss += s.ws[i]
		}
	}
	return miss
}

// unionCover is the weighted coverage of the claim by all the evidence.
func (s *scoring) unionCover() float64 { return 1 - s.missingWeight()/s.total }

// weakestPart is the coverage of the least supported clause of the claim
// (two passages per clause): every part must be supported.
func (s *scoring) weakestPart() float64 {
	low := 1.0
	for _, part := range subClaims(s.text) {
		p := analysePassage(part)
		if len(p.terms) < 2 {
			continue
		}
		pt := 0.0
		for _, w := range p.weights {
			pt += w
		}
		low = min(low, s.ev.greedy(s.scratch, s.ev.postedInto(s.scratch, &s.scratch.subPosts, &p), p.weights, pt, 2))
	}
	return low
}

// missingNumbers counts the claim's numbers the evidence never states.
func (s *scoring) missingNumbers() float64 {
	n := 0
	for _, num := range s.claim.numbers {
		if !s.ev.hasNum(num) {
			n++
		}
	}
	return float64(n)
}

// missingNames counts the claim's names the evidence never uses.
func (s *scoring) missingNames() float64 {
	n := 0
	for _, name := range s.claim.names {
		if !s.ev.usesName(name) {
			n++
		}
	}
	return float64(n)
}

// missingNamesLog is the log of one more than missingNames: the first
// missing name says the most.
func (s *scoring) missingNamesLog() float64 { return math.Log1p(s.missingNames()) }

// monthAbbreviations are the short forms of the months' names.
var monthAbbreviations = map[string][]string{"january": {"jan"}, "february": {"feb"}, "march": {"mar"}, "april": {"apr"},
	"june": {"jun"}, "july": {"jul"}, "august": {"aug"}, "september": {"sep", "sept"}, "october": {"oct"},
	"november": {"nov"}, "december": {"dec"}}

// demonymEndings are the endings that make a people's or a language's
// name from a place's (Libya/Libyan, Canada/Canadian, Japan/Japanese).
var demonymEndings = []string{"ian", "an", "n", "ese", "ish", "i"}

// usesName reports whether the evidence uses a name of a claim (a
// lowercase word): as a word or a form of it, a month by its abbreviation
// ("Nov 10" for "November"), a people by its place ("Libya" for
// "Libyan": a word of at most two letters more than the name without a
// demonym ending, of at least four letters, starting it).
func (ev *evidence) usesName(name string) bool {
	if ev.hasWord(name) || ev.hasPost(textproc.Stem(name)) {
		return true
	}
	if slices.ContainsFunc(monthAbbreviations[name], ev.hasWord) {
		return true
	}
	for _, end := range demonymEndings {
		root, ok := strings.CutSuffix(name, end)
		if !ok || len(root) < 4 {
			continue
		}
		if ev.eachWord(func(w string) bool { return strings.HasPrefix(w, root) && len(w) <= len(root)+2 }) {
			return true
		}
	}
	return false
}

// length is the log of the number of the claim's content terms.
func (s *scoring) length() float64 { return math.Log1p(float64(len(s.claim.terms))) }

// negationContrast is 1 when a term the claim shares with the top passage
// of its best window is negated in one of them and not in the other, or
// when one of them has more bare negations than the other.
func (s *scoring) negationContrast() float64 {
	if s.top < 0 {
		return 0
	}
	p := s.ev.unitAt(s.top)
	if s.claim.bareNegations != p.bareNegations {
		return 1
	}
	for i, t := range s.claim.terms {
		if s.inTop[i] && s.claim.negated[t] != p.negated[t] {
			return 1
		}
	}
	return 0
}

// antonymContrast counts the claim's words whose opposite the top passage
// uses instead.
func (s *scoring) antonymContrast() float64 {
	if s.top < 0 {
		return 0
	}
	return float64(contrasts(s.claim.claim.opposable, s.claim.stems, s.ev.unitAt(s.top).stems))
}

// sharedWithTop is the share of the claim's terms the top passage uses:
// the contrasts count only when it repeats most of the claim.
func (s *scoring) sharedWithTop() float64 {
	if s.top < 0 || len(s.claim.terms) == 0 {
		return 0
	}
	shared := 0
	for _, in := range s.inTop {
		if in {
			shared++
		}
	}
	return float64(shared) / float64(len(s.claim.terms))
}

// greedy picks up to k passages, each time the one that adds the most
// uncovered weight, and returns the weighted coverage they reach. posts
// are the postings of the claim's terms, ws their weights.
func (ev *evidence) greedy(sc *scratch, posts [][]int, ws []float64, total float64, k int) float64 {
	if total == 0 {
		return 0
	}
	covered := zeroed(&sc.covered, len(posts))
	gain, count := zeroed(&sc.gain, ev.size()), zeroed(&sc.count, ev.size())
	got := 0.0
	for round := 0; round < k; round++ {
		clear(gain)
		clear(count)
		for i, post := range posts {
			if covered[i] {
				continue
			}
			for _, j := range post {
				gain[j] += ws[i]
				count[j]++
			}
		}
		bestGain, bestJ := 0.0, -1
		for j := range gain {
			if round > 0 && count[j] < greedyMinTerms {
				continue
			}
			if gain[j] > bestGain+1e-12 {
				bestGain, bestJ = gain[j], j
			}
		}
		if bestJ < 0 {
			break
		}
		for i, post := range posts {
			if _, ok := slices.BinarySearch(post, bestJ); ok {
				covered[i] = true
			}
		}
		got += bestGain
	}
	return got / total
}

// greedyMinTerms is how many new claim terms a passage must add to join
// the evidence after the first.
var greedyMinTerms = 2

// minClaimWeight is the least total weight coverage is divided by.
var minClaimWeight = 5.0

var clauseSplit = regexp.MustCompile(`\s*(?:[,;:()–—]|\s-\s|\band\b|\bbut\b|\bwhile\b|\bwhich\b|\bwho\b|\bwhere\b|\bwhen\b|\bafter\b|\bbefore\b|\bincluding\b|\bwith\b)\s*`)

// subClaims splits a claim into its clauses and list items.
func subClaims(claim string) []string {
	var out []string
	for _, p := range clauseSplit.Split(claim, -1) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// missingNumberCap is the probability of support of a claim that states a
// number the evidence never gives: on the WiCE development set 4 of the 76
// claims with such a number were supported.
const missingNumberCap = 0.05

// probability turns features into the probability of support. A number
// the evidence does not state caps it: an overlapping claim with a wrong
// number, year or count is never verified.
func probability(x []float64) float64 {
	if x[fMissNum] > 0 {
		return min(missingNumberCap, logistic(x))
	}
	return logistic(x)
}

func logistic(x []float64) float64 {
	z := modelBias
	for i, w := range modelWeights {
		z += w * x[i]
	}
	return 1 / (1 + math.Exp(-z))
}

// findWords returns the index of the first passage that contains needle
// word for word (-1 when none does). needle is in the form of a unit's
// line: lowercase words joined by spaces, with a space at each end.
func (ev *evidence) findWords(needle string) int {
	for i := range ev.size() {
		u := ev.unitAt(i)
		if strings.Contains(u.line, needle) {
			return i
		}
	}
	return -1
}

// quoted reports whether the claim quotes at least one phrase of two words
// or more and every such phrase occurs word for word in one passage; it
// returns the passage of the first.
func (ev *evidence) quoted(c *claimFacts) (bool, int) {
	first := -1
	for _, q := range c.quotes {
		if len(q.words) < 2 {
			continue
		}
		i := -1
		// Most quotes (a user's own words, repeated) use a word the
		// evidence never does: no passage needs to be searched.
		if !slices.ContainsFunc(q.words, func(w string) bool { return !ev.hasWord(w) }) {
			i = ev.findWords(q.needle)
		}
		if i < 0 {
			return false, -1
		}
		if first < 0 {
			first = i
		}
	}
	return first >= 0, first
}
