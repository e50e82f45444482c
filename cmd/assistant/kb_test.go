package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/knowledge"
)

// entityMarkdown returns a valid entity file whose every sentence is unique
// to seed.
func entityMarkdown(typ, slug, seed string) string {
	var summary []string
	for i := 0; i < 8; i++ {
		summary = append(summary, fmt.Sprintf("Sentence %d about %s explains one distinct point in plain words", i, seed))
	}
	return fmt.Sprintf(`---
type: %s
slug: %s
title: %s title
authors: [Ada Example]
year: 2001
url: https://example.org/%s
tags: [testing, %s]
archetypes: [delivery-capacity]
related: [framework:theory-of-constraints]
---

## Summary
%s.

## Key ideas
- The first idea of %s is stated here.
- The second idea of %s is stated here.
- The third idea of %s is stated here.

## When to use
- Orders about %s wait in front of one station.

## Pitfalls
- Treating %s as more than a test fixture.
`, typ, slug, seed, slug, seed, strings.Join(summary, ". "), seed, seed, seed, seed, seed)
}

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const bibtexSample = `@comment{exported by a reference manager}
@article{Smith2020Queues,
  author   = {Smith, Jane and Jones, Bob and {The Flow Institute}},
  title    = {{Queues} in Small {Workshops}},
  year     = 2020,
  doi      = {10.1000/xyz123},
  abstract = "%s",
  keywords = {queueing, lead time, delivery-capacity}
}
`

func exportTokens(t *testing.T, e env, out *bytes.Buffer) map[string]knowledge.Record {
	t.Helper()
	out.Reset()
	if err := kbCommand(context.Background(), e, []string{"export", "--format", "jsonl"}); err != nil {
		t.Fatal(err)
	}
	records := map[string]knowledge.Record{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var r knowledge.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("export line %q: %v", line, err)
		}
		records[r.Type+":"+r.Slug] = r
	}
	return records
}

// syncEmbedded loads the embedded corpus into e's database, as serve does
// at every start.
func syncEmbedded(t *testing.T, e env) {
	t.Helper()
	cfg, err := loadConfig(e, "test", nil, storeSettings)
	if err != nil {
		t.Fatal(err)
	}
	db, err := openStore(context.Background(), cfg, e.now)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := knowledge.LoadEmbedded(context.Background(), db); err != nil {
		t.Fatal(err)
	}
}

func TestKBValidateEmbeddedCorpus(t *testing.T) {
	e, out, _ := testEnv(t, nil)
	if err := kbCommand(context.Background(), e, []string{"validate"}); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("ok: %d entities valid", embeddedCount(t)); !strings.Contains(out.String(), want) {
		t.Errorf("output %q", out)
	}
}

func TestKBImportExportAndOverride(t *testing.T) {
	ctx := context.Background()
	e, out, _ := testEnv(t, nil)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "md", "framework", "alpha-method.md"), entityMarkdown("framework", "alpha-method", "alpha"))
	// The same token as an embedded framework: the import replaces it.
	writeFile(t, filepath.Join(dir, "md", "framework", "five-whys.md"), entityMarkdown("framework", "five-whys", "whyish"))
	bib := writeFile(t, filepath.Join(dir, "refs.bib"), fmt.Sprintf(bibtexSample, strings.Repeat("Queues in workshops are studied with care. ", 1)+
		strings.Repeat("word ", 60)))
	var jsonl bytes.Buffer
	ent, err := knowledge.Parse("x.md", []byte(entityMarkdown("blog", "beta-essay", "beta")))
	if err != nil {
		t.Fatal(err)
	}
	ent.Archetypes = nil // --archetype fills it in
	if err := knowledge.WriteJSONL(&jsonl, []assistant.Entity{ent}); err != nil {
		t.Fatal(err)
	}
	jl := writeFile(t, filepath.Join(dir, "more.jsonl"), jsonl.String())

	syncEmbedded(t, e) // as serve does at start

	if err := kbCommand(ctx, e, []string{"import", "--archetype", "quality-rework", filepath.Join(dir, "md"), jl, bib}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "imported 4 entities: 3 new, 1 updated") {
		t.Errorf("import output %q", out)
	}

	records := exportTokens(t, e, out)
	if want := embeddedCount(t) + 3; len(records) != want { // 3 new, 1 replacing an embedded one
		t.Errorf("exported %d entities, want %d", len(records), want)
	}
	paper := records["paper:smith2020queues"]
	if paper.Title != "Queues in Small Workshops" || paper.URL != "https://doi.org/10.1000/xyz123" || *paper.Year != 2020 ||
		strings.Join(paper.Authors, "|") != "Jane Smith|Bob Jones|The Flow Institute" ||
		strings.Join(paper.Tags, "|") != "queueing|lead time" || strings.Join(paper.Archetypes, "|") != "delivery-capacity" {
		t.Errorf("BibTeX entry imported as %+v", paper)
	}
	if r := records["blog:beta-essay"]; strings.Join(r.Archetypes, "|") != "quality-rework" {
		t.Errorf("--archetype not applied to an entity without archetypes: %+v", r)
	}
	if r := records["framework:alpha-method"]; strings.Join(r.Archetypes, "|") != "delivery-capacity" {
		t.Errorf("--archetype applied to an entity with archetypes: %+v", r)
	}
	if r := records["framework:five-whys"]; r.Title != "whyish title" || r.Origin != "imported" {
		t.Errorf("import did not replace the embedded entity: %+v", r)
	}

	// A restart syncs the embedded corpus again: the imports stay and win.
	syncEmbedded(t, e)
	if r := exportTokens(t, e, out)["framework:five-whys"]; r.Title != "whyish title" {
		t.Errorf("import lost on restart: %+v", r)
	}

	out.Reset()
	if err := kbCommand(ctx, e, []string{"validate"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "imported framework:five-whys replaces the embedded entity") {
		t.Errorf("validate does not say the import wins: %q", out)
	}
}

