package answereval

// Figures are the automatic figures of a set of answers: those a program
// takes without a rater.
type Figures struct {
	N int `json:"n"`
	// ByKind counts, for each kind of row present, its answers, the
	// declined ones and those at medium or high confidence.
	ByKind map[string]KindCounts `json:"by_kind"`
	// OutDeclined is the out-of-scope answers that declined.
	OutDeclined Ratio `json:"out_declined"`
	// InWronglyDeclined is the in-scope answers (in and followup) that
	// declined.
	InWronglyDeclined Ratio `json:"in_wrongly_declined"`
	// InMediumHigh is the in-scope answers at medium or high confidence.
	InMediumHigh Ratio            `json:"in_medium_high"`
	Confidence   ConfidenceSpread `json:"confidence"`
	// Repeated is over all answers; RepeatedAnswered leaves the declines
	// out (a decline is a fixed sentence by design).
	Repeated         Repeats `json:"repeated"`
	RepeatedAnswered Repeats `json:"repeated_answered"`
	Hover            Hover   `json:"hover"`
	// Broken is the answers with broken output (N of Of), listed in
	// BrokenAnswers.
	Broken        Ratio          `json:"broken"`
	BrokenAnswers []BrokenAnswer `json:"broken_answers"`
}

// KindCounts are the counts of one kind of row.
type KindCounts struct {
	N          int `json:"n"`
	Declined   int `json:"declined"`
	MediumHigh int `json:"medium_high"`
}

// Measure takes the automatic figures of a set of answers; cards gives
// the text of each cited entity's hover card.
func Measure(answers []Answer, cards CardText) Figures {
	f := Figures{N: len(answers), ByKind: map[string]KindCounts{}}
	var answered []Answer
	outDeclined, out, inDeclined, inMediumHigh, in := 0, 0, 0, 0, 0
	for _, a := range answers {
		declined := Declined(a)
		k := f.ByKind[a.Kind]
		k.N++
		if declined {
			k.Declined++
		} else {
			answered = append(answered, a)
		}
		if a.Confident() {
			k.MediumHigh++
		}
		f.ByKind[a.Kind] = k
		switch {
		case a.Kind == KindOut:
			out++
			if declined {
				outDeclined++
			}
		case InScope(a.Kind):
			in++
			if declined {
				inDeclined++
			}
			if a.Confident() {
				inMediumHigh++
			}
		}
	}
	f.OutDeclined, f.InWronglyDeclined, f.InMediumHigh = ratio(outDeclined, out), ratio(inDeclined, in), ratio(inMediumHigh, in)
	f.Confidence = Confidence(answers)
	f.Repeated = RepeatedSentences(answers)
	f.RepeatedAnswered = RepeatedSentences(answered)
	f.Hover = HoverCheckable(answers, cards)
	f.BrokenAnswers = BrokenAnswers(answers)
	f.Broken = ratio(len(f.BrokenAnswers), len(answers))
	return f
}
