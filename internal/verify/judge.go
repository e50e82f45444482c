package verify

// The model-judged mode: when a remote model provider is configured, a
// ModelJudge asks the model for the verdicts of an answer's claims in one
// batched call with strict JSON output, and keeps the builtin Checker's
// verdict for the answer whenever the model's reply cannot be trusted.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/llm"
	"github.com/constraintlab/assistant/internal/textproc"
)

// UseDefault, passed as the threshold of Verify, selects the verifier's own
// default bar.
const UseDefault = -1.0

// Verifier judges the claims of an answer. cited holds the entities the
// answer's citation tokens resolve to (a token that is not in it is
// invented: its claim is unsupported, D6); hits are the evidence for claims
// that cite nothing. threshold is the score a claim must reach to be
// verified, 0 to 1, or UseDefault.
type Verifier interface {
	Verify(ctx context.Context, text string, cited map[assistant.Token]assistant.Entity, hits []assistant.Entity, threshold float64) Confidence
}

// Verify implements Verifier with the builtin check: Check with the given
// threshold (the checker's own when threshold is UseDefault or negative).
func (c *Checker) Verify(_ context.Context, text string, cited map[assistant.Token]assistant.Entity, hits []assistant.Entity, threshold float64) Confidence {
	cc := *c
	if threshold >= 0 {
		cc.Threshold = threshold
	}
	return cc.Check(text, cited, hits)
}

// Defaults of ModelJudge.
const (
	// DefaultJudgeTimeout bounds the model's call, retries included: past
	// it the builtin verdict is returned.
	DefaultJudgeTimeout = 20 * time.Second
	// maxJudgeSources bounds the entities offered as evidence for a claim
	// that cites nothing.
	maxJudgeSources = 5
	// maxPassageChars bounds each passage sent to the model.
	maxPassageChars = 600
)

// ModelJudge is a Verifier that asks a language model. For each answer it:
//
//  1. runs the builtin Fallback checker, whose verdict stands for claims
//     that carry an invented token (unsupported, D6), that have no evidence
//     at all, or whose metadata (year, author, title) it finds
//     contradicted: those checks are deterministic and stay enforced;
//  2. sends the remaining claims in one request: a system prompt and one
//     user message listing the evidence passages and the numbered claims,
//     asking for {"verdicts":[{"claim","status","evidence","score"}]};
//  3. validates the reply strictly: JSON only, every claim exactly once, a
//     known status, a score from 0 to 1, and an evidence quote (required
//     for verified and contradicted) found word for word in a passage of
//     that claim's own sources;
//  4. on any failure (provider error, timeout, malformed or incomplete
//     reply) returns the Fallback's verdict for the whole answer: verdicts
//     of the two judges are never mixed within one answer, except for the
//     deterministic verdicts of step 1.
//
// A claim the model calls verified is verified only when its score reaches
// the threshold; otherwise it is unsupported. The confidence is computed
// by the rules of D7, as the Checker does.
type ModelJudge struct {
	Provider llm.Provider
	// Fallback is the builtin checker (required).
	Fallback *Checker
	// Timeout bounds the call (default DefaultJudgeTimeout).
	Timeout time.Duration
	// Logger receives a warning for each fallback (default: discarded).
	Logger *slog.Logger
}

// judgeVerdict is the verdict of one claim as the model returns it.
type judgeVerdict struct {
	Claim    int      `json:"claim"`
	Status   string   `json:"status"`
	Evidence string   `json:"evidence"`
	Score    *float64 `json:"score"`
}

// judgeSource is an entity offered as evidence, with its passages.
type judgeSource struct {
	entity   assistant.Entity
	label    string // S1, S2, ...
	passages []string
}

// judgeClaim is a claim sent to the model.
type judgeClaim struct {
	index   int // into the verdicts
	text    string
	sources []*judgeSource
}

