package knowledge

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/constraintlab/assistant/internal/assistant"
)

// Summary length bounds, in words (docs/knowledge-format.md).
const (
	MinSummaryWords = 60
	MaxSummaryWords = 150
)

// File is a parsed entity with the name of the file (or file:line, or
// file:key) it came from.
type File struct {
	Name   string
	Entity assistant.Entity
	// Bibliographic marks an entity read from a bibliographic record
	// (BibTeX): it has no body sections, so the rules on key ideas, when to
	// use and pitfalls do not apply, and problems name the BibTeX fields
	// (abstract, keywords) the entity's fields came from.
	Bibliographic bool
}

// bibFields names, for a Bibliographic file, the BibTeX field an entity
// field came from.
var bibFields = map[string]string{"summary": "abstract", "tags": "keywords", "archetypes": "keywords", "authors": "author"}

// Validate checks every content rule of docs/knowledge-format.md on each
// entity, and the rules across entities: unique tokens, no URL shared by
// two entities (one work, one entity), related tokens that exist, and no
// sentence shared by two entities. It returns every problem
// found, in file order; nil means the set is valid.
func Validate(files []File) []*FieldError {
	var problems []*FieldError
	seen := map[assistant.Token]string{}
	for _, f := range files {
		problems = append(problems, validateEntity(f)...)
		tok := f.Entity.Token()
		if first, dup := seen[tok]; dup {
			problems = append(problems, &FieldError{File: f.Name, Field: "slug", Message: fmt.Sprintf("token %s is also defined in %s", tok, first)})
		} else {
			seen[tok] = f.Name
		}
	}
	problems = append(problems, sharedURLs(files)...)
	for _, f := range files {
		for _, r := range f.Entity.Related {
			if r == f.Entity.Token() {
				problems = append(problems, &FieldError{File: f.Name, Field: "related", Message: "an entity cannot be related to itself"})
			} else if _, ok := seen[r]; !ok {
				problems = append(problems, &FieldError{File: f.Name, Field: "related", Message: fmt.Sprintf("%s does not exist", r)})
			}
		}
	}
	return append(problems, sharedSentences(files)...)
}

func validateEntity(f File) []*FieldError {
	var problems []*FieldError
	add := func(field, format string, args ...any) {
		if b, ok := bibFields[field]; ok && f.Bibliographic {
			field = b
		}
		problems = append(problems, &FieldError{File: f.Name, Field: field, Message: fmt.Sprintf(format, args...)})
	}
	e := f.Entity
	if !e.Type.Valid() {
		add("type", "%q is not one of framework, paper, blog", e.Type)
	}
	if !assistant.ValidSlug(e.Slug) || len(e.Slug) > assistant.MaxSlugLength {
		add("slug", "%q does not match [a-z0-9_-]+", e.Slug)
	}
	if e.Title == "" {
		add("title", "is required")
	}
	for _, a := range e.Authors {
		if strings.ContainsAny(a, "()[];") {
			add("authors", "%q must be a name only, without notes in brackets", a)
		}
	}
	if e.Year != nil && (*e.Year < 1000 || *e.Year > 2100) {
		add("year", "%d is not a plausible year", *e.Year)
	}
	if e.URL == "" {
		if e.URLNote == "" {
			add("url_note", "is required when url is empty: say why there is no url")
		}
	} else if u, err := url.Parse(e.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		add("url", "%q is not an absolute http(s) URL", e.URL)
	}
	if len(e.Tags) == 0 {
		add("tags", "at least one tag is required")
	}
	if len(e.Archetypes) == 0 {
		add("archetypes", "at least one archetype id is required")
	}
	for _, a := range e.Archetypes {
		if !assistant.IsArchetype(a) {
			add("archetypes", "%q is not an archetype id of the catalog", a)
		}
	}
	if n := len(strings.Fields(e.Summary)); n < MinSummaryWords || n > MaxSummaryWords {
		add("summary", "has %d words; it must have %d to %d", n, MinSummaryWords, MaxSummaryWords)
	}
	if f.Bibliographic {
		return problems
	}
	if n := len(e.KeyIdeas); n < 3 || n > 6 {
		add("key ideas", "has %d items; it must have 3 to 6", n)
	}
	if len(e.WhenToUse) == 0 {
		add("when to use", "at least one item is required")
	}
	if len(e.Pitfalls) == 0 {
		add("pitfalls", "at least one item is required")
	}
	return problems
}

var sentenceEnd = regexp.MustCompile(`[.!?]+(\s+|$)`)

// sharedSentences reports sentences of six words or more that appear in two
// entities: each entity is written on its own, never from a template.
func sharedSentences(files []File) []*FieldError {
	var problems []*FieldError
	owner := map[string]string{}
	for _, f := range files {
		e := f.Entity
		texts := append([]string{e.Summary}, e.KeyIdeas...)
		texts = append(texts, e.WhenToUse...)
		texts = append(texts, e.Pitfalls...)
		mine := map[string]bool{}
		for _, text := range texts {
			for _, s := range sentenceEnd.Split(text, -1) {
				norm := strings.ToLower(strings.Join(strings.Fields(s), " "))
				if len(strings.Fields(norm)) < 6 || mine[norm] {
					continue
				}
				mine[norm] = true
				if first, ok := owner[norm]; ok {
					problems = append(problems, &FieldError{File: f.Name, Field: "text", Message: fmt.Sprintf("sentence %q also appears in %s", s, first)})
				} else {
					owner[norm] = f.Name
				}
			}
		}
	}
	return problems
}

// sharedURLs reports every entity whose URL an earlier entity already has:
// one work is one entity (docs/knowledge-format.md), so two entities with
// one address are either merged or given addresses of their own.
func sharedURLs(files []File) []*FieldError {
	var problems []*FieldError
	first := map[string]assistant.Token{}
	for _, f := range files {
		u := f.Entity.URL
		if u == "" {
			continue
		}
		if other, dup := first[u]; dup {
			problems = append(problems, &FieldError{File: f.Name, Field: "url",
				Message: fmt.Sprintf("%s is also the URL of %s; merge the two (with an alias) or give each its own address", u, other)})
			continue
		}
		first[u] = f.Entity.Token()
	}
	return problems
}
