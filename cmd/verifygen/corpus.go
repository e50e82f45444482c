package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/knowledge"
	"github.com/constraintlab/assistant/internal/textproc"
)

// corpusRow is one claim of the corpus dev set, in the in-domain format of
// `assistant eval verify` plus its kind.
type corpusRow struct {
	Text   string `json:"text"`
	Expect string `json:"expect"`
	// Kind is original (a key idea as written), reversed (its direction
	// turned by a rule) or wrong_number (one of its numbers changed).
	Kind string `json:"kind"`
	// Rule names the change of a reversed or wrong_number row ("more ->
	// less", "negation added", "5 -> 8").
	Rule string `json:"rule,omitempty"`
}

// corpus writes the corpus dev set: every key idea of every entity of the
// embedded corpus, cited to its own entity, expected verified; the same
// idea with its direction reversed by the first rule of reversals that
// applies (expected not verified; ideas no rule applies to are skipped and
// counted); and every key idea or summary sentence that states a number
// with that number changed to one the entity never states (expected not
// verified).
func corpus(args []string) error {
	fs := flag.NewFlagSet("corpus", flag.ContinueOnError)
	out := fs.String("out", "../../eval/claims_corpus.jsonl", "file to write")
	if err := fs.Parse(args); err != nil {
		return err
	}
	files, err := knowledge.Embedded()
	if err != nil {
		return err
	}
	var rows []corpusRow
	skipped := 0
	for _, f := range files {
		e := f.Entity
		cite := func(s string) string {
			return strings.TrimRight(strings.TrimSpace(s), ".") + " [" + e.Token().String() + "]."
		}
		for _, idea := range e.KeyIdeas {
			rows = append(rows, corpusRow{Text: cite(idea), Expect: "verified", Kind: "original"})
			if changed, rule := reverse(idea); rule != "" {
				rows = append(rows, corpusRow{Text: cite(changed), Expect: "not_verified", Kind: "reversed", Rule: rule})
			} else {
				skipped++
			}
		}
		for _, s := range append(slicesOf(e.KeyIdeas), textproc.Sentences(e.Summary)...) {
			if changed, rule := wrongNumber(s, entityText(e)); rule != "" {
				rows = append(rows, corpusRow{Text: cite(changed), Expect: "not_verified", Kind: "wrong_number", Rule: rule})
			}
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	counts := map[string]int{}
	for _, r := range rows {
		counts[r.Kind]++
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "%d originals, %d reversed (%d ideas no rule reverses, skipped), %d wrong numbers\n",
		counts["original"], counts["reversed"], skipped, counts["wrong_number"])
	return os.WriteFile(*out, buf.Bytes(), 0o644)
}

func slicesOf(s []string) []string { return append([]string(nil), s...) }

// reversals turn the direction of a sentence: each pair is tried both ways,
// in order; the first word that occurs exactly once in the sentence (as a
// whole word, in lowercase) is swapped. Negation comes last: "is" becomes
// "is not", "does not" becomes "does".
var reversals = [][2]string{
	{"more", "less"}, {"fewer", "more"}, {"higher", "lower"}, {"raises", "lowers"}, {"raise", "lower"},
	{"increases", "decreases"}, {"increase", "decrease"}, {"increased", "decreased"}, {"increasing", "decreasing"},
	{"reduces", "increases"}, {"reduce", "increase"}, {"reduced", "increased"}, {"cuts", "raises"},
	{"faster", "slower"}, {"before", "after"}, {"rises", "falls"}, {"rise", "fall"}, {"larger", "smaller"},
	{"bigger", "smaller"}, {"longer", "shorter"}, {"earlier", "later"}, {"better", "worse"}, {"grows", "shrinks"},
	{"above", "below"}, {"always", "never"}, {"most", "least"}, {"gains", "losses"}, {"early", "late"},
	{"lowers", "raises"}, {"worse", "better"},
}

var negations = [][2]string{
	{"does not", "does"}, {"do not", "do"}, {"is not", "is"}, {"are not", "are"}, {"cannot", "can"},
	{"is", "is not"}, {"are", "are not"}, {"can", "cannot"}, {"should", "should not"}, {"will", "will not"},
	{"must", "need not"}, {"was", "was not"}, {"were", "were not"}, {"has", "has not"}, {"have", "have not"},
}

func reverse(s string) (string, string) {
	for _, pair := range reversals {
		for _, p := range [][2]string{pair, {pair[1], pair[0]}} {
			if changed, ok := swapOnce(s, p[0], p[1]); ok {
				return changed, p[0] + " -> " + p[1]
			}
		}
	}
	for _, p := range negations {
		// A verb is negated only where a word follows it ("is not
		// negotiable", never "what the task is not").
		if !regexp.MustCompile(`\b` + p[0] + ` [a-z]`).MatchString(s) {
			continue
		}
		if changed, ok := swapOnce(s, p[0], p[1]); ok {
			if strings.Contains(p[1], "not") {
				return changed, "negation added (" + p[0] + " -> " + p[1] + ")"
			}
			return changed, "negation dropped (" + p[0] + " -> " + p[1] + ")"
		}
	}
	return "", ""
}

// swapOnce replaces the whole words from with to when from occurs exactly
// once in s (in lowercase, not part of a hyphenated word, not inside a
// quotation) and to does not occur at all.
func swapOnce(s, from, to string) (string, bool) {
	re := regexp.MustCompile(`(?:^|[^-\w])` + regexp.QuoteMeta(from) + `(?:$|[^-\w])`)
	all := re.FindAllStringIndex(s, -1)
	if len(all) != 1 || regexp.MustCompile(`\b`+regexp.QuoteMeta(to)+`\b`).MatchString(s) {
		return "", false
	}
	i := all[0][0] + strings.Index(s[all[0][0]:all[0][1]], from)
	for _, q := range quotation.FindAllStringIndex(s, -1) {
		if i >= q[0] && i < q[1] {
			return "", false
		}
	}
	return s[:i] + to + s[i+len(from):], true
}

var quotation = regexp.MustCompile(`"[^"]*"|“[^”]*”`)

// anyNumber finds numbers as the verifier reads them, inside words too
// ("4" in "4q").
var anyNumber = regexp.MustCompile(`\d+(?:\.\d+)?`)

var numberInText = regexp.MustCompile(`\b\d+(?:\.\d+)?\b`)

// wrongNumber changes the first number of s to one the entity's text never
// states: a year moves by three to thirteen years, another number grows by
// a third plus three (rounded), and so on until it is new.
func wrongNumber(s, entity string) (string, string) {
	m := numberInText.FindStringIndex(s)
	if m == nil {
		return "", ""
	}
	old := s[m[0]:m[1]]
	v, err := strconv.ParseFloat(old, 64)
	if err != nil {
		return "", ""
	}
	isYear := v >= 1500 && v <= 2099 && !strings.Contains(old, ".")
	for step := 1; step < 50; step++ {
		var n string
		if isYear {
			n = strconv.Itoa(int(v) + 2 + step)
		} else if strings.Contains(old, ".") {
			n = strconv.FormatFloat(v+float64(step), 'f', len(old)-strings.Index(old, ".")-1, 64)
		} else {
			n = strconv.Itoa(int(v*4/3) + 2 + step)
		}
		if !slices.Contains(anyNumber.FindAllString(entity, -1), n) {
			return s[:m[0]] + n + s[m[1]:], old + " -> " + n
		}
	}
	return "", ""
}

// entityText is all the text of an entity, its metadata included.
func entityText(e assistant.Entity) string {
	parts := []string{e.Title, e.Summary, strings.Join(e.Authors, " "), strings.Join(e.KeyIdeas, " "),
		strings.Join(e.WhenToUse, " "), strings.Join(e.Pitfalls, " "), strings.Join(e.Tags, " ")}
	if e.Year != nil {
		parts = append(parts, strconv.Itoa(*e.Year))
	}
	return strings.Join(parts, "\n")
}
