package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/answereval"
	"github.com/constraintlab/assistant/internal/persona"
	"github.com/constraintlab/assistant/internal/testrace"
)

// TestEvalSetsAnswersAreCheckableAndWhole runs every question of every
// chat set under eval/ (the blind sets as they are, the older scope sets
// turned into blind rows) through the builtin and holds its answers to
// two promises: at least 95% of the sentences that cite a token are
// checkable on that token's card as /resolve returns it, and no answer
// has an empty section, an empty quote or a bare bullet, or only warnings
// (pitfall sections) to say.
func TestEvalSetsAnswersAreCheckableAndWhole(t *testing.T) {
	if testrace.Enabled {
		t.Skip("sequential turns over every eval set (about 1,400): run by make test, nothing for the race detector to find")
	}
	sets, err := filepath.Glob(filepath.Join("..", "..", "eval", "*.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	var chatSets int
	for _, set := range sets {
		base := filepath.Base(set)
		if !strings.HasPrefix(base, "chat_") && !strings.HasPrefix(base, "blind_") || strings.Contains(base, ".ratings") || strings.Contains(base, ".labels") {
			continue // retrieval and other sets, ratings, labels
		}
		chatSets++
		t.Run(base, func(t *testing.T) {
			file := set
			if strings.HasPrefix(base, "chat_") {
				file = asBlindSet(t, set)
			}
			e, out, _ := testEnv(t, nil)
			answers := filepath.Join(t.TempDir(), "answers.jsonl")
			if err := evalCommand(context.Background(), e, []string{"chat", "--file", file, "--json", "--answers", answers}); err != nil {
				t.Fatal(err)
			}
			var report struct{ Figures answereval.Figures }
			if err := json.Unmarshal(out.Bytes(), &report); err != nil {
				t.Fatalf("output %q: %v", out, err)
			}
			got := report.Figures
			if got.Hover.Of == 0 || got.Hover.Share < 0.95 {
				t.Errorf("%d of %d cited sentences checkable on their cards; unchecked: %+v", got.Hover.N, got.Hover.Of, got.Hover.Unchecked)
			}
			if got.Broken.N > 0 {
				t.Errorf("%d broken answers: %+v", got.Broken.N, got.BrokenAnswers)
			}
			for _, id := range warningsOnly(t, answers) {
				t.Errorf("%s: the answer's only sections are warnings", id)
			}
		})
	}
	if chatSets < 4 {
		t.Fatalf("found %d chat sets under eval/", chatSets)
	}
}

// asBlindSet writes an in|out<TAB>mode<TAB>question file as a blind set.
func asBlindSet(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	b.WriteString(answereval.SetHeader + "\n")
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.SplitN(line, "\t", 3)
		if len(parts) != 3 {
			t.Fatalf("%s: %q", path, line)
		}
		n++
		fmt.Fprintf(&b, "r%d\t%s\t%s\t\t\t%s\t\n", n, parts[0], parts[1], parts[2])
	}
	out := filepath.Join(t.TempDir(), "set.tsv")
	if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// warningsOnly lists the answers of an --answers file (read as --from
// reads it, readAnswers) whose every section is one of their persona's
// pitfall sections: a list of what not to do, with nothing found or to do,
// reads as a broken answer.
func warningsOnly(t *testing.T, path string) []string {
	t.Helper()
	personas, err := persona.Load()
	if err != nil {
		t.Fatal(err)
	}
	warnings := map[string]bool{} // "mode\x00heading" of each persona's pitfall sections
	for mode, p := range personas {
		for _, s := range p.Sections {
			if slices.Equal(s.Fill, []string{"pitfalls"}) {
				warnings[mode+"\x00"+s.Heading] = true
			}
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	records, err := readAnswers(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range records {
		if a.Response == nil {
			continue // a failed turn has no sections
		}
		sections, warned := 0, 0
		for l := range strings.Lines(a.Response.Response) {
			if h, ok := strings.CutPrefix(strings.TrimSpace(l), "## "); ok {
				sections++
				if warnings[a.Mode+"\x00"+h] {
					warned++
				}
			}
		}
		if sections > 0 && warned == sections {
			out = append(out, a.ID)
		}
	}
	return out
}
