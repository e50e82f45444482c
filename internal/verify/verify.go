// Package verify checks an answer against the knowledge it cites and
// returns the confidence verdict of D7: the answer is split into claims,
// each claim is checked against the entities it cites (every field,
// metadata included) or, when it cites nothing, against the knowledge the
// turn retrieved, and judged verified, unsupported or contradicted.
//
// The checks, in order:
//  1. metadata: a year, an author's name or a quoted title that the claim
//     attributes to a cited work must match that work; a mismatch is
//     contradicted (a wrong year or author is never verified);
//  2. support: the claim's content words (stemmed) must be covered by one
//     passage of the evidence (a sentence or list item, or two adjacent
//     ones) at least Threshold; otherwise the claim is unsupported.
package verify

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/textproc"
)

// Claim statuses (D7).
const (
	Verified     = "verified"
	Unsupported  = "unsupported"
	Contradicted = "contradicted"
)

// DefaultThreshold is the coverage a passage must reach for a claim to be
// verified; tuned on the development sets (docs/api.md gives the figures).
const DefaultThreshold = 0.5

// Verdict is the check of one claim (D7).
type Verdict struct {
	Claim     string    `json:"claim"`
	Status    string    `json:"status" enum:"verified,unsupported,contradicted"`
	Citations []string  `json:"citations" doc:"Tokens the claim cites, type:slug."`
	Evidence  *Evidence `json:"evidence" doc:"The passage that decided the verdict, or null."`
	Score     float64   `json:"score" doc:"How well the best passage covers the claim, 0 to 1 (0 when contradicted)."`
	// Reason says in a few words why the claim got its status.
	Reason string `json:"reason"`
}

// Evidence is the passage of an entity that supports or contradicts a
// claim.
type Evidence struct {
	Type    string `json:"type"`
	Slug    string `json:"slug"`
	Snippet string `json:"snippet"`
}

// Confidence is the verdict on a whole answer (D7).
type Confidence struct {
	Score          float64   `json:"score" minimum:"0" maximum:"1" doc:"verifiedClaims / totalClaims, 0 when there is no claim."`
	Level          string    `json:"level" enum:"high,medium,low,none" doc:"high >= 0.8, medium >= 0.5, low > 0, none otherwise."`
	TotalClaims    int       `json:"totalClaims"`
	VerifiedClaims int       `json:"verifiedClaims"`
	Verdicts       []Verdict `json:"verdicts"`
}

// Level maps a score to the D7 level.
func Level(score float64, claims int) string {
	switch {
	case claims == 0 || score <= 0:
		return "none"
	case score >= 0.8:
		return "high"
	case score >= 0.5:
		return "medium"
	}
	return "low"
}

