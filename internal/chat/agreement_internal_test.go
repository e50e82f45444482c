package chat

import (
	"context"
	"errors"
	"testing"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/tooling"
	"github.com/constraintlab/assistant/internal/verify"
)

// rankedRetriever returns the same ranking for every query.
type rankedRetriever struct {
	ranking []assistant.Entity
	err     error
}

func (r rankedRetriever) Search(_ context.Context, q assistant.SearchQuery) ([]assistant.SearchResult, error) {
	var out []assistant.SearchResult
	for i, e := range r.ranking {
		if i == q.Limit {
			break
		}
		out = append(out, assistant.SearchResult{Entity: e, Score: float64(len(r.ranking) - i)})
	}
	return out, r.err
}

// TestSearchAgreement: the mean reciprocal rank of the cited entities in
// the plain search, each counted as often as the answer cites it, with an
// entity outside the first agreementDepth results counting 0; -1 when
// nothing is cited or nothing is found.
func TestSearchAgreement(t *testing.T) {
	var ranking []assistant.Entity
	for _, slug := range []string{"first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh"} {
		ranking = append(ranking, assistant.Entity{Type: assistant.Framework, Slug: slug})
	}
	tok := func(i int) assistant.Token { return ranking[i].Token() }
	s := &Service{Retriever: rankedRetriever{ranking: ranking}}
	tests := []struct {
		name  string
		cited []assistant.Token
		times map[assistant.Token]int
		want  float64
	}{
		{"the first result", []assistant.Token{tok(0)}, map[assistant.Token]int{tok(0): 2}, 1},
		{"the second result", []assistant.Token{tok(1)}, map[assistant.Token]int{tok(1): 1}, 0.5},
		{"first cited three times, second once", []assistant.Token{tok(0), tok(1)}, map[assistant.Token]int{tok(0): 3, tok(1): 1}, (3 + 0.5) / 4},
		{"beyond the depth counts nothing", []assistant.Token{tok(10)}, map[assistant.Token]int{tok(10): 1}, 0},
		{"not found at all", []assistant.Token{{Type: assistant.Paper, Slug: "elsewhere"}}, map[assistant.Token]int{{Type: assistant.Paper, Slug: "elsewhere"}: 1}, 0},
		{"nothing cited", nil, nil, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.searchAgreement(context.Background(), "a question", nil, tc.cited, tc.times)
			if err != nil || got != tc.want {
				t.Errorf("agreement %v (err %v), want %v", got, err, tc.want)
			}
		})
	}
	empty := &Service{Retriever: rankedRetriever{}}
	if got, err := empty.searchAgreement(context.Background(), "a question", nil, []assistant.Token{tok(0)}, map[assistant.Token]int{tok(0): 1}); err != nil || got != -1 {
		t.Errorf("no results: agreement %v (err %v), want -1", got, err)
	}
	failing := &Service{Retriever: rankedRetriever{err: errors.New("down")}}
	if _, err := failing.searchAgreement(context.Background(), "a question", nil, []assistant.Token{tok(0)}, map[assistant.Token]int{tok(0): 1}); err == nil {
		t.Error("a failing search: want its error")
	}
}

// TestAgreementScalesRelevance: an agreement of agreedFrom leaves the
// relevance as it is, a full one raises it without making the answer
// high, a lower one lowers it; below agreedFrom an answer is medium at
// most, and below highAgreedFrom it is not high; an answer covering only
// part of the question is low at most,
// unless the search agrees with it, and then medium at most.
func TestAgreementScalesRelevance(t *testing.T) {
	reading, on := refundQuestion()
	half := verify.Verdict{Claim: "Offer a refund before the customer asks.", Status: verify.Verified,
		Citations: []string{"framework:service-recovery"}}
	with := func(v verify.Verdict, n int) verify.Confidence {
		c := verify.Confidence{Score: 1, TotalClaims: n, VerifiedClaims: n}
		for range n {
			c.Verdicts = append(c.Verdicts, v)
		}
		return c
	}
	raise := (1 - agreementWeight + agreementWeight) / (1 - agreementWeight + agreementWeight*agreedFrom)
	tests := []struct {
		name      string
		c         verify.Confidence
		search    float64
		relevance float64
		level     string
	}{
		{"no search to compare", with(on, 3), -1, 0.65, "medium"},
		{"agreed: as it is", with(on, 3), agreedFrom, 0.65, "medium"},
		{"full agreement raises it", with(on, 2), 1, round(0.6 * raise), "medium"},
		{"never into high on the agreement alone", with(on, 5), 1, verify.HighFrom - 0.01, "medium"},
		{"no agreement keeps under two fifths", with(on, 3), 0, round(0.65 * (1 - agreementWeight) / (1 - agreementWeight + agreementWeight*agreedFrom)), "low"},
		{"high with agreement", with(on, 10), 1, 1, "high"},
		{"not high without it", with(on, 10), 0.5, round((1 - agreementWeight + agreementWeight*0.5) / (1 - agreementWeight + agreementWeight*agreedFrom)), "medium"},
		{"agreed, but not enough for high", with(on, 10), highAgreedFrom - 0.05, 1, "medium"},
		{"high from highAgreedFrom", with(on, 10), highAgreedFrom, 1, "high"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := withRelevance(tc.c, reading, "", fit{Situation: -1, Search: tc.search}, false, false)
			if c.Relevance == nil || *c.Relevance != tc.relevance || c.Level != tc.level {
				t.Errorf("relevance %v level %s (score %v), want %v %s", deref(c.Relevance), c.Level, c.Score, tc.relevance, tc.level)
			}
		})
	}

	// The same answer made only of quotations (the builtin's) keeps its
	// relevance, and is medium at most.
	t.Run("quotations: medium at most", func(t *testing.T) {
		c := withRelevance(with(on, 10), reading, "", fit{Situation: -1, Search: 1}, false, true)
		if c.Relevance == nil || *c.Relevance != 1 || c.Score != mediumCap || c.Level != "medium" {
			t.Errorf("relevance %v score %v level %s, want 1 %v medium", deref(c.Relevance), c.Score, c.Level, mediumCap)
		}
	})

	// A question of three key terms, of which the claims take up one.
	wider := reading
	wider.KeyTerms = append(wider.KeyTerms[:2:2], tooling.KeyTerm{Stem: "courier", Word: "courier", Weight: 1, Specificity: 1})
	partial := []struct {
		name   string
		search float64
		score  float64
		level  string
	}{
		{"part of the question, agreed: medium at most", 1, mediumCap, "medium"},
		{"part of the question, not agreed: low at most", agreedFrom - 0.01, lowCap, "low"},
		{"part of the question, no search: low at most", -1, lowCap, "low"},
	}
	for _, tc := range partial {
		t.Run(tc.name, func(t *testing.T) {
			c := withRelevance(with(half, 10), wider, "", fit{Situation: -1, Search: tc.search}, false, false)
			if c.Score != tc.score || c.Level != tc.level {
				t.Errorf("score %v level %s, want %v %s", c.Score, c.Level, tc.score, tc.level)
			}
		})
	}
}

func round(f float64) float64 { return float64(int(f*1000+0.5)) / 1000 }
