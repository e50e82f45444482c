package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/knowledge"
	"github.com/constraintlab/assistant/internal/verify"
)

// evalVerify scores the claim verifier (D26): `assistant eval verify --file
// F [--json] [--threshold T]`. A WiCE-format file (claim, evidence[],
// label) reports {n, balanced_accuracy, threshold}; an in-domain file
// (text, expect) is checked against the knowledge base and reports
// {n, accuracy}.
func evalVerify(ctx context.Context, e env, args []string) error {
	fs := commandFlags(e, "eval verify --file F [--json] [--threshold T]",
		"Scores the claim verifier that produces the chat's confidence verdicts. A WiCE-format\n"+
			"JSONL file (claim, evidence[], label; supported counts as verified) reports balanced\n"+
			"accuracy at the threshold. An in-domain JSONL file (text, expect: verified|not_verified)\n"+
			"is checked against the entities its claims cite and reports accuracy.")
	file := fs.String("file", "", "the JSONL file to score (required)")
	asJSON := fs.Bool("json", false, "print the figures as one JSON object")
	threshold := fs.Float64("threshold", verify.DefaultThreshold, "passage coverage needed for verified, 0 to 1")
	tune := fs.Bool("tune", false, "WiCE only: report the threshold with the best balanced accuracy (for development sets, never for reporting)")
	cfg, err := parseConfig(e, fs, args)
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
	switch {
	case probe["claim"] != nil && probe["evidence"] != nil:
		rows, err := verify.ReadJSONL[verify.WiCERow](bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("%s: %w", *file, err)
		}
		if *tune {
			result = verify.TuneWiCE(rows)
		} else {
			result = verify.EvaluateWiCE(rows, *threshold)
		}
	case probe["text"] != nil && probe["expect"] != nil:
		rows, err := verify.ReadJSONL[verify.InDomainRow](bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("%s: %w", *file, err)
		}
		db, err := openStore(ctx, cfg, e.now)
		if err != nil {
			return err
		}
		defer db.Close()
		if _, err := knowledge.LoadEmbedded(ctx, db); err != nil {
			return err
		}
		var lookupErr error
		checker := &verify.Checker{Threshold: *threshold}
		result = checker.EvaluateInDomain(rows, func(tokens []assistant.Token) map[assistant.Token]assistant.Entity {
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
		return json.NewEncoder(e.stdout).Encode(result)
	}
	b, _ := json.MarshalIndent(result, "", "  ")
	fmt.Fprintln(e.stdout, string(b))
	return nil
}
