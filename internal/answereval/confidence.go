package answereval

// Levels are the confidence levels (D7), highest first.
var Levels = []string{"high", "medium", "low", "none"}

// ConfidenceSpread is the distribution of the answers' confidence.
type ConfidenceSpread struct {
	// Levels counts the answers at each level (high, medium, low, none).
	Levels map[string]int `json:"levels"`
	// MeanScore is the mean confidence score (0 with no answer).
	MeanScore float64 `json:"mean_score"`
	// Scores counts the scores in five bins of width 0.2: [0, 0.2),
	// [0.2, 0.4), [0.4, 0.6), [0.6, 0.8) and [0.8, 1].
	Scores [5]int `json:"scores"`
}

// Confidence returns the distribution of the answers' confidence.
func Confidence(answers []Answer) ConfidenceSpread {
	c := ConfidenceSpread{Levels: map[string]int{}}
	for _, l := range Levels {
		c.Levels[l] = 0
	}
	sum := 0.0
	for _, a := range answers {
		c.Levels[a.Level]++
		sum += a.Score
		c.Scores[min(4, max(0, int(a.Score*5)))]++
	}
	if len(answers) > 0 {
		c.MeanScore = round4(sum / float64(len(answers)))
	}
	return c
}
