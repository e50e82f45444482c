package verify

// The generated files of the package, rewritten by `go generate
// ./internal/verify` (cmd/verifygen):
//
//   - wordforms.txt, the word-form lexicon, from WordNet 3.0's derivational
//     links (needs Debian's wordnet-base in /usr/share/wordnet);
//
//go:generate go run ../../cmd/verifygen wordforms -wordnet /usr/share/wordnet -rank wordrank.txt.gz -out wordforms.txt
//
//   - ../../eval/claims_corpus.jsonl, the corpus dev set: every key idea of
//     the embedded corpus cited to its entity (expect verified), reversed
//     by rule and with a wrong number (expect not verified); `assistant
//     eval verify --file eval/claims_corpus.jsonl` reports it by kind.
//
//go:generate go run ../../cmd/verifygen corpus -out ../../eval/claims_corpus.jsonl
//
//   - model.go, the scorer's weights, refit on the WiCE development set
//     with the features the model already uses (change them with
//     -features; the fit prints the cross-validated change of each);
//
//go:generate go run ../../cmd/verifygen fit -dev ../../../shared/eval/wice/wice_claim_dev.jsonl -out model.go
