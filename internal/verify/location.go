package verify

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/textproc"
)

// This file places evidence in the entity card, so a client can highlight
// it: a verdict's evidence names the card field its passage comes from
// (its JSON name as POST /resolve returns it: "summary", "key_ideas[2]",
// "title", "authors[0]", "year", "tags[1]"; and "when_to_use[i]" and
// "pitfalls[i]", fields of the entity that the card does not carry) and
// the offsets of the passage in that field's text, in UTF-16 code units
// (the string indices of JavaScript), start included, end excluded. The
// year, a number in the card, is located in its decimal form.

// location is where a passage is in its entity: the field and the byte
// offsets of the passage in the field's text.
type location struct {
	field      string
	start, end int
}

// locatedPassages are the passages of an entity (the units of evidence:
// its metadata line, the sentences of its summary, each list item, its
// tags line) with their locations. The metadata line and the tags line
// are made up from several fields: they are located at the title, and
// evidenceAt moves them to the field a verdict rests on.
func locatedPassages(e assistant.Entity) ([]string, []location) {
	meta := "\"" + e.Title + "\""
	if len(e.Authors) > 0 {
		meta += " by " + strings.Join(e.Authors, ", ")
	}
	if e.Year != nil {
		meta += fmt.Sprintf(", published in %d", *e.Year)
	}
	texts := []string{meta + "."}
	locs := []location{{"title", 0, len(e.Title)}}
	from := 0
	for _, s := range textproc.Sentences(e.Summary) {
		i := strings.Index(e.Summary[from:], s)
		if i < 0 { // Sentences returns pieces of its text, trimmed: never happens
			i = strings.Index(e.Summary, s)
			from = 0
		}
		texts = append(texts, s)
		locs = append(locs, location{"summary", from + i, from + i + len(s)})
		from += i + len(s)
	}
	for _, list := range []struct {
		name  string
		items []string
	}{{"key_ideas", e.KeyIdeas}, {"when_to_use", e.WhenToUse}, {"pitfalls", e.Pitfalls}} {
		for i, item := range list.items {
			texts = append(texts, item)
			locs = append(locs, location{fmt.Sprintf("%s[%d]", list.name, i), 0, len(item)})
		}
	}
	if len(e.Tags) > 0 {
		texts = append(texts, e.Title+": "+strings.Join(e.Tags, ", "))
		locs = append(locs, location{tagsLine, 0, 0})
	}
	return texts, locs
}

// tagsLine marks the location of the tags passage until a claim picks its
// tag.
const tagsLine = "tags"

// fieldText is the text of a field of an entity as POST /resolve returns
// it ("" when the entity has no such field).
func fieldText(e assistant.Entity, field string) string {
	name, index, listed := strings.Cut(strings.TrimSuffix(field, "]"), "[")
	if !listed {
		switch name {
		case "title":
			return e.Title
		case "summary":
			return e.Summary
		case "year":
			return yearOf(e)
		}
		return ""
	}
	i, err := strconv.Atoi(index)
	if err != nil || i < 0 {
		return ""
	}
	var list []string
	switch name {
	case "key_ideas":
		list = e.KeyIdeas
	case "when_to_use":
		list = e.WhenToUse
	case "pitfalls":
		list = e.Pitfalls
	case "authors":
		list = e.Authors
	case "tags":
		list = e.Tags
	}
	if i >= len(list) {
		return ""
	}
	return list[i]
}

// FieldText is the text of the card field an evidence names ("summary",
// "key_ideas[2]", "year"), as POST /resolve returns it: the text an
// evidence's start and end index, in UTF-16 code units.
func FieldText(e assistant.Entity, field string) string { return fieldText(e, field) }

// evidenceAt is the evidence of entity e at loc, with snippet as its
// readable excerpt.
func evidenceAt(e assistant.Entity, loc location, snippetText string) *Evidence {
	text := fieldText(e, loc.field)
	ev := &Evidence{Type: string(e.Type), Slug: e.Slug, Snippet: snippet(snippetText)}
	if loc.field == "" || loc.end > len(text) || loc.start > loc.end {
		return ev
	}
	ev.Field, ev.Quote = loc.field, text[loc.start:loc.end]
	ev.Start = utf16Len(text[:loc.start])
	ev.End = ev.Start + utf16Len(ev.Quote)
	return ev
}

