package knowledge_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/knowledge"
)

func TestVocabularyAnalyze(t *testing.T) {
	v, err := knowledge.ParseVocabulary("test.txt", []byte(`
# comment
churn, attrition, customers leaving
can't keep up, piles up => bottleneck, capacity
`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ query, want string }{
		{"our attrition is high", "attrition:1 high:1 churn:0.6 customers leaving:0.6"},
		{"customers are leaving us", "customers:1 leaving:1 churn:0.6 attrition:0.6 customers leaving:0.6"},
		{"orders pile up and we can't keep up", "orders:1 pile:1 bottleneck:0.45 capacity:0.45"},
		{"capacity piles up", "capacity:1 piles:1 bottleneck:0.45"},
		{`"NEAR(churn*)" OR`, "near:1 churn:1 attrition:0.6 customers leaving:0.6"},
		{"the and of", ""},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			var got []string
			for _, term := range v.Analyze(c.query) {
				got = append(got, fmt.Sprintf("%s:%g", term.Text, term.Weight))
			}
			if g := strings.Join(got, " "); g != c.want {
				t.Errorf("Analyze = %q, want %q", g, c.want)
			}
		})
	}
	for _, bad := range []string{"lonely", "a, b => ", "a; b, c", "x, , y"} {
		if _, err := knowledge.ParseVocabulary("bad.txt", []byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if len(knowledge.DefaultVocabulary().Analyze("customers cancel and leave")) < 4 {
		t.Error("the embedded vocabulary does not expand a churn question")
	}
}

func TestParseBibTeX(t *testing.T) {
	src := `Text outside entries is ignored.
@string{jn = "Journal"}
@Article{Little1961,
  author = "Little, John D. C.",
  title = {A Proof for the Queuing Formula: {L} = $\lambda$ {W}},
  journal = jn # " of Operations",
  year = {1961},
  url = {https://doi.org/10.1287/opre.9.3.383},
  abstract = {An abstract with {nested {braces}} and \& an escape.},
  keywords = {queueing; Little's law, delivery-capacity}
}
@inproceedings(conf-2001,
  author = {Ann Other and Smith, Bob},
  title = "Quoted {Title}",
  year = 2001,
  doi = {10.1/abc},
)`
	files, err := knowledge.ParseBibTeX("refs.bib", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Fatalf("%d entries, want 2", len(files))
	}
	a, b := files[0].Entity, files[1].Entity
	if files[0].Name != "refs.bib:Little1961" || !files[0].Bibliographic || a.Type != assistant.Paper || a.Slug != "little1961" ||
		a.Title != `A Proof for the Queuing Formula: L = $\lambda$ W` || *a.Year != 1961 || a.Authors[0] != "John D. C. Little" ||
		a.Summary != "An abstract with nested braces and & an escape." ||
		strings.Join(a.Tags, "|") != "queueing|little's law" || strings.Join(a.Archetypes, "|") != "delivery-capacity" {
		t.Errorf("first entry %+v", a)
	}
	if b.Slug != "conf-2001" || b.Title != "Quoted Title" || b.URL != "https://doi.org/10.1/abc" ||
		strings.Join(b.Authors, "|") != "Ann Other|Bob Smith" {
		t.Errorf("second entry %+v", b)
	}

	for name, bad := range map[string]string{
		"unclosed entry": "@article{k, title={x}",
		"no key":         "@article{, title={x}}",
		"no value":       "@article{k, title}",
		"unbalanced":     "@article{k, title={x}",
		"bad year":       "@article{k, year={MCMLX}}",
		"duplicate":      "@article{k, title={x}, title={y}}",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := knowledge.ParseBibTeX("bad.bib", []byte(bad))
			var fe *knowledge.FieldError
			if !errors.As(err, &fe) || !strings.HasPrefix(fe.File, "bad.bib:") {
				t.Errorf("error %v does not name the file", err)
			}
		})
	}
}

func TestJSONLRoundTripAndErrors(t *testing.T) {
	files, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	var entities []assistant.Entity
	for _, f := range files[:5] {
		entities = append(entities, f.Entity)
	}
	var buf bytes.Buffer
	if err := knowledge.WriteJSONL(&buf, entities); err != nil {
		t.Fatal(err)
	}
	back, err := knowledge.ParseJSONL("x.jsonl", buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range back {
		var a, b bytes.Buffer
		knowledge.WriteJSONL(&a, []assistant.Entity{entities[i]})
		knowledge.WriteJSONL(&b, []assistant.Entity{f.Entity})
		if a.String() != b.String() {
			t.Errorf("entity %d did not round-trip:\n%s\n%s", i, a.String(), b.String())
		}
	}
	for _, c := range []struct{ line, field string }{
		{`{"type":"framework","colour":"red"}`, "colour"},
		{`{"type":"framework","year":"1950s"}`, "year"},
		{`{"type":"framework","related":["nonsense"]}`, "related"},
		{`not json`, ""},
	} {
		_, err := knowledge.ParseJSONL("x.jsonl", []byte("\n"+c.line))
		var fe *knowledge.FieldError
		if !errors.As(err, &fe) || fe.File != "x.jsonl:2" || fe.Field != c.field {
			t.Errorf("%s: error %#v, want x.jsonl:2 and field %q", c.line, err, c.field)
		}
	}
}

func TestMergeImportedWins(t *testing.T) {
	file := func(name, slug string) knowledge.File {
		return knowledge.File{Name: name, Entity: assistant.Entity{Type: assistant.Framework, Slug: slug}}
	}
	merged, replacing := knowledge.Merge(
		[]knowledge.File{file("e1", "a"), file("e2", "b")},
		[]knowledge.File{file("i1", "b"), file("i2", "c")})
	var names []string
	for _, f := range merged {
		names = append(names, f.Name)
	}
	if strings.Join(names, " ") != "e1 i1 i2" || len(replacing) != 1 || replacing[0].Name != "i1" {
		t.Errorf("merged %v, replacing %v", names, replacing)
	}
}