// TestKBImportIsAtomic holds an import to all or nothing: one invalid file
// among valid ones changes nothing, and the error names the file and field.
func TestKBImportIsAtomic(t *testing.T) {
	dir := t.TempDir()
	good := entityMarkdown("framework", "good-one", "goodness")
	cases := []struct {
		name  string
		files map[string]string
		path  string
		want  []string
	}{
		{"missing title in a directory",
			map[string]string{"d/framework/good-one.md": good,
				"d/framework/bad-one.md": strings.Replace(entityMarkdown("framework", "bad-one", "badness"), "title: badness title", "title: ''", 1)},
			"d", []string{"bad-one.md", "title"}},
		{"unknown archetype in JSONL",
			map[string]string{"a.jsonl": `{"type":"framework","slug":"x","title":"X","authors":[],"year":null,"url":"https://x.org","tags":["t"],"archetypes":["world-peace"],"related":[],"summary":"` +
				strings.Repeat("w ", 70) + `","key_ideas":["a","b","c"],"when_to_use":["d"],"pitfalls":["e"]}`},
			"a.jsonl", []string{"a.jsonl:1", "archetypes"}},
		{"unknown key in JSONL",
			map[string]string{"b.jsonl": "\n" + `{"type":"framework","colour":"red"}`},
			"b.jsonl", []string{"b.jsonl:2", "colour"}},
		{"dangling related token",
			map[string]string{"c/framework/good-one.md": strings.Replace(good, "related: [framework:theory-of-constraints]", "related: [framework:nowhere]", 1)},
			"c", []string{"good-one.md", "related", "framework:nowhere"}},
		{"BibTeX without abstract",
			map[string]string{"n.bib": `@book{Doe1999, title={A Book}, author={Doe, John}, year={1999}, url={https://example.org/b}, keywords={cash-flow, budgeting}}`},
			"n.bib", []string{"n.bib:Doe1999", "abstract"}},
		{"BibTeX syntax error",
			map[string]string{"s.bib": "@article{Key1,\n  title = {Unclosed,\n"},
			"s.bib", []string{"s.bib:", "bibtex"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, out, _ := testEnv(t, nil)
			before := exportTokens(t, e, out)
			root := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
			for name, content := range c.files {
				writeFile(t, filepath.Join(root, name), content)
			}
			err := kbCommand(context.Background(), e, []string{"import", filepath.Join(root, c.path)})
			if err == nil {
				t.Fatal("invalid import accepted")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
			after := exportTokens(t, e, out)
			if len(after) != len(before) {
				t.Errorf("the database changed: %d entities before, %d after", len(before), len(after))
			}
			if _, ok := after["framework:good-one"]; ok {
				t.Error("the valid file of a failed import was imported")
			}
		})
	}
}

func TestKBAndEvalHelpAndUsage(t *testing.T) {
	ctx := context.Background()
	for _, args := range [][]string{
		{"validate", "--help"}, {"import", "--help"}, {"export", "--help"}, {"--help"},
	} {
		e, _, _ := testEnv(t, nil)
		if err := kbCommand(ctx, e, args); !errors.Is(err, flag.ErrHelp) {
			t.Errorf("kb %v: %v, want flag.ErrHelp", args, err)
		}
	}
	for _, args := range [][]string{{"retrieval", "--help"}, {"--help"}} {
		e, _, _ := testEnv(t, nil)
		if err := evalCommand(ctx, e, args); !errors.Is(err, flag.ErrHelp) {
			t.Errorf("eval %v: %v, want flag.ErrHelp", args, err)
		}
	}
	for _, c := range []struct {
		cmd  func(context.Context, env, []string) error
		args []string
	}{
		{kbCommand, nil}, {kbCommand, []string{"frobnicate"}}, {kbCommand, []string{"import"}},
		{kbCommand, []string{"export", "--format", "csv"}}, {kbCommand, []string{"import", "--archetype", "world-peace", "x"}},
		{evalCommand, []string{"retrieval"}}, {evalCommand, []string{"nothing"}},
	} {
		e, _, _ := testEnv(t, nil)
		if err := c.cmd(ctx, e, c.args); !errors.Is(err, errUsage) {
			t.Errorf("%v: %v, want a usage error", c.args, err)
		}
	}
}

// embeddedCount is the number of entities in the embedded corpus.
func embeddedCount(t *testing.T) int {
	t.Helper()
	files, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	return len(files)
}
