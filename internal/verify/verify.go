// Package verify checks an answer against the knowledge it cites and
// returns the confidence verdict of D7: the answer is split into claims,
// each claim is checked against the entities it cites (every field,
// metadata included) or, when it cites nothing, against the knowledge the
// turn retrieved, and judged verified, unsupported or contradicted.
//
// The checks, in order:
//  1. metadata: a year, an author's name or a quoted phrase presented as
//     a title that the claim attributes to a cited work must match that
//     work; a mismatch is contradicted (a wrong year or author is never
//     verified);
//  2. support: the claim's score is the probability that one source
//     supports all of it, from a logistic model (model.go, fit on the WiCE
//     development set) over rarity-weighted word coverage of the best
//     passage or window of two neighbouring passages, the numbers of the
//     claim the source never states and the names it never uses (a month
//     is also met by its abbreviation, a people's name by its place's); a
//     number the source never states caps the probability at 0.05. A phrase quoted word for word from the
//     source supports the claim when the rest of it holds. The claim is
//     verified when the score reaches Threshold.
//
// The same scoring core (score.go) serves the knowledge base (an entity's
// fields are its passages) and WiCE-style evidence (a page's sentences).
package verify

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/constraintlab/assistant/internal/assistant"

	"github.com/constraintlab/assistant/internal/textproc"
)

// Claim statuses (D7).
const (
	Verified     = "verified"
	Unsupported  = "unsupported"
	Contradicted = "contradicted"
)

// DefaultThreshold is the probability of support a claim needs to be
// verified. The model is fit with balanced classes, so 0.5 is the point
// where supported and unsupported claims are weighed alike; it is also the
// best bar of the cross-validation on the WiCE development set.
const DefaultThreshold = 0.5

// Verdict is the check of one claim (D7).
type Verdict struct {
	Claim     string    `json:"claim"`
	Status    string    `json:"status" enum:"verified,unsupported,contradicted"`
	Citations []string  `json:"citations" doc:"Tokens the claim cites, type:slug."`
	Evidence  *Evidence `json:"evidence" doc:"The passage that decided the verdict, or null."`
	Score     float64   `json:"score" doc:"Estimated probability, 0 to 1, that the sources support the whole claim (0 when contradicted or not checked); verified when it reaches the threshold."`
	// Reason says in a few words why the claim got its status.
	Reason string `json:"reason"`
	// Basis tells two kinds of unsupported claims apart: no_evidence
	// (nothing relevant was found) or insufficient (the closest passage
	// falls short). Empty, and omitted, for the other statuses.
	Basis string `json:"basis,omitempty" enum:"no_evidence,insufficient" doc:"Unsupported only: no_evidence (nothing relevant found) or insufficient (the closest passage falls short)."`
}

// Evidence is the passage of an entity that supports or contradicts a
// claim, and where it is in the entity's card (location.go).
type Evidence struct {
	Type    string `json:"type"`
	Slug    string `json:"slug"`
	Snippet string `json:"snippet" doc:"The passage, cut to 280 bytes at a word boundary; when the verdict rests on the work's title, authors or year, its metadata line (\"Title\" by A, published in Y)."`
	// Field, Start and End locate Quote in the card: Field is the JSON
	// name of the card field, Start and End UTF-16 offsets in its text.
	Field string `json:"field" example:"key_ideas[2]" doc:"The field of the entity card (POST /resolve) the passage comes from: title, summary, year, authors[i], tags[i], key_ideas[i]; when_to_use[i] and pitfalls[i] name fields of the entity the card does not carry. Empty only when a model judge quoted a passage that cannot be located."`
	Start int    `json:"start" minimum:"0" doc:"Offset of the passage in the field's text, in UTF-16 code units (JavaScript string indices), included. A year is located in its decimal form."`
	End   int    `json:"end" minimum:"0" doc:"Offset of the end of the passage in the field's text, in UTF-16 code units, excluded."`
	Quote string `json:"quote" doc:"The field's text from start to end, exactly: the passage to highlight."`
}

