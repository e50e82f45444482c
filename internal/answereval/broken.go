package answereval

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/constraintlab/assistant/internal/textproc"
)

// BrokenAnswer is an answer with broken output and what is broken.
type BrokenAnswer struct {
	Answer  string   `json:"answer"` // the answer's id
	Reasons []string `json:"reasons"`
}

var (
	heading = regexp.MustCompile(`^#{1,6}(?:\s|$)`)
	// bullet matches a list item's marker and what follows it.
	bullet = regexp.MustCompile(`^(?:[-*+]|\d+[.)])(?:\s+(.*))?$`)
	// emptyCurlyQuote matches typographic quotes with nothing inside.
	emptyCurlyQuote = regexp.MustCompile(`“\s*”|‘\s*’`)
)

// Broken returns why an answer's output is broken, or nothing when it is
// not. Broken output is:
//   - an empty section: a Markdown heading followed by nothing but blank
//     lines up to the next heading or the end of the answer;
//   - an empty quote: straight double quotes with only white space inside
//     (quotes pair up along a line: the first with the second, the third
//     with the fourth, so `"a" "b"` is two quotes, not an empty one), or
//     typographic quotes (“”, ‘’) with only white space inside;
//   - a bare bullet: a list item (-, *, +, 1. or 1)) with no word after its
//     marker once citation tokens are removed, as when a model's list item
//     was only an invented token.
//
// Lines inside fenced code blocks (```) are not read.
func Broken(text string) []string {
	var reasons []string
	lines := strings.Split(text, "\n")
	openHeading, openLine, fenced := "", 0, false
	closeSection := func() {
		if openHeading != "" {
			reasons = append(reasons, fmt.Sprintf("empty section %q (line %d)", openHeading, openLine))
		}
		openHeading = ""
	}
	for i, raw := range lines {
		line := strings.TrimSpace(raw)
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			openHeading = ""
			continue
		}
		if fenced || line == "" {
			continue
		}
		n := i + 1
		if heading.MatchString(line) {
			closeSection()
			openHeading, openLine = line, n
			continue
		}
		openHeading = ""
		if m := bullet.FindStringSubmatch(line); m != nil && len(textproc.Words(citationToken.ReplaceAllString(m[1], " "))) == 0 {
			reasons = append(reasons, fmt.Sprintf("bare bullet %q (line %d)", line, n))
		}
		if emptyStraightQuote(line) || emptyCurlyQuote.MatchString(line) {
			reasons = append(reasons, fmt.Sprintf("empty quote (line %d)", n))
		}
	}
	closeSection()
	return reasons
}

// emptyStraightQuote reports whether a line holds a pair of straight double
// quotes with only white space between them, pairing the quotes of the
// line in order.
func emptyStraightQuote(line string) bool {
	parts := strings.Split(line, `"`)
	// parts[1], parts[3], ... are the insides of the pairs; a last,
	// unpaired quote leaves an odd count of quotes and no inside.
	for i := 1; i+1 < len(parts); i += 2 {
		if strings.TrimSpace(parts[i]) == "" {
			return true
		}
	}
	return false
}

// BrokenAnswers lists the answers with broken output, in order.
func BrokenAnswers(answers []Answer) []BrokenAnswer {
	out := []BrokenAnswer{}
	for _, a := range answers {
		if r := Broken(a.Text); len(r) > 0 {
			out = append(out, BrokenAnswer{Answer: a.ID, Reasons: r})
		}
	}
	return out
}
