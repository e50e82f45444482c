package diagnose

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/constraintlab/assistant/internal/assistant"
)

// ArchetypeCase is one labelled description: vertical<TAB>archetype<TAB>free_text.
type ArchetypeCase struct {
	Vertical, Archetype, Text string
}

// ReadArchetypeCases reads a TSV of vertical<TAB>archetype<TAB>free_text
// with a header row (D26). Blank lines are skipped; any other malformed
// line, or an unknown id, is an EInvalid error naming the line.
func ReadArchetypeCases(r io.Reader) ([]ArchetypeCase, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var cases []ArchetypeCase
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if line == 1 || strings.TrimSpace(text) == "" {
			continue // the header row
		}
		f := strings.SplitN(text, "\t", 3)
		if len(f) != 3 || strings.TrimSpace(f[2]) == "" {
			return nil, assistant.Errorf(assistant.EInvalid, "line %d: want vertical<TAB>archetype<TAB>free_text", line)
		}
		c := ArchetypeCase{Vertical: strings.TrimSpace(f[0]), Archetype: strings.TrimSpace(f[1]), Text: strings.TrimSpace(f[2])}
		if !assistant.IsVertical(c.Vertical) {
			return nil, assistant.Errorf(assistant.EInvalid, "line %d: unknown vertical %q", line, c.Vertical)
		}
		if !assistant.IsArchetype(c.Archetype) {
			return nil, assistant.Errorf(assistant.EInvalid, "line %d: unknown archetype %q", line, c.Archetype)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(cases) == 0 {
		return nil, assistant.Errorf(assistant.EInvalid, "no cases: want a header row and vertical<TAB>archetype<TAB>free_text lines")
	}
	return cases, nil
}

// ArchetypeReport holds the figures of an archetype evaluation. N, Top1 and
// Top3 are what `assistant eval archetypes --json` prints (D26).
type ArchetypeReport struct {
	N    int     `json:"n"`
	Top1 float64 `json:"top1"`
	Top3 float64 `json:"top3"`
	// Bands gives top-1 accuracy per confidence band, high first.
	Bands []BandReport `json:"-"`
	// Misses lists the cases whose first match was wrong.
	Misses []Miss `json:"-"`
}

// BandReport is the top-1 accuracy of the cases in one confidence band.
type BandReport struct {
	Band     string
	N        int
	Correct  int
	Accuracy float64 // NaN when N is 0
}

// Miss is a case the matcher ranked wrongly.
type Miss struct {
	Case       ArchetypeCase
	Got        string
	Confidence float64
	Rank       int // rank of the expected archetype, from 1
}

// EvaluateArchetypes diagnoses every case and reports top-1 and top-3
// accuracy and the top-1 accuracy per confidence band.
func EvaluateArchetypes(ctx context.Context, d *Diagnoser, cases []ArchetypeCase) (ArchetypeReport, error) {
	rep := ArchetypeReport{N: len(cases)}
	bands := map[string]*BandReport{}
	for _, b := range []string{"high", "medium", "low"} {
		rep.Bands = append(rep.Bands, BandReport{Band: b})
	}
	for i := range rep.Bands {
		bands[rep.Bands[i].Band] = &rep.Bands[i]
	}
	top1, top3 := 0, 0
	for _, c := range cases {
		g, err := d.Diagnose(ctx, c.Text, c.Vertical)
		if err != nil {
			return ArchetypeReport{}, fmt.Errorf("diagnosing %q: %w", c.Text, err)
		}
		rank := 0
		for i, m := range g.Matches {
			if m.ArchetypeID == c.Archetype {
				rank = i + 1
				break
			}
		}
		b := bands[g.Band()]
		b.N++
		if rank == 1 {
			top1++
			b.Correct++
		} else {
			rep.Misses = append(rep.Misses, Miss{Case: c, Got: g.Matches[0].ArchetypeID, Confidence: g.Confidence, Rank: rank})
		}
		if rank >= 1 && rank <= 3 {
			top3++
		}
	}
	if rep.N > 0 {
		rep.Top1 = round4(float64(top1) / float64(rep.N))
		rep.Top3 = round4(float64(top3) / float64(rep.N))
	}
	for i := range rep.Bands {
		b := &rep.Bands[i]
		b.Accuracy = math.NaN()
		if b.N > 0 {
			b.Accuracy = round4(float64(b.Correct) / float64(b.N))
		}
	}
	return rep, nil
}
