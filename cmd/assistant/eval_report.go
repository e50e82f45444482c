package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/constraintlab/assistant/internal/answereval"
)

// printBlindReport prints the figures of a blind set as text; with
// failures, also what failed.
func printBlindReport(w io.Writer, rep blindReport, failures bool) {
	f := rep.Figures
	p := func(label, format string, args ...any) {
		fmt.Fprintf(w, "%-26s %s\n", label, fmt.Sprintf(format, args...))
	}
	p("set", "%s", rep.Set)
	p("answers", "%d (failed turns: %d)", f.N, len(rep.Failed))
	p("out of scope declined", "%s", ratioText(f.OutDeclined))
	p("in scope wrongly declined", "%s", ratioText(f.InWronglyDeclined))
	p("in scope at medium/high", "%s", ratioText(f.InMediumHigh))
	var kinds []string
	for _, k := range answereval.Kinds {
		if c, ok := f.ByKind[k]; ok {
			kinds = append(kinds, fmt.Sprintf("%s %d (declined %d, medium/high %d)", k, c.N, c.Declined, c.MediumHigh))
		}
	}
	p("by kind", "%s", strings.Join(kinds, "; "))
	var levels []string
	for _, l := range answereval.Levels {
		levels = append(levels, fmt.Sprintf("%s %d", l, f.Confidence.Levels[l]))
	}
	p("confidence", "%s; mean score %.3f", strings.Join(levels, ", "), f.Confidence.MeanScore)
	s := f.Confidence.Scores
	p("confidence scores", "[0,.2) %d, [.2,.4) %d, [.4,.6) %d, [.6,.8) %d, [.8,1] %d", s[0], s[1], s[2], s[3], s[4])
	p("repeated sentences", "%s; %s", ratioText(f.Repeated.Ratio), modeRatios(f.Repeated.ByMode))
	p("  declines left out", "%s", ratioText(f.RepeatedAnswered.Ratio))
	p("hover-checkable citations", "%s", ratioText(f.Hover.Ratio))
	p("broken output", "%s", ratioText(f.Broken))
	if r := rep.Rated; r != nil {
		fmt.Fprintln(w)
		p("rated", "%d (unrated: %d)", r.Rated, len(r.Unrated))
		var modes []string
		for _, m := range sortedKeys(r.MeanByMode) {
			modes = append(modes, fmt.Sprintf("%s %.2f", m, r.MeanByMode[m]))
		}
		p("usefulness, in scope", "%s; %s", optional(r.MeanInScope, "%.2f"), strings.Join(modes, ", "))
		var kinds []string
		for _, k := range answereval.Kinds {
			if m, ok := r.MeanByKind[k]; ok {
				kinds = append(kinds, fmt.Sprintf("%s %.2f", k, m))
			}
		}
		p("usefulness by kind", "%s", strings.Join(kinds, ", "))
		d := r.Distribution
		p("scores", "1: %d, 2: %d, 3: %d, 4: %d, 5: %d", d["1"], d["2"], d["3"], d["4"], d["5"])
		p("spearman(score, useful)", "%s (in scope)", optional(r.Spearman, "%.3f"))
		p("precision of high", "%s rated 4 or 5", ratioText(r.HighPrecision))
		p("medium/high rated 1-2", "%d (rated 1: %d)", r.MediumHighRated1to2, r.MediumHighRated1)
		p("usefulness at medium/high", "%s", optional(r.MeanMediumHigh, "%.2f"))
		if len(r.Unrated) > 0 {
			p("unrated", "%s", strings.Join(r.Unrated, ", "))
		}
	}
	if l := rep.Labels; l != nil {
		fmt.Fprintln(w)
		p("labelled", "%d (nothing fits: %d; unlabelled: %d)", l.Labelled, l.NothingFits, len(l.Unlabelled))
		p("cites the first choice", "%s", ratioText(l.CitesFirst))
		p("cites a labelled entry", "%s", ratioText(l.CitesAny))
		p("cited entries labelled", "%s", ratioText(l.CitedLabelled))
		var levels []string
		for _, lv := range answereval.Levels {
			if r, ok := l.CitesFirstByLevel[lv]; ok {
				levels = append(levels, fmt.Sprintf("%s %s", lv, ratioText(r)))
			}
		}
		p("first choice by level", "%s", strings.Join(levels, "; "))
	}
	if !failures {
		return
	}
	if len(rep.Failed) > 0 {
		fmt.Fprintln(w, "\nfailed turns:")
		for _, t := range rep.Failed {
			fmt.Fprintf(w, "  %s: %s\n", t.ID, t.Error)
		}
	}
	if len(f.BrokenAnswers) > 0 {
		fmt.Fprintln(w, "\nbroken output:")
		for _, b := range f.BrokenAnswers {
			fmt.Fprintf(w, "  %s: %s\n", b.Answer, strings.Join(b.Reasons, "; "))
		}
	}
	if len(f.Hover.Unchecked) > 0 {
		fmt.Fprintln(w, "\ncited sentences not checkable on their cards (best share of content words on a card):")
		for _, u := range f.Hover.Unchecked {
			fmt.Fprintf(w, "  %s (%.2f): %s\n", u.Answer, u.Best, u.Sentence)
		}
	}
	if len(f.Repeated.Top) > 0 {
		fmt.Fprintln(w, "\nmost repeated sentences (answers holding them):")
		for _, r := range f.Repeated.Top {
			fmt.Fprintf(w, "  %d (%s): %s\n", len(r.Answers), strings.Join(r.Answers, ", "), r.Sentence)
		}
	}
}

