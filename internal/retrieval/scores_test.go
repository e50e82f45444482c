package retrieval_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"strconv"
	"testing"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/knowledge/synthetic"
	"github.com/constraintlab/assistant/internal/retrieval"
)

// rankingDigest is the SHA-256 of every ranking writeRankings lists, as
// the index gave them before its postings were packed (commit 8e06805),
// over the corpus since its tenth batch of entities, with the situations
// of long queries counted (situationShare), the vocabulary line for
// abusive customers and the eight cards of the eleventh batch
// (docs/knowledge-sources-11.md) and the
// project-billing card's situation reworded for project businesses, and
// bare numbers no longer searched (knowledge.QueryTerms), with the vocabulary
// line for competing ideas and pet projects, and the three cards of the
// thirteenth batch (docs/knowledge-sources-13.md), and the capital-budgeting
// card's title without "incremental cash flow" and the budget-discovery
// card's without "without sounding pushy", and the first-hire card without
// the tags "capacity" and "bottleneck" (docs/knowledge-sources-13.md,
// "Later edits"), and the reservation-pacing card's title without
// "slammed" and the public-complaint card without the tags "escalation"
// and "service-recovery" (docs/knowledge-sources-13.md, "Later edits"),
// and the four cards of the fourteenth batch (docs/knowledge-sources-14.md)
// and the one card of the fifteenth (docs/knowledge-sources-15.md)
// and the three of the sixteenth (docs/knowledge-sources-16.md),
// and the vocabulary line for custom features a customer demands,
// and the seventeenth batch's card and vocabulary line
// (docs/knowledge-sources-17.md), and two key ideas written as full
// sentences (the E-Myth's development cycle, Profit First's five
// accounts; docs/knowledge-sources-17.md, "Later edits"):
// the layout of the index may
// change, its scores and orders may not. Content changes it, and a change
// of how entities are scored, which says so.
const rankingDigest = "dc089dc073e594b03de084e7cad8ef8d7ddec0f30681f8ad20bd57ec4584c3a3"

// TestRankingsUnchanged: the embedded corpus plus 2,000 synthetic
// entities, searched with the owner questions, every embedded entity's
// title and summary, with and without a type, 50 results each: the
// tokens and the exact bits of the scores must not move.
func TestRankingsUnchanged(t *testing.T) {
	if got := rankingsDigest(t); got != rankingDigest {
		t.Fatalf("rankings digest %s, want %s: a ranking or a score changed", got, rankingDigest)
	}
}

func rankingsDigest(t *testing.T) string {
	extra, err := synthetic.Corpus(2000)
	if err != nil {
		t.Fatal(err)
	}
	own := embedded(t)
	s := retrieval.Build(1, append(own, extra...))
	queries := append([]string(nil), synthetic.OwnerQuestions...)
	for _, e := range own {
		queries = append(queries, e.Title, e.Summary)
	}
	h := sha256.New()
	for _, q := range queries {
		for _, typ := range []assistant.EntityType{"", assistant.Framework, assistant.Paper} {
			writeRanking(h, q, s.Search(assistant.SearchQuery{Text: q, Type: typ, Limit: 50}))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

func writeRanking(h hash.Hash, q string, hits []assistant.SearchResult) {
	fmt.Fprintf(h, "%q\n", q)
	for _, r := range hits {
		fmt.Fprintf(h, "%s %s\n", r.Entity.Token().String(), strconv.FormatFloat(r.Score, 'g', -1, 64))
	}
}
