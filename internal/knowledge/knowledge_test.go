package knowledge_test

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/knowledge"
	"github.com/constraintlab/assistant/internal/textproc"
)

const validEntity = `---
type: framework
slug: sample-framework
title: Sample Framework
authors: [Ada Example]
year: 1999
url: https://example.org/sample
tags: [sample, testing]
archetypes: [delivery-capacity]
related: []
---

## Summary
` + "%SUMMARY%" + `

## Key ideas
- First idea of the sample.
- Second idea of the sample.
- Third idea of the sample.

## When to use
- Orders wait in front of one station.

## Pitfalls
- Treating the sample as real.
`

func entityFile(summaryWords int, edits ...string) string {
	words := make([]string, summaryWords)
	for i := range words {
		words[i] = "word"
	}
	s := strings.Replace(validEntity, "%SUMMARY%", strings.Join(words, " ")+".", 1)
	for i := 0; i+1 < len(edits); i += 2 {
		s = strings.Replace(s, edits[i], edits[i+1], 1)
	}
	return s
}

func TestParseValid(t *testing.T) {
	e, err := knowledge.Parse("framework/sample-framework.md", []byte(entityFile(80)))
	if err != nil {
		t.Fatal(err)
	}
	if e.Token().String() != "framework:sample-framework" || *e.Year != 1999 || len(e.KeyIdeas) != 3 ||
		len(e.WhenToUse) != 1 || len(e.Pitfalls) != 1 || e.Authors[0] != "Ada Example" {
		t.Errorf("parsed %+v", e)
	}
	if problems := knowledge.Validate([]knowledge.File{{Name: "x", Entity: e}}); len(problems) != 0 {
		t.Errorf("valid entity has problems: %v", problems)
	}
}

func TestParseAndValidateErrorsNameTheField(t *testing.T) {
	cases := []struct {
		name, file, field string
	}{
		{"no front matter", "## Summary\nx", ""},
		{"decade as year", entityFile(80, "year: 1999", "year: 1960s"), "front matter"},
		{"unknown key", entityFile(80, "tags:", "colour: red\ntags:"), "front matter"},
		{"missing section", entityFile(80, "## Pitfalls\n- Treating the sample as real.\n", ""), "body"},
		{"sections out of order", entityFile(80, "## Key ideas", "## Keys"), "body"},
		{"bad related token", entityFile(80, "related: []", "related: [nonsense]"), "related"},
		{"short summary", entityFile(20), "summary"},
		{"long summary", entityFile(200), "summary"},
		{"unknown archetype", entityFile(80, "archetypes: [delivery-capacity]", "archetypes: [world-peace]"), "archetypes"},
		{"no archetype", entityFile(80, "archetypes: [delivery-capacity]", "archetypes: []"), "archetypes"},
		{"empty url without note", entityFile(80, "url: https://example.org/sample", "url:"), "url_note"},
		{"relative url", entityFile(80, "url: https://example.org/sample", "url: /sample"), "url"},
		{"author with notes", entityFile(80, "[Ada Example]", "[Ada Example (The Book)]"), "authors"},
		{"bad slug", entityFile(80, "slug: sample-framework", "slug: Sample Framework"), "slug"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := knowledge.Parse("framework/sample-framework.md", []byte(c.file))
			var problems []*knowledge.FieldError
			if err != nil {
				fe, ok := err.(*knowledge.FieldError)
				if !ok {
					t.Fatalf("error %T %v is not a FieldError", err, err)
				}
				problems = append(problems, fe)
			} else {
				problems = knowledge.Validate([]knowledge.File{{Name: "framework/sample-framework.md", Entity: e}})
			}
			if len(problems) == 0 {
				t.Fatal("no problem found")
			}
			found := false
			for _, p := range problems {
				if p.File != "framework/sample-framework.md" {
					t.Errorf("problem does not name the file: %v", p)
				}
				found = found || p.Field == c.field
			}
			if !found {
				t.Errorf("problems %v do not name field %q", problems, c.field)
			}
		})
	}
}

