package knowledge_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/constraintlab/assistant/internal/knowledge"
)

// seedEntityFiles adds a few real entity files of the embedded corpus.
func seedEntityFiles(f *testing.F) {
	paths, _ := filepath.Glob("corpus/*/*.md")
	for i, p := range paths {
		if i%40 != 0 {
			continue
		}
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
}

// FuzzParse: the knowledge-file parser never panics or hangs, nor do the
// content rules (Validate) on whatever it accepts. (A 3-second guard turns
// a hang into a finding: Go's fuzzer has no per-input timeout. It found
// textproc.Sentences quadratic.)
func FuzzParse(f *testing.F) {
	seedEntityFiles(f)
	for _, s := range []string{
		"", "---\n", "---\n---\n", "---\ntype: framework\n---\n", "---\ntitle: [\n---\n",
		"---\r\ntype: paper\r\nslug: x\r\n---\r\n## Summary\r\n", "---\nyear: 99999999999999999999\n---\n",
		"---\n&a [*a, *a]\n---\n", "---\nkey_ideas: {a: b}\n---\n## Key ideas\n- x\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			e, err := knowledge.Parse("fuzz.md", data)
			if err != nil {
				return
			}
			_ = knowledge.Validate([]knowledge.File{{Name: "fuzz.md", Entity: e}})
		}()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			t.Fatalf("HANG on %q", data)
		}
	})
}

// FuzzParseJSONL and FuzzParseBibTeX: the other import formats never
// panic either.
func FuzzParseJSONL(f *testing.F) {
	for _, s := range []string{"", "{}\n", `{"type":"paper","slug":"x","title":"T","year":2000}` + "\n", "[\n", `{"authors":{}}`, "{\"a\":1}\r\n\n{"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if files, err := knowledge.ParseJSONL("fuzz.jsonl", data); err == nil {
			_ = knowledge.Validate(files)
		}
	})
}

func FuzzParseBibTeX(f *testing.F) {
	for _, s := range []string{"", "@article{x, title={T}, year={2000}, author={A and B}}", "@book{", "@misc{a,title=\"q\\\"\"}", "@{}}}{{{", "@article{x, title={{{{{{{{"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if files, err := knowledge.ParseBibTeX("fuzz.bib", data); err == nil {
			_ = knowledge.Validate(files)
		}
	})
}

// FuzzQueryTerms: the search sanitizer lets through only lowercase words of
// letters and digits, at most MaxQueryTerms of them, and its analysis
// (synonyms and associations) adds nothing that could be FTS5 syntax.
func FuzzQueryTerms(f *testing.F) {
	for _, s := range []string{
		"theory of constraints", `"quoted" AND NOT x*`, "NEAR(a b) OR (c)", "ÄÖÜ straße İstanbul", "a:b -c +d ^e",
		"", strings.Repeat("bottleneck ", 100), "\x00\xff", "col:title MATCH x", "日本語のテキスト",
	} {
		f.Add(s)
	}
	voc := knowledge.DefaultVocabulary()
	f.Fuzz(func(t *testing.T, s string) {
		terms := knowledge.QueryTerms(s)
		if len(terms) > knowledge.MaxQueryTerms {
			t.Fatalf("%d terms", len(terms))
		}
		for _, term := range terms {
			if term == "" {
				t.Fatalf("an empty term from %q", s)
			}
			for _, r := range term {
				if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mn, r) {
					t.Fatalf("term %q from %q has %q", term, s, r)
				}
			}
		}
		for _, wt := range voc.Analyze(s) {
			if wt.Text == "" || strings.ContainsAny(wt.Text, "\"*():^+-\x00") {
				t.Fatalf("analysed term %q from %q", wt.Text, s)
			}
		}
	})
}