// Checker verifies claims.
type Checker struct {
	// Threshold is the passage coverage needed for verified.
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

var tokenPattern = regexp.MustCompile(`\[([a-z]+):([a-z0-9_-]+)\]`)

// SplitClaims splits an answer into claims: every assertive sentence or
// list item, cited or not (D29): an uncited sentence of advice is a claim
// too, checked against the knowledge the turn retrieved. Headings,
// questions, lead-ins that end with a colon and fragments of fewer than
// four words are not claims.
func SplitClaims(text string) []Claim {
	var claims []Claim
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimSpace(strings.TrimLeft(line, "-*0123456789.) "))
		line = strings.ReplaceAll(line, "**", "")
		for _, s := range textproc.Sentences(line) {
			c := Claim{Text: s}
			for _, m := range tokenPattern.FindAllStringSubmatch(s, -1) {
				t := assistant.Token{Type: assistant.EntityType(m[1]), Slug: m[2]}
				if !slices.Contains(c.Citations, t) {
					c.Citations = append(c.Citations, t)
				}
			}
			bare := strings.TrimSpace(tokenPattern.ReplaceAllString(s, ""))
			end := strings.TrimRight(bare, "\"'”’)")
			if len(textproc.Words(bare)) < 4 || strings.HasSuffix(end, "?") || strings.HasSuffix(end, ":") {
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
	conf := Confidence{Verdicts: []Verdict{}}
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
	v := Verdict{Claim: tokenPattern.ReplaceAllString(cl.Text, ""), Citations: []string{}}
	v.Claim = strings.Join(strings.Fields(v.Claim), " ")
	v.Claim = strings.ReplaceAll(v.Claim, " .", ".")
	for _, t := range cl.Citations {
		v.Citations = append(v.Citations, t.String())
	}
	if len(cl.Invalid) > 0 {
		// The invented token itself is not repeated: it must not reach the
		// client in any form (D6).
		v.Status, v.Reason = Unsupported, "cites a source that is not in the knowledge base"
		return v
	}
	var sources []assistant.Entity
	for _, t := range cl.Citations {
		sources = append(sources, cited[t])
	}
	if len(sources) == 0 {
		sources = hits
	}
	if len(sources) == 0 {
		v.Status, v.Reason = Unsupported, "no evidence to check it against"
		return v
	}
	// Metadata first: a wrong year, author or title is a contradiction.
	if len(cl.Citations) > 0 {
		if e, snippet, reason := contradiction(v.Claim, sources); reason != "" {
			v.Status, v.Reason = Contradicted, reason
			v.Evidence = &Evidence{Type: string(e.Type), Slug: e.Slug, Snippet: snippet}
			return v
		}
	}
	// Each source is scored on its own: a claim must be supported by one
	// entity, not stitched together from several.
	score := -1.0
	for _, e := range sources {
		ev := index.evidence(e)
		f := ev.features(v.Claim)
		p := probability(f.x)
		if p <= score {
			continue
		}
		score, v.Evidence = p, nil
		if len(f.best) > 0 && f.x[fBest] > 0 {
			var parts []string
			for _, i := range f.best {
				parts = append(parts, ev.texts[i])
			}
			v.Evidence = &Evidence{Type: string(e.Type), Slug: e.Slug, Snippet: snippet(strings.Join(parts, " "))}
		}
	}
	v.Score = math.Round(score*1000) / 1000
	if score >= c.Threshold {
		v.Status, v.Reason = Verified, "the cited knowledge states it"
		if len(cl.Citations) == 0 {
			v.Reason = "the retrieved knowledge states it"
		}
	} else {
		v.Status, v.Reason = Unsupported, fmt.Sprintf("no passage covers it (best %.2f)", score)
	}
	return v
}

// passages are the units of evidence of an entity: its metadata line, the
// sentences of its summary, each list item, and adjacent pairs of summary
// sentences.
func passages(e assistant.Entity) []string {
	meta := e.Title
	if len(e.Authors) > 0 {
		meta += " by " + strings.Join(e.Authors, ", ")
	}
	if e.Year != nil {
		meta += fmt.Sprintf(", published in %d", *e.Year)
	}
	out := []string{meta + "."}
	sentences := textproc.Sentences(e.Summary)
	out = append(out, sentences...)
	for _, list := range [][]string{e.KeyIdeas, e.WhenToUse, e.Pitfalls} {
		out = append(out, list...)
	}
	if len(e.Tags) > 0 {
		out = append(out, e.Title+": "+strings.Join(e.Tags, ", "))
	}
	return out
}

// evidenceIndex analyses each entity's passages once per check, however
// many claims are held against them.
type evidenceIndex map[assistant.Token]*evidence

func (ix evidenceIndex) evidence(e assistant.Entity) *evidence {
	if ev, ok := ix[e.Token()]; ok {
		return ev
	}
	ev := newEvidence()
	for _, text := range passages(e) {
		ev.add(text, 0)
	}
	ix[e.Token()] = ev
	return ev
}

func snippet(s string) string {
	const max = 280
	if len(s) <= max {
		return s
	}
	cut := strings.LastIndex(s[:max], " ")
	if cut < max/2 {
		cut = max
	}
	return s[:cut] + "…"
}

var quotedTitle = regexp.MustCompile(`["“]([^"”]{4,})["”]`)

// contradiction checks the metadata a claim attributes to the works it
// cites: years, author names and quoted titles. It returns the entity, a
// snippet and a reason when the claim gets one of them wrong.
func contradiction(claim string, sources []assistant.Entity) (assistant.Entity, string, string) {
	e := sources[0]
	meta := passages(e)[0]
	// A quoted title must be the title of a cited work.
	for _, m := range quotedTitle.FindAllStringSubmatch(claim, -1) {
		if !anyEntity(sources, func(x assistant.Entity) bool { return sameTitle(m[1], x.Title) }) {
			return e, meta, fmt.Sprintf("the cited work is titled %q", e.Title)
		}
	}
	// A year must be the cited work's year (or appear in its text).
	for _, y := range yearPattern.FindAllString(claim, -1) {
		if !anyEntity(sources, func(x assistant.Entity) bool { return yearOf(x) == y || strings.Contains(x.Summary, y) }) {
			if yearOf(e) == "" {
				return e, meta, "the cited work's year is unknown, not " + y
			}
			return e, meta, fmt.Sprintf("the cited work is from %s, not %s", yearOf(e), y)
		}
	}
	// Names said to have written the work must be among its authors.
	for _, name := range attributedNames(claim) {
		if !anyEntity(sources, func(x assistant.Entity) bool { return hasAuthorWord(x, name) }) {
			who := strings.Join(e.Authors, ", ")
			if who == "" {
				who = "unknown"
			}
			return e, meta, fmt.Sprintf("the cited work is by %s, not %s", who, name)
		}
	}
	return assistant.Entity{}, "", ""
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

func attributedNames(claim string) []string {
	var names []string
	for _, re := range []*regexp.Regexp{beforeVerb, afterBy} {
		for _, m := range re.FindAllStringSubmatch(claim, -1) {
			for _, w := range strings.Fields(m[1]) {
				w = strings.Trim(w, "'’,")
				if w == "and" || w == "&" || w == "The" || w == "In" || w == "A" || len(w) < 2 {
					continue
				}
				names = append(names, w)
			}
		}
	}
	sort.Strings(names)
	return names
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
