package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/testrace"
)

// testEnv returns an env with a fresh data directory, plus its stdout and
// stderr.
func testEnv(t *testing.T, vars map[string]string) (env, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	all := map[string]string{"ASSISTANT_DATA_DIR": t.TempDir()}
	for k, v := range vars {
		all[k] = v
	}
	var stdout, stderr bytes.Buffer
	return env{
		getenv: func(k string) string { return all[k] },
		stdin:  strings.NewReader(""),
		stdout: &stdout,
		stderr: &stderr,
		now:    func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) },
	}, &stdout, &stderr
}

func evalRetrievalJSON(t *testing.T, file string) retrievalScores {
	t.Helper()
	e, out, _ := testEnv(t, nil)
	if err := evalCommand(context.Background(), e, []string{"retrieval", "--file", file, "--json"}); err != nil {
		t.Fatal(err)
	}
	var got map[string]float64
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if len(got) != 4 {
		t.Errorf("keys of %v, want exactly n, hit_at_1, hit_at_5, mrr", got)
	}
	return retrievalScores{N: int(got["n"]), HitAt1: got["hit_at_1"], HitAt5: got["hit_at_5"], MRR: got["mrr"]}
}

func TestEvalRetrievalScores(t *testing.T) {
	file := filepath.Join(t.TempDir(), "r.tsv")
	tsv := "query\texpected_any\n" +
		"identify the constraint, exploit it, subordinate everything else\tframework:theory-of-constraints\n" +
		"\n" +
		"zzqx nothing matches this\tframework:okrs|paper:little-1961-queuing-formula\n"
	if err := os.WriteFile(file, []byte(tsv), 0o644); err != nil {
		t.Fatal(err)
	}
	got := evalRetrievalJSON(t, file)
	if want := (retrievalScores{N: 2, HitAt1: 0.5, HitAt5: 0.5, MRR: 0.5}); got != want {
		t.Errorf("scores %+v, want %+v", got, want)
	}

	for name, bad := range map[string]string{
		"no tab":    "query\texpected_any\njust a query\n",
		"bad token": "query\texpected_any\nq\tframework:Not A Slug\n",
		"no rows":   "query\texpected_any\n",
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(file, []byte(bad), 0o644); err != nil {
				t.Fatal(err)
			}
			e, _, _ := testEnv(t, nil)
			if err := evalCommand(context.Background(), e, []string{"retrieval", "--file", file}); err == nil {
				t.Error("malformed file accepted")
			}
		})
	}
}

// TestEvalRetrievalBars holds retrieval to the bars of the knowledge-base
// issue on the shared development sets, when they are present.
func TestEvalRetrievalBars(t *testing.T) {
	dir := os.Getenv("ASSISTANT_EVAL_DIR")
	if dir == "" {
		dir = "/work/shared/eval"
	}
	for _, c := range []struct {
		file        string
		hit5, mrr   float64
		description string
	}{
		{"retrieval_dev.tsv", 0.95, 0, "paraphrases of an entity's description"},
		{"retrieval_dev_hard.tsv", 0.85, 0.6, "situations in owners' words"},
	} {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join(dir, c.file)
			if _, err := os.Stat(path); err != nil {
				t.Skipf("%s not present (set ASSISTANT_EVAL_DIR)", path)
			}
			got := evalRetrievalJSON(t, path)
			t.Logf("%s: %+v", c.file, got)
			if got.HitAt5 < c.hit5 || got.MRR < c.mrr {
				t.Errorf("%s (%s): hit@5 %.3f, MRR %.3f; want hit@5 >= %.2f, MRR >= %.2f", c.file, c.description, got.HitAt5, got.MRR, c.hit5, c.mrr)
			}
		})
	}
}

// TestNewEntitiesAreFound: each entity added in a content batch for the
// personas' classes of question is in the top 5 of the retriever for
// situation-worded queries of its class (two to four per entity, written
// for the entity's class, not copied from any evaluation set). Each batch,
// or part of one, keeps its queries in eval/retrieval_new_entities*.tsv;
// the map gives each file's number of queries, so a file cut short fails.
func TestNewEntitiesAreFound(t *testing.T) {
	if testrace.Enabled {
		t.Skip("sequential searches over every batch's queries, a fresh database each: run by make test, nothing for the race detector to find")
	}
	queries := map[string]int{
		"retrieval_new_entities.tsv":     22,
		"retrieval_new_entities_2.tsv":   14,
		"retrieval_new_entities_3.tsv":   30,
		"retrieval_new_entities_4.tsv":   46,
		"retrieval_new_entities_5.tsv":   39,
		"retrieval_new_entities_6a.tsv":  24,
		"retrieval_new_entities_6b.tsv":  24,
		"retrieval_new_entities_7a.tsv":  21,
		"retrieval_new_entities_7b.tsv":  21,
		"retrieval_new_entities_7c.tsv":  21,
		"retrieval_new_entities_8a.tsv":  15,
		"retrieval_new_entities_8b.tsv":  15,
		"retrieval_new_entities_8c.tsv":  15,
		"retrieval_new_entities_10a.tsv": 16,
		"retrieval_new_entities_10b.tsv": 16,
		"retrieval_new_entities_11.tsv":  32,
		"retrieval_new_entities_12.tsv":  24,
		"retrieval_new_entities_13.tsv":  9,
		"retrieval_new_entities_14.tsv":  12,
		"retrieval_new_entities_15.tsv":  3,
		"retrieval_new_entities_16.tsv":  9,
		"retrieval_new_entities_17.tsv":  3,
	}
	for file, rows := range queries {
		got := evalRetrievalJSON(t, filepath.Join("..", "..", "eval", file))
		t.Logf("%s: %+v", file, got)
		if got.N < rows || got.HitAt5 < 1 {
			t.Errorf("%s: %+v; want %d queries, every query's entity in the top 5", file, got, rows)
		}
	}
}

// TestBlindLabelledRetrieval keeps the retriever from falling back on the
// hardest queries we hold: the 320 in-scope questions of eight blind sets,
// as their writers asked them, each with the entries a reader chose for it
// without seeing any answer (docs/evaluation.md, "Labelled blind
// questions"). The floors sit a little under today's figures (first
// choice: hit@5 0.644, MRR 0.490; any choice: hit@5 0.791, MRR 0.642,
// since bare numbers are no longer searched; 0.625, 0.464, 0.784 and
// 0.626 before that; 0.631, 0.476, 0.788 and 0.636 before the twelfth batch's six cards,
// which no reader could choose either; 0.634, 0.492, 0.794 and 0.660
// before the eleventh batch's eight cards,
// which no reader could choose, outranked some chosen entries: the floors
// of the MRR were lowered by 0.02 with them;
// before long queries read the entities' situations, 0.584, 0.453, 0.756
// and 0.608): a change that lowers them should say why.
func TestBlindLabelledRetrieval(t *testing.T) {
	for _, c := range []struct {
		file      string
		hit5, mrr float64
	}{
		{"retrieval_blind_first.tsv", 0.63, 0.47},
		{"retrieval_blind_any.tsv", 0.78, 0.63},
	} {
		got := evalRetrievalJSON(t, filepath.Join("..", "..", "eval", c.file))
		t.Logf("%s: %+v", c.file, got)
		if got.N != 320 || got.HitAt5 < c.hit5 || got.MRR < c.mrr {
			t.Errorf("%s: %+v; want 320 queries, hit@5 >= %.2f, MRR >= %.2f", c.file, got, c.hit5, c.mrr)
		}
	}
}