// Confidence is the verdict on a whole answer (D7).
type Confidence struct {
	Score          float64 `json:"score" minimum:"0" maximum:"1" doc:"verifiedClaims / totalClaims, 0 when there is no claim; for a chat answer, the lower of that and relevance."`
	Level          string  `json:"level" enum:"high,medium,low,none" doc:"high >= 0.8, medium >= 0.5, low > 0, none otherwise."`
	TotalClaims    int     `json:"totalClaims"`
	VerifiedClaims int     `json:"verifiedClaims"`
	// Relevance is how much of what was asked the answer's verified
	// claims address, 0 to 1; chat answers only (nil elsewhere). The
	// score is then the lower of support and relevance.
	Relevance *float64  `json:"relevance,omitempty" minimum:"0" maximum:"1" doc:"Chat answers only: how much of what was asked the verified claims address, 0 to 1. The score is the lower of verifiedClaims/totalClaims and this."`
	Verdicts  []Verdict `json:"verdicts"`
}

// HighFrom and MediumFrom are the lowest scores of a `high` and a
// `medium` verdict (Level).
const (
	HighFrom   = 0.8
	MediumFrom = 0.5
)

// Level maps a score to the D7 level.
func Level(score float64, claims int) string {
	switch {
	case claims == 0 || score <= 0:
		return "none"
	case score >= HighFrom:
		return "high"
	case score >= MediumFrom:
		return "medium"
	}
	return "low"
}

// Checker verifies claims.
type Checker struct {
	// Threshold is the score (probability of support, 0 to 1) a claim
	// needs to be verified.
	Threshold float64
}

// New returns a checker with the default threshold.
func New() *Checker { return &Checker{Threshold: DefaultThreshold} }

// Claim is one checkable statement of an answer.
type Claim struct {
	Text      string
	Citations []assistant.Token
	// Invalid lists citation tokens that do not resolve (D6): such a
	// claim is unsupported whatever it says.
	Invalid []string
}

// trimListMarker removes the bullets and numbers that open a list item
// ("- ", "* ", "• ", "3. ", "2) "); a number that begins a sentence ("12
// Powers") is not one.
func trimListMarker(line string) string {
	for {
		rest := strings.TrimLeft(line, "-*•")
		if rest == line {
			digits := strings.TrimLeft(line, "0123456789")
			if len(digits) == len(line) || len(digits) < 2 || (digits[0] != '.' && digits[0] != ')') || digits[1] != ' ' {
				return line
			}
			rest = digits[1:]
		}
		line = strings.TrimSpace(rest)
	}
}

// SplitClaims splits an answer into claims: every assertive sentence or
// list item, cited or not (D29): an uncited sentence of advice is a claim
// too, checked against the knowledge the turn retrieved. Headings,
// questions, lead-ins that end with a colon and fragments of fewer than
// four words are not claims.
func SplitClaims(text string) []Claim {
	var claims []Claim
	for rest := text; rest != ""; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = trimListMarker(line)
		line = strings.ReplaceAll(line, "**", "")
		for _, s := range textproc.SharedSentences(line) {
			c := Claim{Text: s}
			eachToken(s, func(typ, slug string) {
				t := assistant.Token{Type: assistant.EntityType(typ), Slug: slug}
				if !slices.Contains(c.Citations, t) {
					c.Citations = append(c.Citations, t)
				}
			})
			bare := strings.TrimSpace(withoutTokens(s))
			end := strings.TrimRight(bare, "\"'”’)")
			if textproc.WordCount(bare) < 4 || strings.HasSuffix(end, "?") || strings.HasSuffix(end, ":") {
				continue
			}
			claims = append(claims, c)
		}
	}
	return claims
}

var yearPattern = regexp.MustCompile(`\b(1[5-9]\d\d|20\d\d)\b`)