// Verify implements Verifier.
func (j *ModelJudge) Verify(ctx context.Context, text string, cited map[assistant.Token]assistant.Entity, hits []assistant.Entity, threshold float64) Confidence {
	if threshold < 0 {
		threshold = j.Fallback.Threshold
	}
	builtin := j.Fallback.Verify(ctx, text, cited, hits, threshold)
	claims := SplitClaims(text)
	if len(claims) != len(builtin.Verdicts) {
		// The builtin split the text its own way: nothing to align with.
		j.warn(ctx, "claims do not align with the builtin verdicts", nil)
		return builtin
	}

	sources := map[assistant.Token]*judgeSource{}
	var order []*judgeSource
	source := func(e assistant.Entity) *judgeSource {
		t := e.Token()
		if s, ok := sources[t]; ok {
			return s
		}
		s := &judgeSource{entity: e, label: "S" + strconv.Itoa(len(order)+1), passages: judgePassages(e)}
		sources[t] = s
		order = append(order, s)
		return s
	}
	var ask []judgeClaim
	for i, cl := range claims {
		v := builtin.Verdicts[i]
		if v.Status == Contradicted {
			continue // a wrong year, author or title stays contradicted
		}
		jc := judgeClaim{index: i, text: v.Claim}
		invented := false
		for _, t := range cl.Citations {
			e, ok := cited[t]
			if !ok {
				invented = true
				break
			}
			jc.sources = append(jc.sources, source(e))
		}
		if invented {
			continue // unsupported, whatever it says (D6)
		}
		if len(cl.Citations) == 0 {
			for _, e := range hits[:min(len(hits), maxJudgeSources)] {
				jc.sources = append(jc.sources, source(e))
			}
		}
		if len(jc.sources) == 0 {
			continue // no evidence: unsupported
		}
		ask = append(ask, jc)
	}
	if len(ask) == 0 {
		return builtin
	}

	timeout := j.Timeout
	if timeout <= 0 {
		timeout = DefaultJudgeTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := j.Provider.Complete(cctx, llm.Request{
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: judgeSystemPrompt},
			{Role: llm.RoleUser, Content: judgePrompt(order, ask)},
		},
		MaxTokens: 200 + 150*len(ask),
	})
	if err != nil {
		j.warn(ctx, "the model could not judge the answer", err)
		return builtin
	}
	if len(resp.ToolCalls) > 0 {
		j.warn(ctx, "the model's reply is not valid", errors.New("it called a tool"))
		return builtin
	}
	verdicts, err := parseJudgement(resp.Content, ask, threshold)
	if err != nil {
		j.warn(ctx, "the model's reply is not valid", err)
		return builtin
	}
	out := make([]Verdict, len(builtin.Verdicts))
	copy(out, builtin.Verdicts)
	for k, jc := range ask {
		out[jc.index] = merge(builtin.Verdicts[jc.index], verdicts[k])
	}
	return summarize(out)
}

func (j *ModelJudge) warn(ctx context.Context, msg string, err error) {
	if j.Logger == nil {
		return
	}
	attrs := []any{"provider", j.Provider.Name()}
	if err != nil {
		attrs = append(attrs, "err", err)
	}
	j.Logger.WarnContext(ctx, "verify: "+msg+"; using the builtin verdict", attrs...)
}

// merge puts the model's judgement of a claim into the builtin verdict's
// frame (claim text and citations).
func merge(b, m Verdict) Verdict {
	b.Status, b.Evidence, b.Score, b.Reason = m.Status, m.Evidence, m.Score, m.Reason
	return b
}

