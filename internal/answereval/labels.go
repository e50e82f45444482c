package answereval

import (
	"io"
	"slices"
	"strings"

	"github.com/constraintlab/assistant/internal/assistant"
)

// A Label is a reader's choice, made without seeing any answer, of the
// knowledge entries a good answer to one question would draw on: up to
// three tokens, best first, and whether the best of them is written for
// the question's situation (FitDirect), helps with part of it only
// (FitPartial), or whether nothing in the knowledge base helps (FitNone,
// no tokens).
type Label struct {
	ID     string
	Fit    string
	Tokens []string
	Reason string
}

// The fits a label may give.
const (
	FitDirect  = "direct"
	FitPartial = "partial"
	FitNone    = "none"
)

// LabelsHeader is the header line of a labels file.
const LabelsHeader = "id\tfit\ttokens\twhy"

// ReadLabels reads a labels file: a header line (LabelsHeader), then one
// line per question of id<TAB>fit<TAB>tokens<TAB>why, fit one of direct,
// partial or none, tokens one to three citation tokens (type:slug)
// separated by spaces, none with a fit of none. Blank lines and lines
// starting with # are skipped. A malformed line or an id labelled twice is
// an error that names its line.
func ReadLabels(r io.Reader) ([]Label, error) {
	var out []Label
	seen := map[string]int{}
	header := false
	err := eachLine(r, func(line int, text string) error {
		if !header {
			if text != LabelsHeader {
				return assistant.Errorf(assistant.EInvalid, "line %d: want the header %q", line, LabelsHeader)
			}
			header = true
			return nil
		}
		l, err := parseLabel(text)
		if err != nil {
			return assistant.Errorf(assistant.EInvalid, "line %d: %s", line, assistant.ErrorMessage(err))
		}
		if first, ok := seen[l.ID]; ok {
			return assistant.Errorf(assistant.EInvalid, "line %d: %q is labelled already on line %d", line, l.ID, first)
		}
		seen[l.ID] = line
		out = append(out, l)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, assistant.Errorf(assistant.EInvalid, "no labels")
	}
	return out, nil
}

// parseLabel reads one line of a labels file.
func parseLabel(text string) (Label, error) {
	fields := strings.Split(text, "\t")
	if len(fields) < 3 || len(fields) > 4 {
		return Label{}, assistant.Errorf(assistant.EInvalid, "want id<TAB>fit<TAB>tokens<TAB>why")
	}
	l := Label{ID: strings.TrimSpace(fields[0]), Fit: strings.TrimSpace(fields[1])}
	if tokens := strings.Fields(fields[2]); len(tokens) > 0 {
		l.Tokens = tokens
	}
	if len(fields) == 4 {
		l.Reason = strings.TrimSpace(fields[3])
	}
	switch {
	case l.ID == "":
		return l, assistant.Errorf(assistant.EInvalid, "the id is empty")
	case l.Fit != FitDirect && l.Fit != FitPartial && l.Fit != FitNone:
		return l, assistant.Errorf(assistant.EInvalid, "the fit is %q; want direct, partial or none", l.Fit)
	case l.Fit == FitNone && len(l.Tokens) > 0:
		return l, assistant.Errorf(assistant.EInvalid, "a fit of none names no token")
	case l.Fit != FitNone && (len(l.Tokens) == 0 || len(l.Tokens) > 3):
		return l, assistant.Errorf(assistant.EInvalid, "want one to three tokens")
	}
	for _, t := range l.Tokens {
		if _, err := assistant.ParseToken(t); err != nil {
			return l, assistant.Errorf(assistant.EInvalid, "%q is not a citation token (type:slug)", t)
		}
	}
	return l, nil
}

// Labelled are the figures of a set's answers against the labels: how
// often an answer draws on the knowledge a reader chose for its question.
// They need no rater, so a change to retrieval or to what the builtin
// quotes can be measured on every run; docs/evaluation.md gives how they
// go with usefulness.
type Labelled struct {
	// Labelled counts the answers whose question has a label naming at
	// least one entry; NothingFits those labelled none, which no ratio
	// counts; Unlabelled lists the in-scope answers with no label.
	Labelled    int      `json:"labelled"`
	NothingFits int      `json:"nothing_fits"`
	Unlabelled  []string `json:"unlabelled"`
	// CitesFirst is the labelled answers that cite the reader's first
	// choice, CitesAny those that cite any labelled entry.
	CitesFirst Ratio `json:"cites_first"`
	CitesAny   Ratio `json:"cites_any"`
	// CitedLabelled is, over the labelled answers, the entries they cite
	// (each once per answer) that the label names, of all they cite.
	CitedLabelled Ratio `json:"cited_labelled"`
	// CitesFirstByLevel is CitesFirst over the answers at each confidence
	// level.
	CitesFirstByLevel map[string]Ratio `json:"cites_first_by_level"`
}

// LabelFigures takes the figures of a set's answers against its labels. A label
// of an id that is not among the answers is an error: the file belongs to
// another set. Only in-scope answers are measured.
func LabelFigures(answers []Answer, labels []Label) (Labelled, error) {
	byID := make(map[string]Label, len(labels))
	known := answerIDs(answers)
	for _, l := range labels {
		if !known[l.ID] {
			return Labelled{}, assistant.Errorf(assistant.EInvalid, "%q is labelled but no answer has that id", l.ID)
		}
		byID[l.ID] = l
	}
	out := Labelled{Unlabelled: []string{}, CitesFirstByLevel: map[string]Ratio{}}
	first, anyOf, citedLabelled, cited := 0, 0, 0, 0
	byLevel := map[string][2]int{}
	for _, a := range answers {
		if !InScope(a.Kind) {
			continue
		}
		l, ok := byID[a.ID]
		switch {
		case !ok:
			out.Unlabelled = append(out.Unlabelled, a.ID)
			continue
		case l.Fit == FitNone:
			out.NothingFits++
			continue
		}
		out.Labelled++
		tokens := citedTokens(a.Text)
		c := byLevel[a.Level]
		c[1]++
		if slices.Contains(tokens, l.Tokens[0]) {
			first++
			c[0]++
		}
		byLevel[a.Level] = c
		hit := false
		for _, t := range tokens {
			if slices.Contains(l.Tokens, t) {
				citedLabelled++
				hit = true
			}
		}
		if hit {
			anyOf++
		}
		cited += len(tokens)
	}
	out.CitesFirst, out.CitesAny, out.CitedLabelled = ratio(first, out.Labelled), ratio(anyOf, out.Labelled), ratio(citedLabelled, cited)
	for level, c := range byLevel {
		out.CitesFirstByLevel[level] = ratio(c[0], c[1])
	}
	return out, nil
}
