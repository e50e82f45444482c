package chat

import (
	"cmp"
	"math"
	"slices"

	"github.com/constraintlab/assistant/internal/textproc"
	"github.com/constraintlab/assistant/internal/verify"
)

// withRelevance adds the answer-level relevance to a confidence verdict
// and lowers the score and level by it: a well-supported answer to a
// question its evidence does not address is not `high` (D7).
//
// Only what the answer cites and the cited knowledge states counts: an
// uncited line (a metric to watch, say) may be backed by what the turn
// retrieved, but it is not the knowledge answering. Over those verified
// cited claims, the relevance is the mean of two parts, each 0 to 1:
//   - depth: how closely the best evidence speaks to the question, the
//     mean over the three claims that address most of the question's
//     weighted key terms (the reading's, by importance) of the share each
//     addresses, counted fully at fullDepthAt;
//   - substance: how much checked knowledge the answer brings to it, the
//     number of verified cited claims, counted fully at fullSubstanceAt.
//
// We chose the two on answers rated blind for usefulness (docs/evaluation.md,
// "Choosing the relevance"): over 208 in-scope answers of four sets and two
// versions of the builtin, the share of key terms the claims take up
// together ranked answers by usefulness with a Spearman correlation of
// 0.37, the depth 0.44, the substance 0.59, and the mean of depth and
// substance 0.61, above 0.5 on each set.
//
// The relevance is then scaled by how closely the situations the cited
// knowledge is written for resemble the question (situationFit): by the
// square root of the fit over fullFitAt when the fit is below it. An
// answer whose knowledge was written for other situations loses
// relevance; a closer fit leaves it as it is. Over 184 in-scope answers
// rated blind on four sets, the scaling raised the rank correlation of
// the score with usefulness from 0.36 to 0.43 (docs/evaluation.md, "A
// situation fit in the confidence"). It first also raised the relevance of
// a close fit, by up to a fifth; on 460 in-scope answers of ten later sets
// rated blind, that raise lowered the correlation (0.465 without it,
// against 0.445, lower on eight sets of ten) and lifted answers rated 1 to
// `medium` (docs/evaluation.md, "Seventeenth session").
//
// The relevance is then scaled by how highly a plain search of the user's
// message ranks the knowledge the answer cites (searchAgreement): in
// proportion to 1 - agreementWeight + agreementWeight times the agreement,
// with an agreement of agreedFrom leaving it as it is. An answer built on
// what the question alone points to first gains about a quarter (never
// reaching `high` on that alone); one built on knowledge the question
// alone does not find among its first results keeps under two fifths. An
// answer the search does not agree with (below agreedFrom) is `medium` at
// most: `high` promises that the knowledge it stands on is what the
// question itself points to. `high` also needs an agreement of at least
// highAgreedFrom: most of what the answer cites is the plain search's
// first result.
//
// The score becomes the lower of support (verified claims over claims) and
// relevance, and the level follows the score. An answer to a message that
// also tried to change the instructions, to one that asked to confirm a
// source the cited knowledge does not hold (unconfirmed: a made-up study
// is an attempt to have the answer vouch for it), or to a question in
// another language (understood only in part), is `low` at most.
//
// An answer whose verified claims together take up less than
// partlyAddressed of the question's weighted key terms (its coverage)
// addresses only part of what was asked (the builtin then says what the
// knowledge base holds nothing on). It is `low` at most, or `medium` at
// most when the plain search agrees with it: blind ratings found such
// answers, on the knowledge the question itself points to, as useful as
// the `medium` ones (2.89 of 5 over 28 answers, against 2.35 for the 85
// the search did not agree with).
//
// An answer to a later turn of a conversation is `low` at most: it is
// drawn from what the knowledge holds beyond what the first answer
// offered, and blind ratings found it no more useful where the rest of
// the confidence said `medium` (42 dev follow-up answers rated in pairs
// averaged 1.90 of 5 at medium, 1.86 at low, against 2.60 and 2.28 for
// first turns; docs/evaluation.md, "Tenth session"). Within `low`, its
// score is its relevance, as a first turn's is. It was also multiplied
// by 0.6, to rank below every first turn of the same relevance; on the
// 414 in-scope answers of the last nine sets rated blind (twenty-third
// and twenty-fourth sessions), follow-ups rated about as the first turns
// at `low` (2.28 against 2.34), and without the scaling the score's rank
// correlation with usefulness rose from 0.537 to 0.552 (from 5 to 7 sets
// of 9 at 0.5 or more), and it rose on the sets of the fifteenth to
// twenty-second sessions too (docs/evaluation.md, "Twenty-fifth session").
//
// The turn's diagnosis says how surely the question reads as one of the
// constraints the catalog knows (placement: its band, "" when nothing was
// diagnosed, the answer comes from the workspace's own articles, or the
// persona's diagnosis only informs its answer rather than leading it). An
// answer to a question it could not place (low) is `low` at most: the
// knowledge may say true things, but nothing shows that they fit the
// situation asked about. One it placed only with medium confidence is
// `medium` at most: `high` promises the fit.
//
// An answer made only of quotations of the knowledge read (quoted: the
// builtin model's, llm.Quoter) is `medium` at most. `high` promises an
// answer fitted to the asker's situation, and quotations can be on the
// question and still generic: over the 65 blind sets, 92 builtin answers
// reached `high`, and raters who saw neither the code nor the confidence
// rated 38 of them 4 or 5 (mean 3.23, about the `medium` answers' 3.2);
// no feature of the turn tried told the good ones apart
// (docs/evaluation.md, "Twenty-first session").
func withRelevance(c verify.Confidence, r Reading, placement string, f fit, unconfirmed, quoted bool) verify.Confidence {
	if c.TotalClaims == 0 || !r.Scope.InScope {
		return c
	}
	// The terms of the verified cited claims (lists shared with the
	// memo, only read), and the share of the question each addresses.
	var claimsBuf [32][]string
	var sharesBuf [32]float64
	claims, shares := claimsBuf[:0], sharesBuf[:0]
	cited := 0
	for _, v := range c.Verdicts {
		if v.Status != verify.Verified || len(v.Citations) == 0 {
			continue
		}
		cited++
		terms := textproc.SharedTerms(v.Claim)
		claims = append(claims, terms)
		share := r.AddressedShare(func(stem string) bool { return slices.Contains(terms, stem) })
		shares = append(shares, share)
	}
	coverage := r.AddressedShare(func(stem string) bool {
		return slices.ContainsFunc(claims, func(terms []string) bool { return slices.Contains(terms, stem) })
	})
	slices.SortFunc(shares, func(a, b float64) int { return cmp.Compare(b, a) })
	depth := 0.0
	for _, s := range shares[:min(3, len(shares))] {
		depth += s / 3
	}
	substance := float64(cited) / fullSubstanceAt
	relevance := (math.Min(1, depth/fullDepthAt) + math.Min(1, substance)) / 2
	if c.VerifiedClaims > 0 {
		// The answer says something true of the knowledge, however far
		// from the question: low, not none (none is for no checkable claim).
		relevance = math.Max(relevance, minRelevance)
	}
	verified := c.VerifiedClaims > 0
	if fit := f.Situation; fit >= 0 {
		relevance = scaled(relevance, relevance*math.Min(1, math.Sqrt(fit/fullFitAt)), verified)
	}
	if f.Search >= 0 {
		relevance = scaled(relevance, relevance*(1-agreementWeight+agreementWeight*f.Search)/(1-agreementWeight+agreementWeight*agreedFrom), verified)
	}
	relevance = math.Round(relevance*1000) / 1000
	c.Relevance = &relevance
	c.Score = math.Min(c.Score, relevance)
	agreed := f.Search >= agreedFrom
	agreedForHigh := f.Search < 0 || f.Search >= highAgreedFrom // no search to compare leaves high open
	partial := coverage < partlyAddressed
	if lang := r.Scope.Language; r.Scope.Injection || unconfirmed || (lang != "en" && lang != "") || placement == "low" || (partial && !agreed) || r.FollowUp {
		c.Score = math.Min(c.Score, lowCap)
	}
	if placement == "medium" || partial || !agreedForHigh || quoted {
		c.Score = math.Min(c.Score, mediumCap)
	}
	c.Level = verify.Level(c.Score, c.TotalClaims)
	return c
}