// Check verifies the claims of text. cited holds the entities the answer's
// tokens resolve to; hits are the entities the turn retrieved, the evidence
// for uncited claims. A token that is in neither is treated as invented.
func (c *Checker) Check(text string, cited map[assistant.Token]assistant.Entity, hits []assistant.Entity) Confidence {
	claims := SplitClaims(text)
	for i := range claims {
		var valid []assistant.Token
		for _, t := range claims[i].Citations {
			if _, ok := cited[t]; ok {
				valid = append(valid, t)
			} else {
				claims[i].Invalid = append(claims[i].Invalid, t.String())
			}
		}
		claims[i].Citations = valid
	}
	return c.CheckClaims(claims, cited, hits)
}

// CheckClaims verifies already split claims.
func (c *Checker) CheckClaims(claims []Claim, cited map[assistant.Token]assistant.Entity, hits []assistant.Entity) Confidence {
	conf := Confidence{Verdicts: make([]Verdict, 0, len(claims))}
	index := evidenceIndex{}
	for _, cl := range claims {
		v := c.checkClaim(cl, cited, hits, index)
		conf.Verdicts = append(conf.Verdicts, v)
		conf.TotalClaims++
		if v.Status == Verified {
			conf.VerifiedClaims++
		}
	}
	if conf.TotalClaims > 0 {
		conf.Score = math.Round(float64(conf.VerifiedClaims)/float64(conf.TotalClaims)*1000) / 1000
	}
	conf.Level = Level(conf.Score, conf.TotalClaims)
	return conf
}

func (c *Checker) checkClaim(cl Claim, cited map[assistant.Token]assistant.Entity, hits []assistant.Entity, index evidenceIndex) Verdict {
	v := Verdict{Claim: claimText(cl.Text), Citations: make([]string, 0, len(cl.Citations))}
	for _, t := range cl.Citations {
		v.Citations = append(v.Citations, t.String())
	}
	if len(cl.Invalid) > 0 {
		// The invented token itself is not repeated: it must not reach the
		// client in any form (D6).
		v.Status, v.Basis, v.Reason = Unsupported, NoEvidence, "cites a source that is not in the knowledge base"
		return v
	}
	var buf [2]assistant.Entity // most claims cite one or two sources
	sources := buf[:0]
	for _, t := range cl.Citations {
		sources = append(sources, cited[t])
	}
	if len(sources) == 0 {
		sources = hits
	}
	if len(sources) == 0 {
		v.Status, v.Basis, v.Reason = Unsupported, NoEvidence, "no evidence to check it against"
		return v
	}
	claim := analyseCached(v.Claim, true)
	facts := claim.claim
	// Metadata first: a wrong year, author or title is a contradiction.
	if len(cl.Citations) > 0 {
		if e, field, meta, reason := contradiction(facts, sources, index); reason != "" {
			v.Status, v.Reason = Contradicted, reason
			v.Evidence = metadataEvidence(e, field, meta)
			return v
		}
	}
	// Each source is scored on its own: a claim must be supported by one
	// entity, not stitched together from several.
	score, overlap, contrast := -1.0, 0.0, false
	var from struct { // the passages of the best source that decide the verdict
		entity assistant.Entity
		ev     *evidence
		best   []int
		top    int
	}
	for _, e := range sources {
		ev := index.evidence(e)
		f := ev.features(v.Claim)
		p := probability(f.x[:])
		// A phrase quoted word for word from the source supports the
		// claim when what the claim says around it holds too (or is too
		// short to say anything, and uses no rare word, name or number the
		// source lacks).
		if q, i := ev.quoted(facts); q {
			rest := ev.features(facts.rest)
			if rest.x[fMissName] == 0 && rest.x[fMissNum] == 0 && rest.x[fMissWeight] < 0.9 &&
				(rest.terms < 3 || probability(rest.x[:]) >= c.Threshold) {
				p, f.best, f.top = max(p, 1), []int{i}, i
				f.x[fBest] = max(f.x[fBest], 1)
			}
		}
		if p <= score {
			continue
		}
		score, overlap, from.ev = p, f.x[fBest], nil
		// A cited claim that repeats a passage almost word for word but
		// negates it, or swaps a word for its opposite, says the opposite
		// of the source.
		contrast = len(cl.Citations) > 0 && f.contrastCover >= contrastOverlap && (f.x[fNeg] > 0 || f.x[fAntonym] > 0)
		if len(f.best) > 0 && f.x[fBest] > 0 {
			from.entity, from.ev, from.best, from.top = e, ev, f.best, f.top
		}
	}
	if from.ev != nil {
		v.Evidence = from.ev.passageEvidence(from.entity, from.best, from.top, claim.stems)
	}
	v.Score = math.Round(score*1000) / 1000
	// A cited claim that one of its sources reverses (an opposite move of
	// the same thing, a number on the wrong side of a bound) is
	// contradicted by that passage.
	if len(cl.Citations) > 0 && !contrast {
		if evidence, reason := reversedBy(&claim, sources, index); evidence != nil {
			v.Status, v.Score, v.Reason, v.Evidence = Contradicted, 0, reason, evidence
			return v
		}
	}
	switch {
	case contrast:
		v.Status, v.Score, v.Reason = Contradicted, 0, "the source says the opposite"
	case v.Score >= c.Threshold: // the score as reported, so a caller's bar at a reported score holds
		v.Status, v.Reason = Verified, "the cited knowledge states it"
		if len(cl.Citations) == 0 {
			v.Reason = "the retrieved knowledge states it"
		}
	case overlap < relevantOverlap:
		v.Status, v.Basis, v.Reason = Unsupported, NoEvidence, "nothing relevant found in the sources"
		if v.Evidence == nil {
			v.Reason = "nothing in the sources mentions it"
		}
	default:
		v.Status, v.Basis, v.Reason = Unsupported, Insufficient, fmt.Sprintf("the closest passage falls short (score %.2f)", score)
	}
	return v
}