// utf16Len is the length of s in UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 && r <= utf8.MaxRune {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// UTF16Slice returns s[start:end] with start and end in UTF-16 code
// units, as a JavaScript client slices it; ok is false when they fall
// outside s or inside a surrogate pair.
func UTF16Slice(s string, start, end int) (string, bool) {
	units := utf16.Encode([]rune(s))
	if start < 0 || end > len(units) || start > end {
		return "", false
	}
	lowSurrogate := func(i int) bool { return i < len(units) && units[i] >= 0xDC00 && units[i] <= 0xDFFF }
	if lowSurrogate(start) || lowSurrogate(end) {
		return "", false
	}
	return string(utf16.Decode(units[start:end])), true
}

// passageEvidence is the evidence of the passages idx of entity e (its
// best window: one passage or two neighbours) for a claim with the given
// stems. Two neighbouring sentences of the summary are located as one
// span; otherwise the passage that holds most of the claim (top) is.
func (ev *evidence) passageEvidence(e assistant.Entity, idx []int, top int, claimStems map[string]bool) *Evidence {
	var parts []string
	for _, i := range idx {
		parts = append(parts, ev.texts[i])
	}
	if len(ev.locs) == 0 {
		return &Evidence{Type: string(e.Type), Slug: e.Slug, Snippet: snippet(strings.Join(parts, " "))}
	}
	loc := ev.locs[top]
	if len(idx) == 2 && ev.locs[idx[0]].field == "summary" && ev.locs[idx[1]].field == "summary" {
		loc = location{"summary", ev.locs[idx[0]].start, ev.locs[idx[1]].end}
		return evidenceAt(e, loc, e.Summary[loc.start:loc.end])
	}
	return evidenceAt(e, ev.placeLine(e, loc, claimStems), ev.texts[top])
}

// placeLine moves the location of the tags line to the tag that shares
// most words with the claim (the first tag when none does).
func (ev *evidence) placeLine(e assistant.Entity, loc location, claimStems map[string]bool) location {
	if loc.field != tagsLine {
		return loc
	}
	best, bestShared := 0, -1
	for i, stems := range ev.tagStems {
		shared := 0
		for _, st := range stems {
			if claimStems[st] {
				shared++
			}
		}
		if shared > bestShared {
			best, bestShared = i, shared
		}
	}
	return location{fmt.Sprintf("tags[%d]", best), 0, len(e.Tags[best])}
}

// metadataEvidence is the evidence of a contradicted year, author or
// title: the field that says otherwise, with the metadata line as its
// snippet.
func metadataEvidence(e assistant.Entity, field, meta string) *Evidence {
	text := fieldText(e, field)
	if text == "" {
		field, text = "title", e.Title
	}
	return evidenceAt(e, location{field, 0, len(text)}, meta)
}

// stemTags keeps the stems of the words of each of an entity's tags, for
// placeLine.
func (ev *evidence) stemTags(e assistant.Entity) {
	ev.tagStems = make([][]string, len(e.Tags))
	for i, tag := range e.Tags {
		for _, w := range textproc.Words(tag) {
			ev.tagStems[i] = append(ev.tagStems[i], stemAny(w))
		}
	}
}

// locateQuote finds a quote in the fields of an entity, exactly or, when
// that fails, ignoring case; ok is false when no field holds it.
func locateQuote(e assistant.Entity, quote string) (location, bool) {
	_, locs := locatedPassages(e)
	seen := map[string]bool{}
	fields := []string{}
	for _, l := range locs {
		if !seen[l.field] && l.field != tagsLine {
			seen[l.field] = true
			fields = append(fields, l.field)
		}
	}
	for _, fold := range []bool{false, true} {
		for _, f := range fields {
			text := fieldText(e, f)
			hay, needle := text, quote
			if fold {
				hay, needle = strings.ToLower(text), strings.ToLower(quote)
				if len(hay) != len(text) {
					continue
				}
			}
			if i := strings.Index(hay, needle); i >= 0 && needle != "" {
				return location{f, i, i + len(needle)}, true
			}
		}
	}
	return location{}, false
}
