package answereval

import (
	"bufio"
	"io"
	"slices"
	"strings"

	"github.com/constraintlab/assistant/internal/assistant"
)

// SetHeader is the header row of a blind set file.
const SetHeader = "id\tkind\tmode\tvertical\tfollows\tmessage\tnote"

// Row is one row of a blind set: a turn to run and what a good answer to
// it contains (the note, for the rater).
type Row struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	Mode string `json:"mode"`
	// Vertical is a catalog vertical id, or "" for none.
	Vertical string `json:"vertical,omitempty"`
	// Follows is, for a followup, the id of the earlier row whose turn
	// this one continues.
	Follows string `json:"follows,omitempty"`
	Message string `json:"message"`
	Note    string `json:"note,omitempty"`
}

// IsSet reports whether a file whose first line (not blank, not a comment)
// is first is a blind set rather than the older in|out<TAB>mode<TAB>question
// scope file.
func IsSet(first string) bool {
	return strings.TrimRight(first, "\r") == SetHeader
}

// ReadSet reads a blind set: a TSV file with the header row SetHeader,
// then one row per turn (blank lines and lines starting with # skipped).
// The note may be left off a row. Each id is given once; kind is one of
// Kinds; a followup row names an earlier row in follows and no other kind
// of row does; vertical is empty or a catalog vertical id; mode and message
// are not empty (the caller checks the mode against its personas). A
// malformed row is an error naming its line.
func ReadSet(r io.Reader) ([]Row, error) {
	var rows []Row
	ids := map[string]bool{}
	header := false
	err := eachLine(r, func(line int, text string) error {
		if !header {
			if !IsSet(text) {
				return assistant.Errorf(assistant.EInvalid, "line %d: want the header row %q", line, strings.ReplaceAll(SetHeader, "\t", "<TAB>"))
			}
			header = true
			return nil
		}
		row, err := parseRow(text, ids)
		if err != nil {
			return assistant.Errorf(assistant.EInvalid, "line %d: %s", line, assistant.ErrorMessage(err))
		}
		ids[row.ID] = true
		rows = append(rows, row)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, assistant.Errorf(assistant.EInvalid, "no rows after the header")
	}
	return rows, nil
}

// eachLine calls each with every line of r that is not blank or a #
// comment, numbered from 1 as in the file, carriage return removed, and
// stops at the first error it returns.
func eachLine(r io.Reader, each func(line int, text string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		if err := each(line, text); err != nil {
			return err
		}
	}
	return sc.Err()
}

// parseRow reads one row; earlier holds the ids of the rows before it.
func parseRow(text string, earlier map[string]bool) (Row, error) {
	f := strings.Split(text, "\t")
	if len(f) == 6 {
		f = append(f, "") // no note
	}
	if len(f) != 7 {
		return Row{}, assistant.Errorf(assistant.EInvalid, "want 7 tab-separated fields (%s), got %d", strings.ReplaceAll(SetHeader, "\t", ", "), len(f))
	}
	for i := range f {
		f[i] = strings.TrimSpace(f[i])
	}
	row := Row{ID: f[0], Kind: f[1], Mode: f[2], Vertical: f[3], Follows: f[4], Message: f[5], Note: f[6]}
	if row.Mode == "" {
		row.Mode = DefaultMode // as the API does for a request without mode
	}
	switch {
	case row.ID == "":
		return row, assistant.Errorf(assistant.EInvalid, "the id is empty")
	case earlier[row.ID]:
		return row, assistant.Errorf(assistant.EInvalid, "id %q is used twice", row.ID)
	case !slices.Contains(Kinds, row.Kind):
		return row, assistant.Errorf(assistant.EInvalid, "kind %q: want one of %s", row.Kind, strings.Join(Kinds, ", "))
	case row.Message == "":
		return row, assistant.Errorf(assistant.EInvalid, "the message is empty")
	case row.Kind == KindFollowup && !earlier[row.Follows]:
		return row, assistant.Errorf(assistant.EInvalid, "a followup must name an earlier row's id in follows, not %q", row.Follows)
	case row.Kind != KindFollowup && row.Follows != "":
		return row, assistant.Errorf(assistant.EInvalid, "only a followup row follows another")
	}
	if row.Vertical != "" {
		if err := assistant.CheckVertical(row.Vertical); err != nil {
			return row, err
		}
	}
	return row, nil
}

// DefaultMode is the mode of a row that names none: the API's default.
const DefaultMode = "operator"
