package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// generated runs a verifygen command that writes to -out and returns what
// it wrote.
func generated(t *testing.T, args ...string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	if err := run(append(args, "-out", out)); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// checkCurrent fails when the committed file differs from what the
// generator writes now: run `go generate ./internal/verify`.
func checkCurrent(t *testing.T, committed string, got []byte) {
	t.Helper()
	want, err := os.ReadFile(committed)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s is not what the generator writes now; run go generate ./internal/verify", committed)
	}
}

// TestCorpusSetIsCurrent: the corpus dev set matches the embedded corpus.
func TestCorpusSetIsCurrent(t *testing.T) {
	checkCurrent(t, "../../eval/claims_corpus.jsonl", generated(t, "corpus"))
}

// TestWordFormsAreCurrent: the lexicon matches WordNet (where Debian's
// wordnet-base is installed).
func TestWordFormsAreCurrent(t *testing.T) {
	if _, err := os.Stat("/usr/share/wordnet/data.verb"); err != nil {
		t.Skip("WordNet is not installed (apt-get install wordnet-base)")
	}
	checkCurrent(t, "../../internal/verify/wordforms.txt",
		generated(t, "wordforms", "-wordnet", "/usr/share/wordnet", "-rank", "../../internal/verify/wordrank.txt.gz"))
}

// TestModelIsCurrent: the shipped weights are the fit of the current
// features on the WiCE development set (where shared/ is beside the
// repository).
func TestModelIsCurrent(t *testing.T) {
	dev := "../../../shared/eval/wice/wice_claim_dev.jsonl"
	if _, err := os.Stat(dev); err != nil {
		t.Skip("the WiCE development set is not beside the repository")
	}
	if testing.Short() {
		t.Skip("fitting takes seconds")
	}
	checkCurrent(t, "../../internal/verify/model.go", generated(t, "fit", "-dev", dev))
}
