package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/constraintlab/assistant/internal/chat"
)

// evalChat scores the chat's scope rule (D29): `assistant eval chat --file F [--json] [--failures]`.
func evalChat(ctx context.Context, e env, args []string) error {
	fs := commandFlags(e, "eval chat --file F [--json] [--failures]",
		"Runs each question of a TSV file of expect<TAB>mode<TAB>question (expect is in or out,\n"+
			"no header row) as a chat turn with the configured model provider, and counts the\n"+
			"out-of-scope questions declined (no citation token, confidence none or low) and the\n"+
			"in-scope questions answered (citations, confidence medium or high). The turns are not\n"+
			"recorded: no usage row and no citation event. The knowledge base is the configured\n"+
			"database, with the embedded corpus synchronised first as serve does, so knowledge\n"+
			"imported with kb import counts.")
	file := fs.String("file", "", "the TSV file to score (required)")
	asJSON := fs.Bool("json", false, "print {n, declined_out, answered_in} as JSON (with the counts of out and in rows)")
	failures := fs.Bool("failures", false, "also print the rows that were not declined or answered as expected, with their answers")
	cfg, err := parseConfig(e, fs, args, chatSettings)
	if err != nil {
		return err
	}
	if *file == "" {
		return fmt.Errorf("%w: eval chat: --file is required", errUsage)
	}
	f, err := os.Open(*file)
	if err != nil {
		return err
	}
	cases, err := chat.ReadScopeCases(f)
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
	svc, err := newChatService(cfg, db, d, e.now, newLogger(e.stderr, cfg.LogLevel))
	if err != nil {
		return err
	}
	rep, err := svc.EvaluateScope(ctx, cases)
	if err != nil {
		return err
	}
	if !*failures {
		rep.Failures = nil
	}
	if *asJSON {
		return json.NewEncoder(e.stdout).Encode(rep)
	}
	fmt.Fprintf(e.stdout, "n             %d\ndeclined_out  %d of %d\nanswered_in   %d of %d\n", rep.N, rep.DeclinedOut, rep.Out, rep.AnsweredIn, rep.In)
	for _, r := range rep.Failures {
		fmt.Fprintf(e.stdout, "\n[expected %s] %s: %s\n  citations %d, confidence %s (%.3f)\n  %s\n", r.Case.Expect, r.Case.Mode, r.Case.Question,
			r.Citations, r.Level, r.Score, strings.ReplaceAll(r.Response, "\n", "\n  "))
	}
	return nil
}