func TestValidateAcrossEntities(t *testing.T) {
	parse := func(file string) assistant.Entity {
		e, err := knowledge.Parse("f.md", []byte(file))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	a := parse(entityFile(80, "related: []", "related: [framework:missing]"))
	b := parse(entityFile(80))
	problems := knowledge.Validate([]knowledge.File{{Name: "a.md", Entity: a}, {Name: "b.md", Entity: b}})
	var text []string
	for _, p := range problems {
		text = append(text, p.Error())
	}
	joined := strings.Join(text, "\n")
	for _, want := range []string{"also defined in a.md", "framework:missing does not exist", "also appears in a.md", "is also the URL of framework:sample-framework"} {
		if !strings.Contains(joined, want) {
			t.Errorf("problems lack %q:\n%s", want, joined)
		}
	}
}

func TestReadDirChecksPaths(t *testing.T) {
	fsys := fstest.MapFS{"paper/sample-framework.md": {Data: []byte(entityFile(80))}}
	if _, err := knowledge.ReadDir(fsys); err == nil || !strings.Contains(err.Error(), "folder") {
		t.Errorf("type/folder mismatch not reported: %v", err)
	}
	fsys = fstest.MapFS{"framework/other.md": {Data: []byte(entityFile(80))}}
	if _, err := knowledge.ReadDir(fsys); err == nil || !strings.Contains(err.Error(), "file name") {
		t.Errorf("slug/file mismatch not reported: %v", err)
	}
}

// TestEmbeddedCorpus holds the shipped knowledge base to the format and to
// the counts the product promises.
func TestEmbeddedCorpus(t *testing.T) {
	files, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range knowledge.Validate(files) {
		t.Error(p)
	}
	counts := map[assistant.EntityType]int{}
	for _, f := range files {
		counts[f.Entity.Type]++
	}
	// Two essays were merged into their frameworks (aliases.yaml).
	if counts[assistant.Framework] < 86 || counts[assistant.Paper] < 48 || counts[assistant.Blog] < 48 {
		t.Errorf("corpus counts %v, want at least 86 frameworks, 48 papers, 48 blogs", counts)
	}
}

func TestQueryTermsDropSyntax(t *testing.T) {
	got := knowledge.QueryTerms(`"Churn" AND NEAR(customers* leaving) OR (( -price ^title:x`)
	want := "churn near customers leaving price title x"
	if strings.Join(got, " ") != want {
		t.Errorf("QueryTerms = %q, want %q", got, want)
	}
}

// TestQueryTermsDropBareNumbers: the asker's figures are not searched; a
// number with letters is a name and is.
func TestQueryTermsDropBareNumbers(t *testing.T) {
	got := knowledge.QueryTerms("We have 9 product ideas, 4 engineers and 1,200 b2b clients in Q4 2026")
	want := "product ideas engineers b2b clients q4"
	if strings.Join(got, " ") != want {
		t.Errorf("QueryTerms = %q, want %q", got, want)
	}
}

// TestVocabularyPhrasings: the everyday phrases of several words found in a
// text, stemmed, once each; single words are not phrasings.
func TestVocabularyPhrasings(t *testing.T) {
	v, err := knowledge.ParseVocabulary("test", []byte("cold call, cold calls => prospecting\nno show, no-shows => reminders\nstock => inventory\n"))
	if err != nil {
		t.Fatal(err)
	}
	var stems []string
	for _, w := range textproc.Words("Cold calls and more cold calls; stock and No-Shows") {
		stems = append(stems, textproc.Stem(w))
	}
	got := v.Phrasings(stems)
	want := []string{textproc.Stem("cold") + " " + textproc.Stem("call"), "no " + textproc.Stem("show")}
	if !slices.Equal(got, want) {
		t.Errorf("Phrasings = %q, want %q", got, want)
	}
	if got := (*knowledge.Vocabulary)(nil).Phrasings(stems); got != nil {
		t.Errorf("a nil vocabulary found %q", got)
	}
}