// reversedBy returns the evidence of the first passage of the sources
// that reverses the claim (direction.go) and the reason, or nil.
func reversedBy(claim *unit, sources []assistant.Entity, index evidenceIndex) (*Evidence, string) {
	for _, e := range sources {
		ev := index.evidence(e)
		if j, reason := ev.reversal(claim); j >= 0 {
			return evidenceAt(e, ev.placeLine(e, ev.locs[j], claim.stems), ev.texts[j]), reason
		}
	}
	return nil, ""
}

// Bases of an unsupported verdict.
const (
	// NoEvidence: no source to check against, or no passage shares a
	// third of the claim's (weighted) words.
	NoEvidence = "no_evidence"
	// Insufficient: a relevant passage exists but does not support all
	// of the claim.
	Insufficient = "insufficient"
)

// contrastOverlap is the share of a claim's words a passage must repeat
// for a negation or an opposite word between them to make the claim
// contradicted.
const contrastOverlap = 0.8

// relevantOverlap is the weighted share of a claim's words a passage must
// have for the claim to count as addressed by the sources.
const relevantOverlap = 1.0 / 3

// entityEvidence remembers the analysed evidence of one version of each
// entity, by token (up to maxRememberedEntities tokens; when full it
// starts again): its base. A chat turn adds its applications of a
// framework to the framework's key ideas, and those vary with the
// question and the vertical, so an entity is checked in many versions
// that differ only in key ideas added at the end of its own. Such a
// version is built from the base (variantOf) for each check, reusing the
// base's analyses and postings, and only the base is remembered: the
// memo holds one evidence per entity of the knowledge base, and varied
// questions cannot make it work the bases out again. An entity edited
// (other than by key ideas added) replaces its base.
var entityEvidence entityBases

const maxRememberedEntities = 20_000

type entityBases struct {
	bases sync.Map // assistant.Token -> *entityBase
	n     atomic.Int64
	// variants remembers the variants of the bases (variantOf): a turn's
	// applications of a framework come from the catalog, one set per
	// archetype and vertical, so the same variants recur across turns.
	variants sync.Map // variantKey -> *variantEntry
	nv       atomic.Int64
}

// maxRememberedVariants bounds entityBases.variants: a variant holds
// its passages' texts, locations and groups, a few KB at most.
const maxRememberedVariants = 2048

// variantKey names a variant by its base and the first and last of its
// inserted passages; the entry holds all of them, compared on lookup.
type variantKey struct {
	base            *evidence
	at, keyIdeas, n int
	first, last     string
}

