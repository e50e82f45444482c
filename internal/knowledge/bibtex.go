package knowledge

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/constraintlab/assistant/internal/assistant"
)

// ParseBibTeX reads the entries of a BibTeX file as papers. Each entry
// (@article, @book, @inproceedings, @misc and the like; @string, @preamble
// and @comment are skipped) becomes a File named name:key with:
//
//   - slug: the citation key, lowercased, with characters outside
//     [a-z0-9_-] replaced by '-';
//   - title, year; authors split on " and ", "Last, First" turned into
//     "First Last", braces removed;
//   - url, or https://doi.org/<doi> when only doi is given; url_note if the
//     entry has that (non-standard) field;
//   - summary: the abstract;
//   - tags and archetypes: the keywords (split on , or ;), archetype ids
//     going to archetypes and the rest, lowercased, to tags.
//
// Such a File is Bibliographic: it has no key ideas, when-to-use or
// pitfalls. Syntax errors are FieldErrors naming the file and line.
func ParseBibTeX(name string, data []byte) ([]File, error) {
	p := &bibParser{src: string(data), name: name}
	var files []File
	for {
		kind, key, fields, err := p.next()
		if err != nil {
			return nil, err
		}
		if kind == "" {
			return files, nil
		}
		at := fmt.Sprintf("%s:%s", name, key)
		e, err := bibEntity(at, key, fields)
		if err != nil {
			return nil, err
		}
		files = append(files, File{Name: at, Entity: e, Bibliographic: true})
	}
}

var slugUnsafe = regexp.MustCompile(`[^a-z0-9_-]+`)

func bibEntity(at, key string, f map[string]string) (assistant.Entity, error) {
	e := assistant.Entity{
		Type:    assistant.Paper,
		Slug:    strings.Trim(slugUnsafe.ReplaceAllString(strings.ToLower(key), "-"), "-"),
		Title:   bibText(f["title"]),
		URL:     strings.TrimSpace(bibText(f["url"])),
		URLNote: bibText(f["url_note"]),
		Summary: bibText(f["abstract"]),
	}
	if e.URL == "" && f["doi"] != "" {
		doi := strings.TrimSpace(bibText(f["doi"]))
		doi = strings.TrimPrefix(strings.TrimPrefix(doi, "https://doi.org/"), "doi:")
		e.URL = "https://doi.org/" + doi
	}
	if y := strings.TrimSpace(bibText(f["year"])); y != "" {
		n, err := strconv.Atoi(y)
		if err != nil {
			return e, &FieldError{File: at, Field: "year", Message: fmt.Sprintf("%q is not a year", y)}
		}
		e.Year = &n
	}
	if a := f["author"]; a != "" {
		for _, name := range regexp.MustCompile(`\s+and\s+`).Split(strings.TrimSpace(a), -1) {
			name = bibText(name)
			if last, first, ok := strings.Cut(name, ","); ok {
				name = strings.TrimSpace(first) + " " + strings.TrimSpace(last)
			}
			if name != "" {
				e.Authors = append(e.Authors, name)
			}
		}
	}
	for _, k := range strings.FieldsFunc(bibText(f["keywords"]), func(r rune) bool { return r == ',' || r == ';' }) {
		k = strings.ToLower(strings.TrimSpace(k))
		switch {
		case k == "":
		case assistant.IsArchetype(k):
			e.Archetypes = append(e.Archetypes, k)
		default:
			e.Tags = append(e.Tags, k)
		}
	}
	return e, nil
}

// bibText removes the braces and escapes of a BibTeX value and folds its
// white space.
func bibText(s string) string {
	s = strings.NewReplacer(`\&`, "&", `\%`, "%", `\_`, "_", `\$`, "$", `\#`, "#", "{", "", "}", "", "~", " ", "--", "–").Replace(s)
	return strings.Join(strings.Fields(s), " ")
}

// bibParser walks a BibTeX source entry by entry.
type bibParser struct {
	src  string
	pos  int
	name string
}

func (p *bibParser) line() int { return strings.Count(p.src[:p.pos], "\n") + 1 }

func (p *bibParser) fail(format string, args ...any) error {
	return &FieldError{File: fmt.Sprintf("%s:%d", p.name, p.line()), Field: "bibtex", Message: fmt.Sprintf(format, args...)}
}

func (p *bibParser) skipSpace() {
	for p.pos < len(p.src) && unicode.IsSpace(rune(p.src[p.pos])) {
		p.pos++
	}
}

