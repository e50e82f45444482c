// Package synthetic generates a large knowledge base for benchmarks: n
// entities written in the words of the embedded corpus (sampled by their
// frequency there), deterministic for a given n, so that cost can be
// measured at 1k, 10k or 100k entities without shipping such a corpus.
// Nothing in the service uses it; the search and import benchmarks do.
package synthetic

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/knowledge"
)

// Corpus returns n synthetic entities (slugs synthetic-000000 ...). The
// same n always gives the same entities.
func Corpus(n int) ([]assistant.Entity, error) {
	files, err := knowledge.Embedded()
	if err != nil {
		return nil, err
	}
	var pool []string // every word of the corpus, as often as it occurs
	for _, f := range files {
		e := f.Entity
		text := strings.Join(slices.Concat([]string{e.Title, e.Summary}, e.Tags, e.KeyIdeas, e.WhenToUse, e.Pitfalls), " ")
		pool = append(pool, strings.Fields(strings.ToLower(text))...)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	// The text is written into one reused buffer and copied out once per
	// string: the same strings as joining lists of words and sentences,
	// without the lists.
	var buf []byte
	writeWords := func(k int) {
		for i := range k {
			if i > 0 {
				buf = append(buf, ' ')
			}
			buf = append(buf, strings.Trim(pool[rng.IntN(len(pool))], ".,;:()\"'")...)
		}
	}
	words := func(k int) string {
		buf = buf[:0]
		writeWords(k)
		return string(buf)
	}
	sentence := func(length int) string {
		buf = buf[:0]
		writeWords(length)
		buf = append(buf, '.')
		return string(buf)
	}
	sentences := func(count, length int) []string {
		out := make([]string, count)
		for i := range out {
			out[i] = sentence(length)
		}
		return out
	}
	paragraph := func(count, length int) string {
		buf = buf[:0]
		for i := range count {
			if i > 0 {
				buf = append(buf, ' ')
			}
			writeWords(length)
			buf = append(buf, '.')
		}
		return string(buf)
	}
	types := assistant.EntityTypes
	out := make([]assistant.Entity, n)
	for i := range out {
		year := 1900 + rng.IntN(125)
		out[i] = assistant.Entity{
			Type: types[i%len(types)], Slug: fmt.Sprintf("synthetic-%06d", i), Title: words(3 + rng.IntN(4)),
			Authors: []string{"Synthetic Author"}, Year: &year, URL: fmt.Sprintf("https://example.org/%d", i),
			Tags:       strings.Fields(words(5)),
			Archetypes: []string{assistant.ArchetypeIDs[rng.IntN(len(assistant.ArchetypeIDs))]},
			Summary:    paragraph(5, 18),
			KeyIdeas:   sentences(4, 16), WhenToUse: sentences(3, 14), Pitfalls: sentences(2, 12),
		}
	}
	return out, nil
}

// OwnerQuestions are questions an owner might ask, for search benchmarks.
var OwnerQuestions = []string{
	"orders pile up in front of one machine while others sit idle",
	"customers cancel after the first month",
	"we cannot tell which marketing channel brings paying customers",
	"our prices are lower than rivals and margins are thin",
	"the founder approves every decision and the team waits",
	"cash runs out before clients pay their invoices",
	"new hires take months before they are productive",
	"people sign up for the free plan and never pay",
	"pricing churn bottleneck",
	"how should we choose which market to enter next",
}