type variantEntry struct {
	extra []string
	ev    *evidence
}

// variant is variantOf(base, at, keyIdeas, extra), remembered.
func (m *entityBases) variant(base *evidence, at, keyIdeas int, extra []string) *evidence {
	key := variantKey{base, at, keyIdeas, len(extra), extra[0], extra[len(extra)-1]}
	if v, ok := m.variants.Load(key); ok {
		if entry := v.(*variantEntry); slices.Equal(entry.extra, extra) {
			return entry.ev
		}
	}
	ev := variantOf(base, at, keyIdeas, extra)
	if m.nv.Add(1) > maxRememberedVariants {
		m.variants.Clear()
		m.nv.Store(1)
	}
	m.variants.Store(key, &variantEntry{slices.Clone(extra), ev})
	return ev
}

// entityBase is the evidence of source; neither is modified once stored.
type entityBase struct {
	source assistant.Entity
	ev     *evidence
}

// of returns the evidence of e.
func (m *entityBases) of(e assistant.Entity) *evidence {
	tok := e.Token()
	if v, ok := m.bases.Load(tok); ok {
		b := v.(*entityBase)
		if sameBesidesKeyIdeas(b.source, e) {
			k := commonPrefix(b.source.KeyIdeas, e.KeyIdeas)
			if k < len(b.source.KeyIdeas) {
				// Another version of the same entity: the key ideas they
				// share are closer to the entity's own, and become the
				// base.
				own := e
				own.KeyIdeas = slices.Clip(e.KeyIdeas[:k])
				b = &entityBase{own, buildEvidence(own)}
				m.bases.Store(tok, b)
			}
			if k == len(e.KeyIdeas) {
				return b.ev
			}
			return m.variant(b.ev, 1+len(textproc.SharedSentences(e.Summary))+k, k, e.KeyIdeas[k:])
		}
	}
	ev := buildEvidence(e)
	if m.n.Add(1) > maxRememberedEntities {
		m.bases.Clear()
		m.n.Store(1)
	}
	m.bases.Store(tok, &entityBase{e, ev})
	return ev
}

// buildEvidence analyses every passage of e.
func buildEvidence(e assistant.Entity) *evidence {
	ev := newEvidence()
	texts, locs := locatedPassages(e)
	for _, text := range texts {
		ev.add(text, 0)
	}
	ev.locs = locs
	ev.stemTags(e)
	return ev
}

