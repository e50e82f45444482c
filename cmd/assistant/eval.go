package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/config"
	"github.com/constraintlab/assistant/internal/diagnose"
	"github.com/constraintlab/assistant/internal/knowledge"
)

// evalSubcommands lists the evaluations of `assistant eval` (D26). Adding
// one (archetypes, verify) is one entry here.
func evalSubcommands() []command {
	return []command{
		{"retrieval", "score retrieval on a TSV of query<TAB>expected_any: hit@1, hit@5, MRR@10", evalRetrieval},
		{"archetypes", "score free-text archetype matching on a TSV of vertical<TAB>archetype<TAB>free_text: top1, top3", evalArchetypes},
		{"verify", "score claim verification on a WiCE or in-domain JSONL file", evalVerify},
		{"chat", "run a blind set of chat turns and measure the answers (docs/evaluation.md), or the older in|out scope check", evalChat},
	}
}

// evalCommand dispatches `assistant eval <subcommand>`.
func evalCommand(ctx context.Context, e env, args []string) error {
	return dispatch(ctx, e, "eval", evalSubcommands(), args)
}

// openKnowledge opens the configured store with the embedded corpus
// synchronised into it, as serve does, for the evaluations. The caller
// closes it.
func openKnowledge(ctx context.Context, cfg *config.Config, e env) (*backend, error) {
	db, err := openStore(ctx, cfg, e.now)
	if err != nil {
		return nil, err
	}
	if _, err := knowledge.LoadEmbedded(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// openDiagnoser loads the embedded catalog and the constraint diagnosis
// over the store's knowledge.
func openDiagnoser(ctx context.Context, db assistant.KnowledgeStore) (*diagnose.Diagnoser, error) {
	cat, err := diagnose.LoadCatalog()
	if err != nil {
		return nil, err
	}
	return diagnose.Load(ctx, cat, db)
}

// retrievalCutoff is the rank beyond which a hit no longer counts towards
// the mean reciprocal rank (MRR@10).
const retrievalCutoff = 10

// retrievalScores is the JSON form of `eval retrieval` (D26).
type retrievalScores struct {
	N      int     `json:"n"`
	HitAt1 float64 `json:"hit_at_1"`
	HitAt5 float64 `json:"hit_at_5"`
	MRR    float64 `json:"mrr"`
}

// retrievalCase is one row of a retrieval evaluation file.
type retrievalCase struct {
	Query    string
	Expected []assistant.Token
}

func evalRetrieval(ctx context.Context, e env, args []string) error {
	fs := commandFlags(e, "eval retrieval --file F [--json]",
		"Scores the retriever (the one /search and the chat use) on a TSV file of\nquery<TAB>expected_any with a header row; expected_any lists citation tokens\njoined by |. A query is a hit at k when any expected token is among the first\nk results. The knowledge base is the configured database, with the embedded\ncorpus synchronised first as serve does.")
	file := fs.String("file", "", "the TSV file to score (required)")
	asJSON := fs.Bool("json", false, "print {n, hit_at_1, hit_at_5, mrr} as JSON")
	cfg, err := parseConfig(e, fs, args, storeSettings)
	if err != nil {
		return err
	}
	if *file == "" {
		return fmt.Errorf("%w: eval retrieval: --file is required", errUsage)
	}
	cases, err := readRetrievalCases(*file)
	if err != nil {
		return err
	}
	db, err := openKnowledge(ctx, cfg, e)
	if err != nil {
		return err
	}
	defer db.Close()

	var scores retrievalScores
	var misses []string
	for _, c := range cases {
		hits, err := db.retriever.Search(ctx, assistant.SearchQuery{Text: c.Query, Limit: retrievalCutoff})
		if err != nil {
			return fmt.Errorf("searching %q: %w", c.Query, err)
		}
		rank := 0
		for i, h := range hits {
			if slices.Contains(c.Expected, h.Entity.Token()) {
				rank = i + 1
				break
			}
		}
		scores.N++
		switch {
		case rank == 1:
			scores.HitAt1++
			fallthrough
		case rank >= 1 && rank <= 5:
			scores.HitAt5++
		}
		if rank > 0 {
			scores.MRR += 1 / float64(rank)
		}
		if rank == 0 || rank > 5 {
			top := make([]string, 0, 3)
			for i := 0; i < len(hits) && i < 3; i++ {
				top = append(top, hits[i].Entity.Token().String())
			}
			misses = append(misses, fmt.Sprintf("rank %d\t%s\ttop: %s", rank, c.Query, strings.Join(top, ", ")))
		}
	}
	if scores.N > 0 {
		n := float64(scores.N)
		scores.HitAt1, scores.HitAt5, scores.MRR = round4(scores.HitAt1/n), round4(scores.HitAt5/n), round4(scores.MRR/n)
	}
	if *asJSON {
		return json.NewEncoder(e.stdout).Encode(scores)
	}
	fmt.Fprintf(e.stdout, "n=%d hit@1=%.4f hit@5=%.4f mrr@%d=%.4f\n", scores.N, scores.HitAt1, scores.HitAt5, retrievalCutoff, scores.MRR)
	if len(misses) > 0 {
		fmt.Fprintf(e.stdout, "\nnot in the top 5 (rank 0: not in the top %d):\n", retrievalCutoff)
		for _, m := range misses {
			fmt.Fprintln(e.stdout, m)
		}
	}
	return nil
}

// readRetrievalCases reads a query<TAB>expected_any file, skipping its
// header row. A malformed row is an error naming the file and line.
func readRetrievalCases(path string) ([]retrievalCase, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseRetrievalCases(path, f)
}

func parseRetrievalCases(name string, r io.Reader) ([]retrievalCase, error) {
	var cases []retrievalCase
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if line == 1 || strings.TrimSpace(text) == "" {
			continue // the header row, or a blank line
		}
		query, expected, ok := strings.Cut(text, "\t")
		if !ok || strings.TrimSpace(query) == "" {
			return nil, assistant.Errorf(assistant.EInvalid, "%s:%d: want query<TAB>expected_any", name, line)
		}
		c := retrievalCase{Query: query}
		for _, s := range strings.Split(expected, "|") {
			t, err := assistant.ParseToken(strings.TrimSpace(s))
			if err != nil {
				return nil, assistant.Errorf(assistant.EInvalid, "%s:%d: %s", name, line, assistant.ErrorMessage(err))
			}
			c.Expected = append(c.Expected, t)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(cases) == 0 {
		return nil, assistant.Errorf(assistant.EInvalid, "%s: no queries after the header row", name)
	}
	return cases, nil
}

func round4(f float64) float64 { return float64(int64(f*1e4+0.5)) / 1e4 }

// dispatch runs the subcommand of group named by args[0], or prints the
// group's usage for --help.
func dispatch(ctx context.Context, e env, group string, table []command, args []string) error {
	usage := func(w io.Writer) {
		fmt.Fprintf(w, "Usage: assistant %s <subcommand> [flags]\n\nSubcommands:\n", group)
		for _, s := range table {
			fmt.Fprintf(w, "  %-10s %s\n", s.name, s.summary)
		}
		fmt.Fprintf(w, "\nRun 'assistant %s <subcommand> --help' for its flags.\n", group)
	}
	if len(args) == 0 {
		usage(e.stderr)
		return fmt.Errorf("%w: %s needs a subcommand", errUsage, group)
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(e.stdout)
		return flag.ErrHelp
	}
	for _, s := range table {
		if s.name == args[0] {
			return s.run(ctx, e, args[1:])
		}
	}
	usage(e.stderr)
	return fmt.Errorf("%w: unknown subcommand %q of %s", errUsage, args[0], group)
}
