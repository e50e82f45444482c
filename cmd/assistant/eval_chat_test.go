package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/assistant"
)

// TestEvalChat: `eval chat` runs each row as a builtin chat turn, counts
// declined out-of-scope and answered in-scope rows, and
// lists the rows it got wrong with --failures.
func TestEvalChat(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.tsv")
	tsv := "out\toperator\twhat rhymes with purple\n" +
		"in\toperator\tOur bindery is the slowest step and finished print jobs wait there for days\n" +
		"# a comment\n" +
		"in\tsuccess\tplease tell me a limerick about ducks\n"
	if err := os.WriteFile(file, []byte(tsv), 0o644); err != nil {
		t.Fatal(err)
	}
	e, out, _ := testEnv(t, nil)
	if err := evalCommand(context.Background(), e, []string{"chat", "--file", file, "--json", "--failures"}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		N, Out, In  int
		DeclinedOut int `json:"declined_out"`
		AnsweredIn  int `json:"answered_in"`
		Failures    []struct {
			Case struct{ Question string }
		}
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if got.N != 3 || got.Out != 1 || got.In != 2 || got.DeclinedOut != 1 || got.AnsweredIn != 1 {
		t.Errorf("report %+v", got)
	}
	if len(got.Failures) != 1 || !strings.Contains(got.Failures[0].Case.Question, "limerick") {
		t.Errorf("failures %+v", got.Failures)
	}

	bad := filepath.Join(t.TempDir(), "bad.tsv")
	os.WriteFile(bad, []byte("maybe\toperator\thello\n"), 0o644)
	e, _, _ = testEnv(t, nil)
	if err := evalCommand(context.Background(), e, []string{"chat", "--file", bad}); assistant.ErrorCode(err) != assistant.EInvalid && !errors.Is(err, errUsage) {
		t.Errorf("a malformed row: %v", err)
	}
}
