package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEvalVerifyFailures(t *testing.T) {
	file := filepath.Join(t.TempDir(), "w.jsonl")
	rows := `{"claim": "The library holds over 260,000 volumes.", "evidence": ["The library holds over 260,000 volumes and maps."], "label": "supported"}
{"claim": "The library holds over 90,000 volumes.", "evidence": ["The library holds over 260,000 volumes and maps."], "label": "supported"}
{"claim": "The museum opened in 1901 in Boston.", "evidence": ["Weather in Paris is mild."], "label": "not_supported"}
`
	if err := os.WriteFile(file, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	e, out, _ := testEnv(t, nil)
	if err := evalVerify(context.Background(), e, []string{"--file", file, "--json", "--failures"}); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) != 2 {
		t.Fatalf("want the figures and one failure, got %q", lines)
	}
	var head map[string]float64
	if err := json.Unmarshal([]byte(lines[0]), &head); err != nil || head["n"] != 3 || len(head) != 3 {
		t.Errorf("figures line %q: %v", lines[0], err)
	}
	var f struct {
		Claim, Expected, Got string
		Score                float64
	}
	if err := json.Unmarshal([]byte(lines[1]), &f); err != nil || !strings.Contains(f.Claim, "90,000") || f.Got != "not_verified" || !strings.HasPrefix(f.Expected, "verified") {
		t.Errorf("failure line %q: %v", lines[1], err)
	}
	// Without --failures the output is the figures alone.
	e, out, _ = testEnv(t, nil)
	if err := evalVerify(context.Background(), e, []string{"--file", file, "--json"}); err != nil {
		t.Fatal(err)
	}
	if strings.Count(strings.TrimSpace(out.String()), "\n") != 0 {
		t.Errorf("output without --failures: %q", out)
	}
}