// scaled is a relevance scaled from one value to another, as it will be
// shown (rounded) and at most 1. A raise never lifts a relevance below
// `high` into it (it stops just below): the search agreement alone never
// makes an answer high (the situation fit only lowers). An answer that verifies
// anything (verified) keeps minRelevance.
func scaled(from, to float64, verified bool) float64 {
	shown := math.Round(to*1000) / 1000
	if to > from && from < verify.HighFrom && shown >= verify.HighFrom {
		shown = verify.HighFrom - 0.01
	}
	shown = math.Min(1, shown)
	if verified {
		shown = math.Max(shown, minRelevance)
	}
	return shown
}

// fullDepthAt is the mean share of the question's weighted key terms its
// three best verified cited claims must address for full depth;
// fullSubstanceAt the number of verified cited claims that counts as full
// substance; lowCap and mediumCap the highest scores of an answer that is
// `low` or `medium` at most.
const (
	minRelevance    = 0.05
	fullDepthAt     = 0.5
	fullSubstanceAt = 10.0
	lowCap          = 0.49
	mediumCap       = 0.79
	partlyAddressed = 0.4
)

// fit is how well the cited knowledge fits the question, seen from two
// sides, each 0 to 1, or -1 when it cannot be told: the situations it is
// written for (situationFit) and a plain search of the user's message
// (searchAgreement).
type fit struct {
	Situation, Search float64
}

// agreementWeight is the share of the relevance that rests on the search
// agreement; agreedFrom the agreement from which the plain search is said
// to agree with the answer (most of its citations on the search's first
// result): it leaves the relevance as it is, it is needed for `high`, and
// it lets an answer that covers only part of the question be `medium`.
//
// Chosen on the 368 rated in-scope answers of the twelfth session's last
// eight blind sets (docs/evaluation.md, "Thirteenth session"): against
// the confidence without it, the score's rank correlation with usefulness
// rose from 0.43 to 0.56 on average (at least 0.49 on every set, at least
// 0.5 on six of eight, against three), `high` answers rated 4 or 5 from
// 18 of 54 to 9 of 12, answers at medium or high averaged 2.98 instead of
// 2.90, and their share of in-scope answers went from 44% to 45%.
//
// highAgreedFrom is the agreement a `high` answer needs. Chosen on the 460
// rated in-scope answers of the sets written in the fourteenth to
// sixteenth sessions, all answered by the same code: of the 21 `high`
// answers, 12 were rated 4 or 5; of the 10 the search agreed with at
// 0.8 or more, 9 were (docs/evaluation.md, "Seventeenth session").
const (
	agreementWeight = 0.7
	agreedFrom      = 0.7
	highAgreedFrom  = 0.8
)

// fullFitAt is the situation fit from which the relevance keeps its value
// (about the 30th percentile of the fit over rated in-scope answers).
const fullFitAt = 0.08
