package chat

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/constraintlab/assistant/internal/assistant"
)

// ScopeCase is one row of a scope evaluation file: whether the question is
// in scope (the assistant should answer it) or out (it should decline),
// the mode to ask it in, and the question.
type ScopeCase struct {
	Expect   string // "in" or "out"
	Mode     string
	Question string
}

// ReadScopeCases reads a TSV of expect<TAB>mode<TAB>question (no header;
// blank lines and lines starting with # are skipped).
func ReadScopeCases(r io.Reader) ([]ScopeCase, error) {
	var out []ScopeCase
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		parts := strings.SplitN(text, "\t", 3)
		if len(parts) != 3 || (parts[0] != "in" && parts[0] != "out") || !slices.Contains(Modes, parts[1]) || strings.TrimSpace(parts[2]) == "" {
			return nil, assistant.Errorf(assistant.EInvalid, "line %d: want in|out<TAB>mode<TAB>question with a mode of %s", line, strings.Join(Modes, ", "))
		}
		out = append(out, ScopeCase{Expect: parts[0], Mode: parts[1], Question: strings.TrimSpace(parts[2])})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, assistant.Errorf(assistant.EInvalid, "no rows")
	}
	return out, nil
}

// ScopeReport is what `assistant eval chat` prints: how many
// out-of-scope questions were declined and in-scope ones answered.
type ScopeReport struct {
	N           int           `json:"n"`
	Out         int           `json:"out"`
	In          int           `json:"in"`
	DeclinedOut int           `json:"declined_out"`
	AnsweredIn  int           `json:"answered_in"`
	Failures    []ScopeResult `json:"failures,omitempty"`
}

// ScopeResult is the outcome of one case.
type ScopeResult struct {
	Case      ScopeCase `json:"case"`
	Citations int       `json:"citations"`
	Level     string    `json:"level"`
	Score     float64   `json:"score"`
	Response  string    `json:"response,omitempty"`
}

// Declined reports whether a response declines: no citation token and a
// confidence of none or low.
func Declined(r Response) bool {
	return !citationToken.MatchString(r.Response) && (r.Confidence.Level == "none" || r.Confidence.Level == "low")
}

// Answered reports whether a response answers rather than declines: at
// least one citation token (every token left in a response resolves) and
// a confidence above none. How good the answer is, its confidence says:
// it is lowered when the knowledge cited does not address the question.
func Answered(r Response) bool {
	return citationToken.MatchString(r.Response) && r.Confidence.Level != "none"
}

// EvaluateScope runs every case as a chat turn and counts the declined
// out-of-scope and answered in-scope questions. Nothing is recorded: the
// turns' citation events are dropped, so an evaluation stays out of usage
// and the leaderboard.
func (s *Service) EvaluateScope(ctx context.Context, cases []ScopeCase) (ScopeReport, error) {
	var rep ScopeReport
	for _, c := range cases {
		r, _, err := s.Run(ctx, Request{Message: c.Question, Mode: c.Mode}, nil)
		if err != nil {
			return rep, fmt.Errorf("%q: %w", c.Question, err)
		}
		rep.N++
		ok := false
		if c.Expect == "out" {
			rep.Out++
			ok = Declined(r)
			if ok {
				rep.DeclinedOut++
			}
		} else {
			rep.In++
			ok = Answered(r)
			if ok {
				rep.AnsweredIn++
			}
		}
		if !ok {
			rep.Failures = append(rep.Failures, ScopeResult{Case: c, Citations: len(citationToken.FindAllString(r.Response, -1)),
				Level: r.Confidence.Level, Score: r.Confidence.Score, Response: r.Response})
		}
	}
	return rep, nil
}
