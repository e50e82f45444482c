package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/constraintlab/assistant/internal/diagnose"
)

// evalArchetypes scores the free-text archetype matcher (D26):
// `assistant eval archetypes --file F [--json]`.
func evalArchetypes(ctx context.Context, e env, args []string) error {
	fs := commandFlags(e, "eval archetypes --file F [--json]",
		"Scores the free-text constraint matcher (the one POST /api/assistant/v1/preview and\n"+
			"the chat's diagnose_constraint use) on a TSV file of vertical<TAB>archetype<TAB>free_text\n"+
			"with a header row. top1 is the share of rows whose first match is the expected\n"+
			"archetype, top3 the share where it is among the first three. Without --json it also\n"+
			"prints the top-1 accuracy per confidence band and the rows it got wrong. The\n"+
			"knowledge base is the configured database, with the embedded corpus synchronised\n"+
			"first as serve does.")
	file := fs.String("file", "", "the TSV file to score (required)")
	asJSON := fs.Bool("json", false, "print {n, top1, top3} as JSON")
	cfg, err := parseConfig(e, fs, args, storeSettings)
	if err != nil {
		return err
	}
	if *file == "" {
		return fmt.Errorf("%w: eval archetypes: --file is required", errUsage)
	}
	f, err := os.Open(*file)
	if err != nil {
		return err
	}
	cases, err := diagnose.ReadArchetypeCases(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", *file, err)
	}
	db, err := openKnowledge(ctx, cfg, e)
	if err != nil {
		return err
	}
	defer db.Close()
	d, err := openDiagnoser(ctx, db)
	if err != nil {
		return err
	}
	rep, err := diagnose.EvaluateArchetypes(ctx, d, cases)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(e.stdout).Encode(rep)
	}
	fmt.Fprintf(e.stdout, "n     %d\ntop1  %.4f\ntop3  %.4f\n\naccuracy per confidence band (top-1):\n", rep.N, rep.Top1, rep.Top3)
	for _, b := range rep.Bands {
		acc := "-"
		if b.N > 0 {
			acc = fmt.Sprintf("%.4f", b.Accuracy)
		}
		fmt.Fprintf(e.stdout, "  %-6s %3d cases  %s\n", b.Band, b.N, acc)
	}
	if len(rep.Misses) > 0 {
		fmt.Fprintf(e.stdout, "\nmisses (expected, got, confidence, rank of expected):\n")
		for _, m := range rep.Misses {
			fmt.Fprintf(e.stdout, "  %s\t%s\t%.2f\t%d\t%s\t%s\n", m.Case.Archetype, m.Got, m.Confidence, m.Rank, m.Case.Vertical, m.Case.Text)
		}
	}
	return nil
}