// summarize computes the confidence of D7 from verdicts.
func summarize(verdicts []Verdict) Confidence {
	conf := Confidence{Verdicts: verdicts, TotalClaims: len(verdicts)}
	for _, v := range verdicts {
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

const judgeSystemPrompt = `You check claims against source passages, strictly.
For each numbered claim, use ONLY the passages of the sources listed for that claim, never your own knowledge:
- "verified": a passage states the claim (paraphrase allowed; every part of the claim must be stated);
- "contradicted": a passage states something incompatible with the claim (a different year, name, number, or the opposite);
- "unsupported": anything else, including claims that are only partly stated or merely plausible.
"evidence" is the one passage that decided the verdict, copied exactly, character for character (it may be a contiguous part of a passage); it is required for verified and contradicted, and "" when nothing relevant exists.
"score" is how fully the evidence supports the claim, from 0 to 1 (0 when contradicted).
Reply with one JSON object and nothing else, every claim exactly once, in this form:
{"verdicts":[{"claim":1,"status":"verified","evidence":"...","score":0.9}]}`

// judgePrompt lists the sources with their passages, then the claims with
// the sources each is to be checked against.
func judgePrompt(sources []*judgeSource, claims []judgeClaim) string {
	var b strings.Builder
	b.WriteString("Sources:\n")
	for _, s := range sources {
		fmt.Fprintf(&b, "\n[%s] %s (%s)\n", s.label, s.entity.Title, s.entity.Token())
		for _, p := range s.passages {
			fmt.Fprintf(&b, "- %s\n", p)
		}
	}
	b.WriteString("\nClaims:\n")
	for i, c := range claims {
		labels := make([]string, len(c.sources))
		for k, s := range c.sources {
			labels[k] = s.label
		}
		fmt.Fprintf(&b, "%d. %s (check against: %s)\n", i+1, c.text, strings.Join(labels, ", "))
	}
	fmt.Fprintf(&b, "\nReturn the JSON object with exactly %d verdicts.", len(claims))
	return b.String()
}

// judgePassages are the passages of an entity offered to the model: its
// metadata line, the sentences of its summary and its list items, each on
// one line with whitespace collapsed.
func judgePassages(e assistant.Entity) []string {
	meta := e.Title
	if len(e.Authors) > 0 {
		meta += " by " + strings.Join(e.Authors, ", ")
	}
	if e.Year != nil {
		meta += fmt.Sprintf(", published in %d", *e.Year)
	}
	out := []string{meta + "."}
	add := func(s string) {
		s = strings.Join(strings.Fields(s), " ")
		if s == "" {
			return
		}
		out = append(out, textproc.Cut(s, maxPassageChars))
	}
	for _, s := range textproc.Sentences(e.Summary) {
		add(s)
	}
	for _, list := range [][]string{e.KeyIdeas, e.WhenToUse, e.Pitfalls} {
		for _, s := range list {
			add(s)
		}
	}
	return out
}

// parseJudgement validates the model's reply and returns one verdict per
// claim, in the order of claims.
func parseJudgement(content string, claims []judgeClaim, threshold float64) ([]Verdict, error) {
	raw := strings.TrimSpace(content)
	// Models often fence JSON even when told not to; a fence is the only
	// wrapping accepted.
	if strings.HasPrefix(raw, "```") {
		raw = strings.TrimPrefix(strings.TrimPrefix(raw, "```json"), "```")
		raw = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(raw), "```"))
	}
	var reply struct {
		Verdicts []judgeVerdict `json:"verdicts"`
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	if err := dec.Decode(&reply); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if dec.More() {
		return nil, errors.New("text after the JSON object")
	}
	if len(reply.Verdicts) != len(claims) {
		return nil, fmt.Errorf("%d verdicts for %d claims", len(reply.Verdicts), len(claims))
	}
	out := make([]Verdict, len(claims))
	seen := make([]bool, len(claims))
	for _, jv := range reply.Verdicts {
		n := jv.Claim - 1
		if n < 0 || n >= len(claims) || seen[n] {
			return nil, fmt.Errorf("claim %d is unknown or judged twice", jv.Claim)
		}
		seen[n] = true
		if jv.Score == nil || math.IsNaN(*jv.Score) || *jv.Score < 0 || *jv.Score > 1 {
			return nil, fmt.Errorf("claim %d: score missing or outside 0..1", jv.Claim)
		}
		v := Verdict{Status: jv.Status, Score: math.Round(*jv.Score*1000) / 1000}
		quote := strings.TrimSpace(jv.Evidence)
		switch jv.Status {
		case Verified, Contradicted, Unsupported:
		default:
			return nil, fmt.Errorf("claim %d: unknown status %q", jv.Claim, jv.Status)
		}
		if quote == "" && jv.Status != Unsupported {
			return nil, fmt.Errorf("claim %d: %s without evidence", jv.Claim, jv.Status)
		}
		if quote != "" {
			e, ok := findQuote(quote, claims[n].sources)
			if !ok {
				return nil, fmt.Errorf("claim %d: the evidence is not in its sources", jv.Claim)
			}
			v.Evidence = e
		}
		switch {
		case v.Status == Contradicted:
			v.Score, v.Reason = 0, "the model found the cited knowledge says otherwise"
		case v.Status == Verified && v.Score >= threshold:
			v.Reason = "the model found it stated in the knowledge"
		case v.Status == Verified:
			v.Status, v.Reason = Unsupported, fmt.Sprintf("the model's support score %.2f is below the threshold %.2f", v.Score, threshold)
		default:
			v.Reason = "the model found no passage that states it"
		}
		out[n] = v
	}
	return out, nil
}

// findQuote looks a quote up in the passages of sources: whitespace is
// collapsed, surrounding quotation marks and a final full stop or ellipsis
// are ignored and case does not matter; anything else must match exactly.
// It returns the evidence with the passage's own text.
func findQuote(quote string, sources []*judgeSource) (*Evidence, bool) {
	q := strings.Join(strings.Fields(quote), " ")
	q = strings.Trim(q, "\"'“”‘’ ")
	q = strings.TrimRight(strings.TrimSuffix(strings.TrimSuffix(q, "…"), "..."), ". ")
	if len(textproc.Words(q)) < 2 {
		return nil, false // too short to show anything
	}
	lq := strings.ToLower(q)
	for _, s := range sources {
		for _, p := range s.passages {
			lp := strings.ToLower(p)
			i := strings.Index(lp, lq)
			if i < 0 {
				continue
			}
			text := q
			if len(lp) == len(p) {
				text = p[i : i+len(q)] // the passage's own casing
			}
			loc, _ := locateQuote(s.entity, text)
			ev := evidenceAt(s.entity, loc, text)
			ev.Snippet = text
			return ev, true
		}
	}
	return nil, false
}
