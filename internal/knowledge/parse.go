package knowledge

import (
	"bytes"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/constraintlab/assistant/internal/assistant"
)

// frontMatter is the YAML header of an entity file.
type frontMatter struct {
	Type       string   `yaml:"type"`
	Slug       string   `yaml:"slug"`
	Title      string   `yaml:"title"`
	Authors    []string `yaml:"authors"`
	Year       *int     `yaml:"year"`
	URL        string   `yaml:"url"`
	URLNote    string   `yaml:"url_note"`
	Tags       []string `yaml:"tags"`
	Archetypes []string `yaml:"archetypes"`
	Related    []string `yaml:"related"`
}

// The body sections, in the order they must appear.
const (
	sectionSummary   = "Summary"
	sectionKeyIdeas  = "Key ideas"
	sectionWhenToUse = "When to use"
	sectionPitfalls  = "Pitfalls"
)

var sectionOrder = []string{sectionSummary, sectionKeyIdeas, sectionWhenToUse, sectionPitfalls}

// FieldError names the file and field of a problem found while parsing or
// validating an entity.
type FieldError struct {
	File    string
	Field   string
	Message string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", e.File, e.Message)
	}
	return fmt.Sprintf("%s: %s: %s", e.File, e.Field, e.Message)
}

// Parse reads one entity file. name is used in error messages only. It
// checks the shape of the file (front matter, sections, field types); the
// content rules are Validate's.
func Parse(name string, data []byte) (assistant.Entity, error) {
	fail := func(field, format string, args ...any) (assistant.Entity, error) {
		return assistant.Entity{}, &FieldError{File: name, Field: field, Message: fmt.Sprintf(format, args...)}
	}
	data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	rest, ok := bytes.CutPrefix(data, []byte("---\n"))
	if !ok {
		return fail("", "the file must start with a --- line opening the front matter")
	}
	header, body, ok := bytes.Cut(rest, []byte("\n---\n"))
	if !ok {
		return fail("", "the front matter is not closed by a --- line")
	}
	var fm frontMatter
	dec := yaml.NewDecoder(bytes.NewReader(header))
	dec.KnownFields(true)
	if err := dec.Decode(&fm); err != nil {
		return fail("front matter", "%s", strings.TrimPrefix(err.Error(), "yaml: "))
	}

	e := assistant.Entity{
		Type:       assistant.EntityType(fm.Type),
		Slug:       fm.Slug,
		Title:      strings.TrimSpace(fm.Title),
		Authors:    trimAll(fm.Authors),
		Year:       fm.Year,
		URL:        strings.TrimSpace(fm.URL),
		URLNote:    strings.TrimSpace(fm.URLNote),
		Tags:       trimAll(fm.Tags),
		Archetypes: trimAll(fm.Archetypes),
	}
	for _, r := range fm.Related {
		t, err := assistant.ParseToken(strings.TrimSpace(r))
		if err != nil {
			return fail("related", "%q is not a citation token of the form type:slug", r)
		}
		e.Related = append(e.Related, t)
	}

	sections, err := splitSections(string(body))
	if err != nil {
		return fail("body", "%v", err)
	}
	e.Summary = joinParagraph(sections[sectionSummary])
	e.KeyIdeas = bullets(sections[sectionKeyIdeas])
	e.WhenToUse = bullets(sections[sectionWhenToUse])
	e.Pitfalls = bullets(sections[sectionPitfalls])
	return e, nil
}

// splitSections splits the Markdown body at its "## " headings and checks
// that exactly the four sections appear, in order.
func splitSections(body string) (map[string][]string, error) {
	sections := map[string][]string{}
	var order []string
	current := ""
	for _, line := range strings.Split(body, "\n") {
		if heading, ok := strings.CutPrefix(line, "## "); ok {
			current = strings.TrimSpace(heading)
			if _, dup := sections[current]; dup {
				return nil, fmt.Errorf("section %q appears twice", current)
			}
			sections[current] = nil
			order = append(order, current)
			continue
		}
		if current == "" {
			if strings.TrimSpace(line) != "" {
				return nil, fmt.Errorf("text before the first section: %q", line)
			}
			continue
		}
		sections[current] = append(sections[current], line)
	}
	if strings.Join(order, "|") != strings.Join(sectionOrder, "|") {
		return nil, fmt.Errorf("sections must be %q in this order, found %q", sectionOrder, order)
	}
	return sections, nil
}

// joinParagraph joins the lines of a prose section into one paragraph.
func joinParagraph(lines []string) string {
	return strings.Join(strings.Fields(strings.Join(lines, " ")), " ")
}

// bullets returns the "- " items of a section; an indented or plain line
// continues the item before it.
func bullets(lines []string) []string {
	var items []string
	for _, line := range lines {
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
		case strings.HasPrefix(trimmed, "- "), strings.HasPrefix(trimmed, "* "):
			items = append(items, strings.TrimSpace(trimmed[2:]))
		case len(items) > 0:
			items[len(items)-1] += " " + trimmed
		default:
			items = append(items, trimmed)
		}
	}
	return items
}

func trimAll(in []string) []string {
	out := make([]string, 0, len(in))
	for _, s := range in {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
