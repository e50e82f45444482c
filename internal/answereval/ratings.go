package answereval

import (
	"bufio"
	"cmp"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/constraintlab/assistant/internal/assistant"
)

// Rating is a rater's usefulness score of one answer.
type Rating struct {
	ID     string
	Score  int // 1 to 5
	Reason string
}

// ReadRatings reads a ratings file: one line per answer of
// id<TAB>score<TAB>reason, score an integer from 1 to 5 (the rubric of
// docs/evaluation.md). A first line starting with "id<TAB>" is a header;
// blank lines and lines starting with # are skipped. An id rated twice is
// an error, as is a malformed line, each naming its line.
func ReadRatings(r io.Reader) ([]Rating, error) {
	var out []Rating
	seen := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") || (line == 1 && strings.HasPrefix(text, "id\t")) {
			continue
		}
		fields := strings.SplitN(text, "\t", 3)
		if len(fields) < 2 {
			return nil, assistant.Errorf(assistant.EInvalid, "line %d: want id<TAB>score<TAB>reason", line)
		}
		id := strings.TrimSpace(fields[0])
		score, err := strconv.Atoi(strings.TrimSpace(fields[1]))
		if id == "" || err != nil || score < 1 || score > 5 {
			return nil, assistant.Errorf(assistant.EInvalid, "line %d: want id<TAB>score<TAB>reason with a score from 1 to 5", line)
		}
		if first, ok := seen[id]; ok {
			return nil, assistant.Errorf(assistant.EInvalid, "line %d: %q is rated already on line %d", line, id, first)
		}
		seen[id] = line
		rt := Rating{ID: id, Score: score}
		if len(fields) == 3 {
			rt.Reason = strings.TrimSpace(fields[2])
		}
		out = append(out, rt)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, assistant.Errorf(assistant.EInvalid, "no ratings")
	}
	return out, nil
}

// Rated are the figures that need a rater's scores. A figure that has no
// answer to be taken over (or, for Spearman, no variation) is null.
type Rated struct {
	// Rated counts the answers with a score; Unrated lists those without,
	// which no figure counts.
	Rated   int      `json:"rated"`
	Unrated []string `json:"unrated"`
	// Distribution counts the rated answers at each score, "1" to "5".
	Distribution map[string]int `json:"distribution"`
	// MeanInScope is the mean usefulness of the in-scope answers, and
	// MeanByMode the same per mode; MeanByKind is over each kind of row.
	MeanInScope *float64           `json:"mean_in_scope"`
	MeanByMode  map[string]float64 `json:"mean_by_mode"`
	MeanByKind  map[string]float64 `json:"mean_by_kind"`
	// Spearman is the rank correlation between the confidence score and
	// usefulness over the in-scope answers.
	Spearman *float64 `json:"spearman"`
	// HighPrecision is the answers at high confidence rated 4 or 5 (N) of
	// all rated answers at high (Of).
	HighPrecision Ratio `json:"high_precision"`
	// MeanMediumHigh is the mean usefulness of the answers at medium or
	// high.
	MeanMediumHigh *float64 `json:"mean_medium_high"`
	// MediumHighRated1to2 counts the answers at medium or high rated 1 or
	// 2, and MediumHighRated1 those rated 1.
	MediumHighRated1to2 int `json:"medium_high_rated_1_2"`
	MediumHighRated1    int `json:"medium_high_rated_1"`
}

// Rate takes the rated figures of a set of answers. A rating of an id that
// is not among the answers is an error: the file belongs to another set.
func Rate(answers []Answer, ratings []Rating) (Rated, error) {
	scores := make(map[string]int, len(ratings))
	known := answerIDs(answers)
	for _, r := range ratings {
		if !known[r.ID] {
			return Rated{}, assistant.Errorf(assistant.EInvalid, "%q is rated but no answer has that id", r.ID)
		}
		scores[r.ID] = r.Score
	}
	rt := Rated{Unrated: []string{}, Distribution: map[string]int{}, MeanByMode: map[string]float64{}, MeanByKind: map[string]float64{}}
	for s := 1; s <= 5; s++ {
		rt.Distribution[strconv.Itoa(s)] = 0
	}
	var inScope, confident []float64
	var inConfidence, inUsefulness []float64
	byMode, byKind := map[string][]float64{}, map[string][]float64{}
	high, highGood := 0, 0
	for _, a := range answers {
		s, ok := scores[a.ID]
		if !ok {
			rt.Unrated = append(rt.Unrated, a.ID)
			continue
		}
		rt.Rated++
		rt.Distribution[strconv.Itoa(s)]++
		u := float64(s)
		byKind[a.Kind] = append(byKind[a.Kind], u)
		if InScope(a.Kind) {
			inScope = append(inScope, u)
			byMode[a.Mode] = append(byMode[a.Mode], u)
			inConfidence, inUsefulness = append(inConfidence, a.Score), append(inUsefulness, u)
		}
		if a.Level == "high" {
			high++
			if s >= 4 {
				highGood++
			}
		}
		if a.Confident() {
			confident = append(confident, u)
			if s <= 2 {
				rt.MediumHighRated1to2++
			}
			if s == 1 {
				rt.MediumHighRated1++
			}
		}
	}
	rt.MeanInScope, rt.MeanMediumHigh = mean(inScope), mean(confident)
	for mode, us := range byMode {
		rt.MeanByMode[mode] = *mean(us)
	}
	for kind, us := range byKind {
		rt.MeanByKind[kind] = *mean(us)
	}
	rt.Spearman = Spearman(inConfidence, inUsefulness)
	rt.HighPrecision = ratio(highGood, high)
	return rt, nil
}

// answerIDs is the set of the answers' ids, against which a file of
// ratings or labels is checked to belong to the set.
func answerIDs(answers []Answer) map[string]bool {
	known := make(map[string]bool, len(answers))
	for _, a := range answers {
		known[a.ID] = true
	}
	return known
}

// mean is the mean of xs rounded to four places, nil when there is none.
func mean(xs []float64) *float64 {
	if len(xs) == 0 {
		return nil
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	m := round4(sum / float64(len(xs)))
	return &m
}

// Spearman returns the Spearman rank correlation of two paired samples:
// the Pearson correlation of their ranks, tied values sharing the average
// of the ranks they span. It is nil when it is undefined: fewer than two
// pairs, samples of different lengths, or a sample whose values are all
// equal.
func Spearman(xs, ys []float64) *float64 {
	if len(xs) != len(ys) || len(xs) < 2 {
		return nil
	}
	rx, ry := ranks(xs), ranks(ys)
	mx := float64(len(rx)+1) / 2 // the mean of ranks 1..n, ties averaged or not
	my := mx
	var sxy, sxx, syy float64
	for i := range rx {
		dx, dy := rx[i]-mx, ry[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return nil
	}
	rho := round4(sxy / math.Sqrt(sxx*syy))
	return &rho
}

// ranks returns the rank of each value of xs, from 1, ties averaged.
func ranks(xs []float64) []float64 {
	order := make([]int, len(xs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(xs[a], xs[b]) })
	out := make([]float64, len(xs))
	for start := 0; start < len(order); {
		end := start + 1
		for end < len(order) && xs[order[end]] == xs[order[start]] {
			end++
		}
		// Positions start..end-1 hold ranks start+1..end: their mean.
		avg := float64(start+1+end) / 2
		for _, i := range order[start:end] {
			out[i] = avg
		}
		start = end
	}
	return out
}
