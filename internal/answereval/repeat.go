package answereval

import (
	"cmp"
	"slices"
)

// Repeats is the figure of repeated sentences over a set of answers.
type Repeats struct {
	// Ratio is the sentences that appear word for word in another answer
	// of the set (N) out of all the sentences of the set (Of).
	Ratio
	// ByMode is the same figure over the answers of each mode.
	ByMode map[string]Ratio `json:"by_mode"`
	// Top lists the most repeated sentences, most answers first.
	Top []RepeatedSentence `json:"top"`
}

// RepeatedSentence is one sentence found in several answers.
type RepeatedSentence struct {
	Sentence string   `json:"sentence"`
	Answers  []string `json:"answers"` // ids of the answers holding it
}

// maxTopRepeats is how many repeated sentences Repeats.Top lists.
const maxTopRepeats = 20

// RepeatedSentences measures how many sentences of the answers appear word
// for word in another answer of the set. Sentences are those of four or
// more words once citation tokens are removed (headings are not
// sentences); two sentences are the same when they are equal after
// normalising case, runs of white space and the punctuation at their ends.
// A sentence said twice in one answer and nowhere else is not repeated;
// one found in two answers counts once in each. Per mode, "another answer"
// is still any answer of the set.
func RepeatedSentences(answers []Answer) Repeats {
	type occurrence struct {
		answer int
		key    string
	}
	var all []occurrence
	holders := map[string][]int{} // normalised sentence -> answers holding it, ascending, once each
	first := map[string]string{}  // normalised sentence -> its first wording
	for i, a := range answers {
		for _, s := range sentences(a.Text) {
			key := normalise(s.bare)
			all = append(all, occurrence{answer: i, key: key})
			if h := holders[key]; len(h) == 0 || h[len(h)-1] != i {
				holders[key] = append(h, i)
			}
			if _, ok := first[key]; !ok {
				first[key] = s.bare
			}
		}
	}
	repeated, total := 0, len(all)
	byMode := map[string][2]int{} // mode -> repeated, total
	for _, o := range all {
		mode := answers[o.answer].Mode
		c := byMode[mode]
		c[1]++
		if len(holders[o.key]) > 1 {
			repeated++
			c[0]++
		}
		byMode[mode] = c
	}
	rep := Repeats{Ratio: ratio(repeated, total), ByMode: map[string]Ratio{}, Top: []RepeatedSentence{}}
	for mode, c := range byMode {
		rep.ByMode[mode] = ratio(c[0], c[1])
	}
	for key, h := range holders {
		if len(h) < 2 {
			continue
		}
		r := RepeatedSentence{Sentence: first[key]}
		for _, i := range h {
			r.Answers = append(r.Answers, answers[i].ID)
		}
		rep.Top = append(rep.Top, r)
	}
	slices.SortFunc(rep.Top, func(a, b RepeatedSentence) int {
		return cmp.Or(cmp.Compare(len(b.Answers), len(a.Answers)), cmp.Compare(a.Sentence, b.Sentence))
	})
	if len(rep.Top) > maxTopRepeats {
		rep.Top = rep.Top[:maxTopRepeats]
	}
	return rep
}