// next returns the next entry's kind (lowercase; "" at the end), key and
// fields (names lowercased, values raw). Text between entries is ignored,
// as BibTeX does.
func (p *bibParser) next() (kind, key string, fields map[string]string, err error) {
	for {
		at := strings.IndexByte(p.src[p.pos:], '@')
		if at < 0 {
			return "", "", nil, nil
		}
		p.pos += at + 1
		kind = strings.ToLower(p.ident())
		p.skipSpace()
		if p.pos >= len(p.src) || (p.src[p.pos] != '{' && p.src[p.pos] != '(') {
			return "", "", nil, p.fail("@%s is not followed by { or (", kind)
		}
		closer := byte('}')
		if p.src[p.pos] == '(' {
			closer = ')'
		}
		p.pos++
		switch kind {
		case "comment", "preamble", "string":
			if _, err := p.balanced(closer); err != nil {
				return "", "", nil, err
			}
			continue
		case "":
			return "", "", nil, p.fail("@ without an entry type")
		}
		p.skipSpace()
		start := p.pos
		for p.pos < len(p.src) && p.src[p.pos] != ',' && p.src[p.pos] != closer {
			p.pos++
		}
		key = strings.TrimSpace(p.src[start:p.pos])
		if key == "" || p.pos >= len(p.src) {
			return "", "", nil, p.fail("@%s entry without a citation key", kind)
		}
		fields = map[string]string{}
		for {
			p.skipSpace()
			if p.pos >= len(p.src) {
				return "", "", nil, p.fail("entry %s is not closed", key)
			}
			if p.src[p.pos] == closer {
				p.pos++
				return kind, key, fields, nil
			}
			if p.src[p.pos] == ',' {
				p.pos++
				continue
			}
			field := strings.ToLower(p.ident())
			if field == "" {
				return "", "", nil, p.fail("entry %s: expected a field name, found %q", key, p.src[p.pos:p.pos+1])
			}
			p.skipSpace()
			if p.pos >= len(p.src) || p.src[p.pos] != '=' {
				return "", "", nil, p.fail("entry %s: field %s has no = value", key, field)
			}
			p.pos++
			value, err := p.value(closer)
			if err != nil {
				return "", "", nil, err
			}
			if _, dup := fields[field]; dup {
				return "", "", nil, p.fail("entry %s: field %s appears twice", key, field)
			}
			fields[field] = value
		}
	}
}

func (p *bibParser) ident() string {
	start := p.pos
	for p.pos < len(p.src) {
		c := rune(p.src[p.pos])
		if !unicode.IsLetter(c) && !unicode.IsDigit(c) && c != '_' && c != '-' && c != ':' && c != '.' {
			break
		}
		p.pos++
	}
	return p.src[start:p.pos]
}

// value reads a field value: {braced}, "quoted" or a bare word or number,
// possibly joined with # (concatenation).
func (p *bibParser) value(closer byte) (string, error) {
	var parts []string
	for {
		p.skipSpace()
		if p.pos >= len(p.src) {
			return "", p.fail("value not closed")
		}
		switch c := p.src[p.pos]; {
		case c == '{':
			p.pos++
			v, err := p.balanced('}')
			if err != nil {
				return "", err
			}
			parts = append(parts, v)
		case c == '"':
			p.pos++
			start, depth := p.pos, 0
			for ; p.pos < len(p.src); p.pos++ {
				switch p.src[p.pos] {
				case '{':
					depth++
				case '}':
					depth--
				}
				if p.src[p.pos] == '"' && depth == 0 && p.src[p.pos-1] != '\\' {
					break
				}
			}
			if p.pos >= len(p.src) {
				return "", p.fail("quoted value not closed")
			}
			parts = append(parts, p.src[start:p.pos])
			p.pos++
		default:
			word := p.ident()
			if word == "" {
				return "", p.fail("expected a value, found %q", string(c))
			}
			parts = append(parts, word)
		}
		p.skipSpace()
		if p.pos < len(p.src) && p.src[p.pos] == '#' {
			p.pos++
			continue
		}
		return strings.Join(parts, ""), nil
	}
}

// balanced reads up to the closer that balances the opening already
// consumed, and returns what is inside.
func (p *bibParser) balanced(closer byte) (string, error) {
	start, depth := p.pos, 0
	for ; p.pos < len(p.src); p.pos++ {
		switch c := p.src[p.pos]; {
		case c == '{':
			depth++
		case c == '}' && depth > 0:
			depth--
		case c == closer && depth == 0:
			v := p.src[start:p.pos]
			p.pos++
			return v, nil
		}
	}
	return "", p.fail("unbalanced braces")
}
