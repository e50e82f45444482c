package knowledge

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/constraintlab/assistant/internal/assistant"
)

// Record is the JSON form of an entity, one per line in the JSONL files that
// `assistant kb export` writes and `kb import` reads. The keys are the front
// matter keys of docs/knowledge-format.md plus the body sections.
type Record struct {
	Type       string   `json:"type"`
	Slug       string   `json:"slug"`
	Title      string   `json:"title"`
	Authors    []string `json:"authors"`
	Year       *int     `json:"year"`
	URL        string   `json:"url"`
	URLNote    string   `json:"url_note,omitempty"`
	Tags       []string `json:"tags"`
	Archetypes []string `json:"archetypes"`
	Related    []string `json:"related"`
	Summary    string   `json:"summary"`
	KeyIdeas   []string `json:"key_ideas"`
	WhenToUse  []string `json:"when_to_use"`
	Pitfalls   []string `json:"pitfalls"`
	// Origin is written by export (embedded or imported) and ignored by
	// import: whatever is imported is imported.
	Origin string `json:"origin,omitempty"`
}

// RecordOf returns the JSON form of e.
func RecordOf(e assistant.Entity) Record {
	r := Record{
		Type: string(e.Type), Slug: e.Slug, Title: e.Title, Authors: nonNil(e.Authors), Year: e.Year,
		URL: e.URL, URLNote: e.URLNote, Tags: nonNil(e.Tags), Archetypes: nonNil(e.Archetypes),
		Related: []string{}, Summary: e.Summary, KeyIdeas: nonNil(e.KeyIdeas),
		WhenToUse: nonNil(e.WhenToUse), Pitfalls: nonNil(e.Pitfalls), Origin: e.Origin,
	}
	for _, t := range e.Related {
		r.Related = append(r.Related, t.String())
	}
	return r
}

// WriteJSONL writes one Record per line.
func WriteJSONL(w io.Writer, entities []assistant.Entity) error {
	enc := json.NewEncoder(w)
	for _, e := range entities {
		if err := enc.Encode(RecordOf(e)); err != nil {
			return err
		}
	}
	return nil
}

// ParseJSONL reads one Record per non-blank line. A malformed line is a
// FieldError naming name:line and, where it can, the field.
func ParseJSONL(name string, data []byte) ([]File, error) {
	var files []File
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		at := fmt.Sprintf("%s:%d", name, n)
		var r Record
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			field := ""
			var typeErr *json.UnmarshalTypeError
			if errors.As(err, &typeErr) {
				field = typeErr.Field
			} else if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
				field = strings.Trim(f, `"`)
			}
			return nil, &FieldError{File: at, Field: field, Message: strings.TrimPrefix(err.Error(), "json: ")}
		}
		e := assistant.Entity{
			Type: assistant.EntityType(r.Type), Slug: r.Slug, Title: strings.TrimSpace(r.Title),
			Authors: trimAll(r.Authors), Year: r.Year, URL: strings.TrimSpace(r.URL),
			URLNote: strings.TrimSpace(r.URLNote), Tags: trimAll(r.Tags), Archetypes: trimAll(r.Archetypes),
			Summary: joinParagraph([]string{r.Summary}), KeyIdeas: trimAll(r.KeyIdeas),
			WhenToUse: trimAll(r.WhenToUse), Pitfalls: trimAll(r.Pitfalls),
		}
		for _, s := range r.Related {
			t, err := assistant.ParseToken(strings.TrimSpace(s))
			if err != nil {
				return nil, &FieldError{File: at, Field: "related", Message: fmt.Sprintf("%q is not a citation token of the form type:slug", s)}
			}
			e.Related = append(e.Related, t)
		}
		files = append(files, File{Name: at, Entity: e})
	}
	if err := sc.Err(); err != nil {
		return nil, &FieldError{File: name, Message: err.Error()}
	}
	return files, nil
}

func nonNil(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}
