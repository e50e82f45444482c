package verify

// The generated files of the package, rewritten by `go generate
// ./internal/verify` (cmd/verifygen):
//
//   - wordforms.txt, the word-form lexicon, from WordNet 3.0's derivational
//     links (needs Debian's wordnet-base in /usr/share/wordnet);
//
//go:generate go run ../../cmd/verifygen wordforms -wordnet /usr/share/wordnet -rank wordrank.txt.gz -out wordforms.txt
