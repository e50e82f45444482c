// Command verifygen writes the generated files of internal/verify; `go
// generate ./internal/verify` runs it (generate.go there):
//
//	verifygen wordforms  the word-form lexicon wordforms.txt, from WordNet
//	verifygen fit        the scorer's weights model.go, fit on the WiCE dev set
//	verifygen corpus     the corpus dev set eval/claims_corpus.jsonl
//	verifygen wordrank   the word ranks wordrank.txt.gz, from an npm package (by hand: see wordrank.go)
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "verifygen:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: verifygen wordforms|fit|corpus|wordrank [flags]")
	}
	switch args[0] {
	case "wordforms":
		return wordForms(args[1:])
	case "fit":
		return fit(args[1:])
	case "wordrank":
		return wordRank(args[1:])
	case "corpus":
		return corpus(args[1:])
	}
	return fmt.Errorf("unknown command %q (wordforms, fit, corpus or wordrank)", args[0])
}
