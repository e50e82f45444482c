package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/verify"
)

// evalVerify scores the claim verifier (D26): `assistant eval verify --file
// F [--json] [--threshold T] [--failures]`. A WiCE-format file (claim,
// evidence[], label) reports {n, balanced_accuracy, threshold}; an
// in-domain file (text, expect) is checked against the knowledge base and
// reports {n, accuracy}. --failures adds the rows it got wrong.
func evalVerify(ctx context.Context, e env, args []string) error {
	fs := commandFlags(e, "eval verify --file F [--json] [--threshold T] [--failures]",
		"Scores the claim verifier that produces the chat's confidence verdicts. A WiCE-format\n"+
			"JSONL file (claim, evidence[], label; supported counts as verified) reports balanced\n"+
			"accuracy at the threshold. An in-domain JSONL file (text, expect: verified|not_verified)\n"+
			"is checked against the entities its claims cite and reports accuracy.\n\n"+
			"With --failures, the rows it got wrong follow the figures, in file order: with --json one\n"+
			"JSON object per line, {\"claim\", \"expected\", \"got\", \"score\"} (expected and got are\n"+
			"verified or not_verified; for WiCE expected also names the label, and score is the claim's\n"+
			"probability of support; in-domain, claim is the row's text and score the answer's\n"+
			"confidence score); without --json one tab-separated line per row.")
	file := fs.String("file", "", "the JSONL file to score (required)")
	asJSON := fs.Bool("json", false, "print the figures as one JSON object")
	threshold := fs.Float64("threshold", verify.DefaultThreshold, "probability of support a claim needs to be verified, 0 to 1")
	showFailures := fs.Bool("failures", false, "also print the rows it got wrong (claim, expected, got, score) after the figures")
	tune := fs.Bool("tune", false, "WiCE only: report the threshold with the best balanced accuracy (for development sets, never for reporting)")
	cfg, err := parseConfig(e, fs, args, storeSettings)
	if err != nil {
		return err
	}
	if *file == "" {
		return fmt.Errorf("%w: eval verify: --file is required", errUsage)
	}
	if *threshold < 0 || *threshold > 1 {
		return fmt.Errorf("%w: eval verify: --threshold must be between 0 and 1", errUsage)
	}
	data, err := os.ReadFile(*file)
	if err != nil {
		return err
	}
	var probe map[string]json.RawMessage
	first, _, _ := bytes.Cut(bytes.TrimSpace(data), []byte("\n"))
	if err := json.Unmarshal(first, &probe); err != nil {
		return fmt.Errorf("%s: line 1 is not a JSON object: %w", *file, err)
	}
	var result any
	var failures []verify.Failure
	switch {
	case probe["claim"] != nil && probe["evidence"] != nil:
		rows, err := verify.ReadJSONL[verify.WiCERow](bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("%s: %w", *file, err)
		}
		if *tune {
			result = verify.TuneWiCE(rows)
		} else {
			result, failures = verify.EvaluateWiCEFailures(rows, *threshold)
		}
	case probe["text"] != nil && probe["expect"] != nil:
		rows, err := verify.ReadJSONL[verify.InDomainRow](bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("%s: %w", *file, err)
		}
		db, err := openKnowledge(ctx, cfg, e)
		if err != nil {
			return err
		}
		defer db.Close()
		var lookupErr error
		checker := &verify.Checker{Threshold: *threshold}
		result, failures = checker.EvaluateInDomainFailures(rows, func(tokens []assistant.Token) map[assistant.Token]assistant.Entity {
			m, err := db.Entities(ctx, tokens)
			if err != nil && lookupErr == nil {
				lookupErr = err
			}
			return m
		})
		if lookupErr != nil {
			return lookupErr
		}
	default:
		return fmt.Errorf("%s: rows must have claim and evidence (WiCE) or text and expect (in-domain)", *file)
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		if err := enc.Encode(result); err != nil {
			return err
		}
		if *showFailures {
			for _, f := range failures {
				if err := enc.Encode(f); err != nil {
					return err
				}
			}
		}
		return nil
	}
	b, _ := json.MarshalIndent(result, "", "  ")
	fmt.Fprintln(e.stdout, string(b))
	if *showFailures && len(failures) > 0 {
		fmt.Fprintf(e.stdout, "\n%d rows wrong (expected, got, score, claim):\n", len(failures))
		for _, f := range failures {
			fmt.Fprintf(e.stdout, "%s\t%s\t%.3f\t%s\n", f.Expected, f.Got, f.Score, f.Claim)
		}
	}
	return nil
}
