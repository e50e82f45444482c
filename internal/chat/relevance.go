package chat

import (
	"math"

	"github.com/constraintlab/assistant/internal/textproc"
	"github.com/constraintlab/assistant/internal/verify"
)

// withRelevance adds the answer-level relevance to a confidence verdict
// and lowers the score and level by it: a well-supported answer to a
// question its evidence does not address is not `high` (D7).
//
// The relevance is the weighted share of the question's key terms (the
// reading's, by importance) that the answer's verified cited claims
// contain, scaled so that addressing
// fullRelevanceAt of them counts as fully relevant. The score becomes the
// lower of support (verified claims over claims) and relevance, and the
// level follows the score. An answer to a message that also tried to change
// the instructions, or to a question in another language (understood
// only in part), is `low` at most.
//
// An answer whose verified claims take up less than partlyAddressed of
// the question's weighted key terms is `low` at most: it addresses only
// part of what was asked (the builtin then says what the knowledge base
// holds nothing on), and `medium` would promise more.
//
// The turn's diagnosis says how surely the question reads as one of the
// constraints the catalog knows (placement: its band, "" when nothing was
// diagnosed or the answer comes from the workspace's own articles). An
// answer to a question it could not place (low) is `low` at most: the
// knowledge may say true things, but nothing shows that they fit the
// situation asked about. One it placed only with medium confidence is
// `medium` at most: `high` promises the fit.
func withRelevance(c verify.Confidence, r Reading, placement string) verify.Confidence {
	if c.TotalClaims == 0 || !r.Scope.InScope {
		return c
	}
	addressed := map[string]bool{}
	for _, v := range c.Verdicts {
		// Only what the answer cites and the cited knowledge states counts:
		// an uncited line (a metric to watch, say) may be backed by what
		// the turn retrieved, but it is not the knowledge answering.
		if v.Status == verify.Verified && len(v.Citations) > 0 {
			for _, t := range textproc.Terms(v.Claim) {
				addressed[t] = true
			}
		}
	}
	share, _ := r.Addressed(func(stem string) bool { return addressed[stem] })
	relevance := math.Min(1, share/fullRelevanceAt)
	if c.VerifiedClaims > 0 {
		// The answer says something true of the knowledge, however far
		// from the question: low, not none (none is for no checkable claim).
		relevance = math.Max(relevance, minRelevance)
	}
	relevance = math.Round(relevance*1000) / 1000
	c.Relevance = &relevance
	c.Score = math.Min(c.Score, relevance)
	if lang := r.Scope.Language; r.Scope.Injection || (lang != "en" && lang != "") || placement == "low" || share < partlyAddressed {
		c.Score = math.Min(c.Score, lowCap)
	}
	if placement == "medium" {
		c.Score = math.Min(c.Score, mediumCap)
	}
	c.Level = verify.Level(c.Score, c.TotalClaims)
	return c
}

// fullRelevanceAt is the share of the question's weighted key terms an
// answer must address to count as fully relevant; lowCap and mediumCap
// the highest scores of an answer that is `low` or `medium` at most.
const (
	minRelevance    = 0.05
	fullRelevanceAt = 0.75
	lowCap          = 0.49
	mediumCap       = 0.79
	partlyAddressed = 0.4
)
