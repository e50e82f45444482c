package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeTSV(t *testing.T, content string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "a.tsv")
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestEvalArchetypesJSON(t *testing.T) {
	file := writeTSV(t, "vertical\tarchetype\tfree_text\n"+
		"saas\tsupport-load\tThe support inbox is overflowing and tickets wait days for an answer.\n"+
		"\n"+
		"manufacturing\tdelivery-capacity\tOrders queue for weeks in front of our one bottleneck machine.\n")
	e, out, _ := testEnv(t, nil)
	if err := evalArchetypes(context.Background(), e, []string{"--file", file, "--json"}); err != nil {
		t.Fatal(err)
	}
	var got map[string]float64
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	want := map[string]float64{"n": 2, "top1": 1, "top3": 1}
	if len(got) != len(want) {
		t.Errorf("keys of %v, want exactly n, top1, top3", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}

func TestEvalArchetypesText(t *testing.T) {
	file := writeTSV(t, "vertical\tarchetype\tfree_text\nretail\tcash-flow\tThe support inbox is overflowing and tickets wait days.\n")
	e, out, _ := testEnv(t, nil)
	if err := evalArchetypes(context.Background(), e, []string{"--file", file}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"top1  0.0000", "high", "medium", "low", "misses", "cash-flow\tsupport-load"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestEvalArchetypesErrors(t *testing.T) {
	tests := []struct {
		name  string
		args  func(t *testing.T) []string
		usage bool
		msg   string
	}{
		{"no file flag", func(*testing.T) []string { return nil }, true, "--file is required"},
		{"missing file", func(*testing.T) []string { return []string{"--file", "/nonexistent/a.tsv"} }, false, "no such file"},
		{"unknown vertical", func(t *testing.T) []string {
			return []string{"--file", writeTSV(t, "h\th\th\nspace\tactivation\tx\n")}
		}, false, `line 2: unknown vertical "space"`},
		{"unknown archetype", func(t *testing.T) []string {
			return []string{"--file", writeTSV(t, "h\th\th\nsaas\tgrowth\tx\n")}
		}, false, `unknown archetype "growth"`},
		{"two columns", func(t *testing.T) []string {
			return []string{"--file", writeTSV(t, "h\th\th\nsaas\tactivation\n")}
		}, false, "line 2"},
		{"header only", func(t *testing.T) []string { return []string{"--file", writeTSV(t, "h\th\th\n")} }, false, "no cases"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _, _ := testEnv(t, nil)
			err := evalArchetypes(context.Background(), e, tt.args(t))
			if err == nil {
				t.Fatal("no error")
			}
			if errors.Is(err, errUsage) != tt.usage || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %v (usage %v), want one containing %q (usage %v)", err, errors.Is(err, errUsage), tt.msg, tt.usage)
			}
		})
	}
}