// commonPrefix is the number of leading items a and b share.
func commonPrefix(a, b []string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// sameBesidesKeyIdeas reports whether two entities have the same passages
// but for their key ideas.
func sameBesidesKeyIdeas(a, b assistant.Entity) bool {
	return a.Title == b.Title && a.Summary == b.Summary && (a.Year == nil) == (b.Year == nil) &&
		(a.Year == nil || *a.Year == *b.Year) && slices.Equal(a.Authors, b.Authors) &&
		slices.Equal(a.WhenToUse, b.WhenToUse) && slices.Equal(a.Pitfalls, b.Pitfalls) && slices.Equal(a.Tags, b.Tags)
}

// evidenceIndex analyses each entity's passages once per check, however
// many claims are held against them.
type evidenceIndex map[assistant.Token]*evidence

func (ix evidenceIndex) evidence(e assistant.Entity) *evidence {
	if ev, ok := ix[e.Token()]; ok {
		return ev
	}
	ev := entityEvidence.of(e)
	ix[e.Token()] = ev
	return ev
}

// snippet cuts a passage to at most 280 bytes at a word boundary, never
// inside a UTF-8 character.
func snippet(s string) string { return textproc.Cut(s, 280) }

var quotedPhrase = regexp.MustCompile(`["“]([^"”]{4,})["”]`)

// titleBefore and titleAfter recognise a quoted phrase that the sentence
// presents as the name of a work: "in "The Goal"", "the book "X"",
// "titled "X"", "Kingman published "X"", ""X" by Goldratt", ""X" (1984)".
var (
	titleBefore = regexp.MustCompile(`(?i)\b(?:in|book|books|paper|papers|essay|article|articles|talk|lecture|report|memo|titled|entitled|published|wrote|authored|released|classic|bestseller)\s*["“]?$`)
	titleAfter  = regexp.MustCompile(`^\s*(?:,\s*)?(?:by\b|\(\s*(?:1[5-9]\d\d|20\d\d))`)
)

// contradiction checks the metadata a claim attributes to the works it
// cites: years, author names and quoted titles. It returns the entity, the
// field that says otherwise (title, year, authors[0]), the metadata line
// and a reason when the claim gets one of them wrong.
func contradiction(claim *claimFacts, sources []assistant.Entity, index evidenceIndex) (assistant.Entity, string, string, string) {
	e := sources[0]
	meta := index.evidence(e).texts[0]
	// A quoted phrase that the sentence presents as a work's title must be
	// the title of a cited work, unless the sources say it word for word.
	for _, q := range claim.quotes {
		if !q.titled {
			continue
		}
		if anyEntity(sources, func(x assistant.Entity) bool {
			return sameTitle(q.phrase, x.Title) || namesWork(index.evidence(x).texts, q.phrase)
		}) {
			continue
		}
		return e, "title", meta, fmt.Sprintf("the cited work is titled %q", e.Title)
	}
	// A year must be the cited work's year (or appear in its text).
	for _, y := range claim.years {
		if !anyEntity(sources, func(x assistant.Entity) bool { return yearOf(x) == y || strings.Contains(x.Summary, y) }) {
			if yearOf(e) == "" {
				return e, "title", meta, "the cited work's year is unknown, not " + y
			}
			return e, "year", meta, fmt.Sprintf("the cited work is from %s, not %s", yearOf(e), y)
		}
	}
	// Each person said to have written the work (a run of capitalised
	// words: "Investor Dave McClure") must be among its authors: one of the
	// run's words must be a word of an author's name. A group of names the
	// source itself spells out ("Bain & Company") is not a contradiction.
	for _, group := range claim.names {
		if len(strings.Fields(group.text)) > 1 && anyEntity(sources, func(x assistant.Entity) bool { return mentions(index.evidence(x).texts, group.text) }) {
			continue
		}
		for _, person := range group.people {
			if !anyEntity(sources, func(x assistant.Entity) bool {
				return slices.ContainsFunc(person, func(w string) bool { return hasAuthorWord(x, w) })
			}) {
				who := strings.Join(e.Authors, ", ")
				if who == "" {
					who = "unknown"
				}
				return e, "authors[0]", meta, fmt.Sprintf("the cited work is by %s, not %s", who, strings.Join(person, " "))
			}
		}
	}
	return assistant.Entity{}, "", "", ""
}

// namesWork reports whether an entity's own text (its passages) presents
// phrase as the name of a work ("his 1995 book The E-Myth Revisited", "his
// 2007 talk "Startup Metrics for Pirates"").
func namesWork(passages []string, phrase string) bool {
	p := strings.ToLower(strings.TrimSpace(phrase))
	for _, text := range passages {
		lower := strings.ToLower(text)
		for from := 0; ; {
			i := strings.Index(lower[from:], p)
			if i < 0 {
				break
			}
			i += from
			if titleBefore.MatchString(text[:i]) || titleAfter.MatchString(strings.TrimLeft(text[i+len(p):], "\"”")) {
				return true
			}
			from = i + len(p)
		}
	}
	return false
}

func anyEntity(list []assistant.Entity, f func(assistant.Entity) bool) bool {
	for _, e := range list {
		if f(e) {
			return true
		}
	}
	return false
}

func yearOf(e assistant.Entity) string {
	if e.Year == nil {
		return ""
	}
	return fmt.Sprint(*e.Year)
}

func sameTitle(a, b string) bool {
	norm := func(s string) string { return strings.Join(textproc.Words(s), " ") }
	na, nb := norm(a), norm(b)
	return na == nb || (len(na) > 12 && strings.Contains(nb, na))
}

// attribution finds the names a claim credits with a work: the capitalised
// words right before a verb of authorship ("Kingman published", "Goldratt
// and Cox wrote") or after "by".
var (
	beforeVerb = regexp.MustCompile(`((?:[A-Z][\p{L}'’.-]*\s+)*(?:(?:and|&)\s+)?(?:[A-Z][\p{L}'’.-]*\s+)*[A-Z][\p{L}'’.-]*)\s+(?:published|wrote|introduced|coined|proposed|argued|showed|described|developed|created)\b`)
	afterBy    = regexp.MustCompile(`\bby\s+((?:[A-Z][\p{L}'’.-]*)(?:\s+(?:and\s+)?[A-Z][\p{L}'’.-]*)*)`)
)

// claimFacts is what the checks read from a claim besides its words,
// worked out once per claim text and remembered with its analysis: claims
// repeat, since the builtin model answers with the knowledge base's own
// sentences.
type claimFacts struct {
	quotes    []quote     // the quoted phrases, in order
	rest      string      // the claim with its quoted phrases blanked out
	years     []string    // the years it states
	names     []nameGroup // the names it credits with a work
	opposable []string    // its stems that have an opposite
}

// quote is a phrase a claim puts in quotation marks.
type quote struct {
	phrase string   // as written, without the marks
	needle string   // its lowercase words, in the form of a unit's line
	words  []string // its lowercase words
	titled bool     // the sentence presents it as the name of a work
}

// readClaim works out the claimFacts of a claim; stems are the stems of
// all its words.
func readClaim(claim string, stems map[string]bool) *claimFacts {
	c := &claimFacts{rest: claim, years: yearPattern.FindAllString(claim, -1), names: attributedNames(claim), opposable: opposable(stems)}
	for _, m := range quotedPhrase.FindAllStringSubmatchIndex(claim, -1) {
		phrase := claim[m[2]:m[3]]
		words := textproc.Words(phrase)
		c.quotes = append(c.quotes, quote{
			phrase: phrase,
			needle: " " + strings.Join(words, " ") + " ",
			words:  words,
			titled: titleBefore.MatchString(claim[:m[0]]) || titleAfter.MatchString(claim[m[1]:]),
		})
	}
	if len(c.quotes) > 0 {
		c.rest = quotedPhrase.ReplaceAllString(claim, " ")
	}
	return c
}

// nameGroup is the text a claim credits with a work and the people in it.
type nameGroup struct {
	text   string
	people [][]string
}

func attributedNames(claim string) []nameGroup {
	var groups []nameGroup
	claim = quotedPhrase.ReplaceAllString(claim, "the work") // a title's words are not names
	for _, re := range []*regexp.Regexp{beforeVerb, afterBy} {
		for _, m := range re.FindAllStringSubmatch(claim, -1) {
			g := nameGroup{text: m[1]}
			var person []string
			for _, w := range strings.Fields(m[1]) {
				w = strings.Trim(w, "'’,")
				if w == "and" || w == "&" {
					if len(person) > 0 {
						g.people = append(g.people, person)
					}
					person = nil
					continue
				}
				if w == "The" || w == "In" || w == "A" || len(w) < 2 {
					continue
				}
				person = append(person, w)
			}
			if len(person) > 0 {
				g.people = append(g.people, person)
			}
			if len(g.people) > 0 {
				groups = append(groups, g)
			}
		}
	}
	return groups
}

// mentions reports whether an entity's text (its passages) contains s,
// case included.
func mentions(passages []string, s string) bool {
	for _, text := range passages {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}

// hasAuthorWord reports whether word is one of the words of the entity's
// author names ("Kingman" in "J. F. C. Kingman", "Jr." in "George Stalk
// Jr.").
func hasAuthorWord(e assistant.Entity, word string) bool {
	w := strings.ToLower(strings.Trim(word, "."))
	for _, a := range e.Authors {
		for _, part := range strings.Fields(a) {
			if strings.ToLower(strings.Trim(part, ".,")) == w {
				return true
			}
		}
	}
	return false
}
