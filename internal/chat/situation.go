package chat

import (
	"math"
	"slices"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/textproc"
)

// situationFit says how closely the situations the cited knowledge is
// meant for resemble the question, 0 to 1, or -1 when none of the cited
// entities lists any (an imported help article, say).
//
// Every entity of the knowledge base lists, under "When to use", the
// situations it helps in, written in the words of the people in them
// ("work stacks up in front of one machine"). For each cited entity we take
// the situation closest to the question, its title counting as one (a
// question that names it, "what should a QBR contain?", is one it is
// written for, whatever words its situations use): the cosine between the
// question's key terms, weighted by importance, and the situation's words,
// weighted by how specific each is to the knowledge base. The fit is the
// mean of those over the cited entities, each counted as often as the
// answer cites it, so an answer that leans on knowledge meant for another
// situation (call staffing for an escalating customer, a hotel-review study
// for an email that got no reply) fits less than one whose knowledge was
// written for situations like the one asked about. docs/evaluation.md ("A situation
// fit in the confidence") gives how it ranks rated answers.
//
// cited are the tokens the answer cites, each once, in the answer's order
// (so that the sum, and the rounded score, are the same on every run), and
// times how often it cites each.
func situationFit(r Reading, specific func(stem string) float64, cited []assistant.Token, times map[assistant.Token]int, found map[assistant.Token]assistant.Entity) float64 {
	if specific == nil {
		return -1
	}
	var question float64
	for _, k := range r.KeyTerms {
		question += k.Importance() * k.Importance()
	}
	if question == 0 {
		return -1
	}
	question = math.Sqrt(question)
	var sum, count float64
	for _, t := range cited {
		n := times[t]
		e, ok := found[t]
		if !ok || len(e.WhenToUse) == 0 {
			continue
		}
		best := cosineToQuestion(r, question, e.Title, specific) // the title is one situation
		for _, situation := range e.WhenToUse {
			best = max(best, cosineToQuestion(r, question, situation, specific))
		}
		sum += best * float64(n)
		count += float64(n)
	}
	if count == 0 {
		return -1
	}
	return sum / count
}

// cosineToQuestion is the cosine between the question's key terms (norm
// given) and the distinct stems of a text weighted by specificity.
func cosineToQuestion(r Reading, question float64, text string, specific func(stem string) float64) float64 {
	var buf [48]string
	stems := append(buf[:0], textproc.SharedTerms(text)...)
	slices.Sort(stems)
	stems = slices.Compact(stems)
	var norm, dot float64
	for _, st := range stems {
		w := specific(st)
		norm += w * w
		for _, k := range r.KeyTerms {
			if k.Stem == st {
				dot += w * k.Importance()
				break
			}
		}
	}
	if norm == 0 || dot == 0 {
		return 0
	}
	return dot / (question * math.Sqrt(norm))
}
