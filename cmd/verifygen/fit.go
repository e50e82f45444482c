package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/constraintlab/assistant/internal/verify"
)

// fit refits the scorer's weights on the WiCE development set and writes
// model.go (verify.Fit says how). It prints the cross-validated balanced
// accuracy of the chosen features and the change when each of them is
// left out or each other feature added. With -test it also prints each
// variant's balanced accuracy on the test set, for reporting only: the
// written weights never depend on it.
func fit(args []string) error {
	fs := flag.NewFlagSet("fit", flag.ContinueOnError)
	dev := fs.String("dev", "../../../shared/eval/wice/wice_claim_dev.jsonl", "the WiCE development set")
	test := fs.String("test", "", "a WiCE test set to report on (never used to fit)")
	features := fs.String("features", strings.Join(verify.ModelFeatures(), ","), "the features of the model, comma-separated")
	lambda := fs.Float64("l2", 1, "L2 regularisation strength")
	out := fs.String("out", "model.go", "file to write")
	if err := fs.Parse(args); err != nil {
		return err
	}
	devRows, err := readWiCE(*dev)
	if err != nil {
		return err
	}
	devX := verify.WiCEFeatures(devRows)
	var testX *verify.FeatureMatrix
	if *test != "" {
		testRows, err := readWiCE(*test)
		if err != nil {
			return err
		}
		m := verify.WiCEFeatures(testRows)
		testX = &m
	}
	chosen := strings.Split(*features, ",")
	res, err := verify.Fit(devX, verify.FitOptions{Features: chosen, Lambda: *lambda})
	if err != nil {
		return err
	}
	report := func(label string, r verify.FitResult) {
		line := fmt.Sprintf("%-28s dev CV %.4f (%+.4f)", label, r.CVBalancedAccuracy, r.CVBalancedAccuracy-res.CVBalancedAccuracy)
		if testX != nil {
			line += fmt.Sprintf("   test %.4f", r.BalancedAccuracy(*testX))
		}
		fmt.Fprintln(os.Stderr, line)
	}
	report("model: "+*features, res)
	for _, name := range verify.FeatureNames() {
		variant := slices.DeleteFunc(slices.Clone(chosen), func(s string) bool { return s == name })
		label := "without " + name
		if len(variant) == len(chosen) {
			variant, label = append(variant, name), "with "+name
		}
		if len(variant) == 0 {
			continue
		}
		r, err := verify.Fit(devX, verify.FitOptions{Features: variant, Lambda: *lambda})
		if err != nil {
			return err
		}
		report(label, r)
	}
	src, err := res.ModelSource(len(devRows))
	if err != nil {
		return err
	}
	return os.WriteFile(*out, src, 0o644)
}

func readWiCE(path string) ([]verify.WiCERow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := verify.ReadJSONL[verify.WiCERow](f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rows, nil
}