func ratioText(r answereval.Ratio) string {
	return fmt.Sprintf("%d of %d (%.1f%%)", r.N, r.Of, 100*r.Share)
}

func modeRatios(m map[string]answereval.Ratio) string {
	var out []string
	for _, k := range sortedKeys(m) {
		out = append(out, fmt.Sprintf("%s %.1f%%", k, 100*m[k].Share))
	}
	return strings.Join(out, ", ")
}

func optional(f *float64, format string) string {
	if f == nil {
		return "n/a"
	}
	return fmt.Sprintf(format, *f)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// writePacketFile writes the rater's packet of the answers to path.
func writePacketFile(path, set string, records []answerRecord, cards cardSet) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	writePacket(w, set, records, cards)
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

// packetRubric is the usefulness rubric of docs/evaluation.md, as the
// packet shows it to the rater.
const packetRubric = `| score | meaning |
|---|---|
| 5 | what a sharp consultant would say for this situation: specific to its facts, correct, with a first step |
| 4 | good and specific; a reader would act on it |
| 3 | relevant but generic; a few useful specifics |
| 2 | mostly generic, or partly off target |
| 1 | irrelevant, wrong, broken (empty sections, ungrammatical splices), or an out-of-scope question not declined |

A correct decline of an out-of-scope question scores 4 (5 if it also points somewhere useful and, for
anything about a person's health, says plainly to get medical help). A wrong decline of an in-scope
question scores 1.
`

// writePacket writes the rater's packet: for each row, the question as
// asked (mode, vertical, the earlier turn of a followup), the writer's
// note, the answer's text and the cards of what it cites as /resolve
// serves them. It leaves out what the rater must not see: the confidence,
// and the kind of row the engineer filed it under.
func writePacket(w io.Writer, set string, records []answerRecord, cards cardSet) {
	fmt.Fprintf(w, "# Rater's packet: %s\n\n", set)
	fmt.Fprintf(w, "%d answers. Read each question, its note, the answer and the cards it cites; score its usefulness from 1 to 5 "+
		"and write one line per answer in a ratings file: `id<TAB>score<TAB>reason`. A template is at the end.\n\n", len(records))
	fmt.Fprint(w, packetRubric)
	for _, rec := range records {
		fmt.Fprintf(w, "\n---\n\n## %s\n\n", rec.ID)
		asked := "mode " + rec.Mode
		if rec.Vertical != "" {
			asked += ", vertical " + rec.Vertical
		}
		fmt.Fprintf(w, "*Asked in %s.*\n\n", asked)
		if len(rec.Request.History) > 0 {
			fmt.Fprintf(w, "**Earlier in the conversation** (row %s):\n\n", rec.Follows)
			for _, h := range rec.Request.History {
				fmt.Fprintf(w, "%s:\n\n%s\n", h.Role, quote(h.Content))
			}
		}
		fmt.Fprintf(w, "**Question**\n\n%s\n", quote(rec.Request.Message))
		if rec.Note != "" {
			fmt.Fprintf(w, "**What a good answer contains** (the writer's note)\n\n%s\n", quote(rec.Note))
		}
		if rec.Response == nil {
			fmt.Fprintf(w, "**Answer**: none, the turn failed (%s).\n", rec.Error)
			continue
		}
		fmt.Fprintf(w, "**Answer**\n\n%s\n", quote(rec.Response.Response))
		var cited []string
		for _, m := range citedToken.FindAllStringSubmatch(rec.Response.Response, -1) {
			if tok := m[1] + ":" + m[2]; !slices.Contains(cited, tok) {
				cited = append(cited, tok)
			}
		}
		if len(cited) == 0 {
			continue
		}
		fmt.Fprintf(w, "**Cited cards**\n\n")
		for _, tok := range cited {
			writeCard(w, tok, cards.json[tok])
		}
	}
	fmt.Fprintf(w, "\n---\n\n## Ratings template\n\n```\nid\tscore\treason\n")
	for _, rec := range records {
		fmt.Fprintf(w, "%s\t\t\n", rec.ID)
	}
	fmt.Fprintf(w, "```\n")
}

// quote returns text as a Markdown block quote, followed by a blank line.
func quote(text string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight("> "+l, " ")
	}
	return strings.Join(lines, "\n") + "\n"
}

// cardHeadFields are the card fields writeCard shows in its own layout;
// cardHiddenFields identify rather than say anything. Every other field of
// the card is shown after them, by name.
var (
	cardHeadFields   = []string{"title", "authors", "year", "url", "summary", "key_ideas"}
	cardHiddenFields = []string{"type", "slug", "token", "related", "archetypes"}
)

// writeCard writes one card as /resolve served it (card is its JSON; nil
// when the token does not resolve).
func writeCard(w io.Writer, token string, card json.RawMessage) {
	var c map[string]any
	if card == nil || json.Unmarshal(card, &c) != nil {
		fmt.Fprintf(w, "### [%s]\n\nThis token does not resolve: a reader's hover shows nothing.\n\n", token)
		return
	}
	fmt.Fprintf(w, "### [%s] %s\n\n", token, plain(c["title"]))
	var byline []string
	if a := strings.Join(stringsOf(c["authors"]), ", "); a != "" {
		byline = append(byline, a)
	}
	if y := plain(c["year"]); y != "" {
		byline = append(byline, y)
	}
	if u := plain(c["url"]); u != "" {
		byline = append(byline, u)
	}
	if len(byline) > 0 {
		fmt.Fprintf(w, "%s\n\n", strings.Join(byline, " · "))
	}
	if s := plain(c["summary"]); s != "" {
		fmt.Fprintf(w, "%s\n\n", s)
	}
	if ideas := stringsOf(c["key_ideas"]); len(ideas) > 0 {
		fmt.Fprintf(w, "Key ideas:\n\n")
		for _, idea := range ideas {
			fmt.Fprintf(w, "- %s\n", idea)
		}
		fmt.Fprintln(w)
	}
	for _, k := range sortedKeys(c) {
		if slices.Contains(cardHeadFields, k) || slices.Contains(cardHiddenFields, k) {
			continue
		}
		writeField(w, k, c[k])
	}
}

// writeField writes a card field writeCard has no layout for: a list of
// long items as items, anything else on one line.
func writeField(w io.Writer, name string, v any) {
	label := strings.ReplaceAll(name, "_", " ")
	list, ok := v.([]any)
	if !ok {
		if s := plain(v); s != "" {
			fmt.Fprintf(w, "%s: %s\n\n", label, s)
		}
		return
	}
	if len(list) == 0 {
		return
	}
	if words := stringsOf(v); len(words) == len(list) && !slices.ContainsFunc(words, func(s string) bool { return len(s) > 40 }) {
		fmt.Fprintf(w, "%s: %s\n\n", label, strings.Join(words, ", ")) // short words such as tags, on one line
		return
	}
	fmt.Fprintf(w, "%s:\n\n", label)
	for _, item := range list {
		fmt.Fprintf(w, "- %s\n", plain(item))
	}
	fmt.Fprintln(w)
}

// plain renders a decoded JSON value as one line: a string as is, an
// object as its fields (name: value; ...), anything else as JSON.
func plain(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case map[string]any:
		var parts []string
		for _, k := range sortedKeys(v) {
			if s := plain(v[k]); s != "" {
				parts = append(parts, k+": "+s)
			}
		}
		return strings.Join(parts, "; ")
	case []any:
		var parts []string
		for _, x := range v {
			parts = append(parts, plain(x))
		}
		return strings.Join(parts, ", ")
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSpace(b.String())
}

// stringsOf returns the strings of a decoded JSON list.
func stringsOf(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, x := range list {
		if s, ok := x.(string); ok && s != "" {
			out = append(out, s)
		}
	}
	return out
}
