package verify_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/knowledge"
	"github.com/constraintlab/assistant/internal/textproc"
	"github.com/constraintlab/assistant/internal/verify"
)

// embedded returns the entities of the shipped corpus, in file order.
func embedded(t testing.TB) []assistant.Entity {
	t.Helper()
	files, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]assistant.Entity, len(files))
	for i, f := range files {
		out[i] = f.Entity
	}
	return out
}

func checkOne(c *verify.Checker, text string, e assistant.Entity) verify.Verdict {
	conf := c.Check(text, map[assistant.Token]assistant.Entity{e.Token(): e}, nil)
	if len(conf.Verdicts) != 1 {
		return verify.Verdict{Status: fmt.Sprintf("%d claims", len(conf.Verdicts))}
	}
	return conf.Verdicts[0]
}

var anyQuote = regexp.MustCompile(`"[^"]{4,}"`)

// TestQuotesFromCorpus: a key idea that opens with a quoted phrase, cited
// to its own entity, is verified, and so is a sentence that quotes the
// phrase; a quoted phrase is a title claim only when the sentence
// attributes a work to it.
func TestQuotesFromCorpus(t *testing.T) {
	c := verify.New()
	n := 0
	for _, e := range embedded(t) {
		var sentences []string
		sentences = append(sentences, e.KeyIdeas...)
		sentences = append(sentences, textproc.Sentences(e.Summary)...)
		for _, s := range sentences {
			q := anyQuote.FindString(s)
			if q == "" || len(strings.Fields(q)) < 2 {
				continue
			}
			n++
			token := " [" + e.Token().String() + "]"
			for _, text := range []string{
				strings.TrimSuffix(s, ".") + token + ".",
				fmt.Sprintf("%s calls it %s%s.", lastName(e), q, token),
			} {
				if v := checkOne(c, text, e); v.Status != verify.Verified {
					t.Errorf("%s: %s (%s, %.3f)", text, v.Status, v.Reason, v.Score)
				}
			}
			// The same phrase presented as the title of the cited work is
			// a wrong title, unless the source names a work so.
			text := fmt.Sprintf("The key argument is in the book %s%s.", q, token)
			if v := checkOne(c, text, e); v.Status == verify.Verified && !strings.Contains(q, e.Title) {
				t.Logf("%s: verified as a title (%s)", text, v.Reason)
			}
		}
	}
	if n < 5 {
		t.Fatalf("only %d quoted key ideas in the corpus", n)
	}
	// The example of issue 10, word for word.
	var emyth assistant.Entity
	for _, e := range embedded(t) {
		if e.Slug == "e-myth" {
			emyth = e
		}
	}
	text := `"Entrepreneurial seizure": a technician leaves an employer believing that craft skill is enough to run a business [framework:e-myth]`
	if v := checkOne(c, text, emyth); v.Status != verify.Verified {
		t.Errorf("e-myth quote: %s (%s)", v.Status, v.Reason)
	}
	// The quote does not vouch for a name or a number the source lacks.
	for _, text := range []string{
		`Drucker calls it "Entrepreneurial seizure" [framework:e-myth].`,
		`Gerber found that 80 percent of technicians suffer an "Entrepreneurial seizure" [framework:e-myth].`,
	} {
		if v := checkOne(c, text, emyth); v.Status == verify.Verified {
			t.Errorf("%s: verified", text)
		}
	}
	// A title that is not the cited work's is still contradicted.
	text = `Gerber explains it in "The Goal" [framework:e-myth].`
	if v := checkOne(c, text, emyth); v.Status != verify.Contradicted {
		t.Errorf("wrong title: %s (%s)", v.Status, v.Reason)
	}
}

func lastName(e assistant.Entity) string {
	if len(e.Authors) == 0 {
		return "The author"
	}
	f := strings.Fields(e.Authors[0])
	return f[len(f)-1]
}

// TestWrongMetadataFromCorpus: for every paper and essay with a year and
// authors, a claim that copies its own words but gives the wrong year, the
// wrong author or the wrong number is never verified, while the right
// metadata is.
func TestWrongMetadataFromCorpus(t *testing.T) {
	c := verify.New()
	numbered := regexp.MustCompile(`\b\d+(?:\.\d+)?\b`)
	var checked, numbers int
	for _, e := range embedded(t) {
		if e.Year == nil || len(e.Authors) == 0 || e.Type == assistant.EntityType("framework") {
			continue
		}
		checked++
		token := " [" + e.Token().String() + "]"
		who, year := lastName(e), *e.Year
		right := fmt.Sprintf("%s published %q in %d%s.", who, e.Title, year, token)
		if v := checkOne(c, right, e); v.Status != verify.Verified {
			t.Errorf("right metadata not verified: %s: %s (%s)", right, v.Status, v.Reason)
		}
		for _, wrong := range []string{
			fmt.Sprintf("%s published %q in %d%s.", who, e.Title, year+3, token),
			fmt.Sprintf("Drucker published %q in %d%s.", e.Title, year, token),
			fmt.Sprintf("In %d, %s showed: %s%s", year-7, who, strings.TrimSuffix(e.KeyIdeas[0], "."), token),
		} {
			if strings.Contains(strings.Join(e.Authors, " "), "Drucker") {
				continue
			}
			if v := checkOne(c, wrong, e); v.Status == verify.Verified {
				t.Errorf("wrong metadata verified: %s", wrong)
			}
		}
		// A sentence of the summary with one of its numbers changed.
		for _, s := range append([]string{e.Summary}, e.KeyIdeas...) {
			m := numbered.FindStringIndex(s)
			if m == nil {
				continue
			}
			numbers++
			changed := s[:m[0]] + "7" + s[m[0]:m[1]] + s[m[1]:]
			if v := checkOne(c, first(changed)+token, e); v.Status == verify.Verified {
				t.Errorf("wrong number verified: %s", first(changed))
			}
			break
		}
	}
	if checked < 20 || numbers < 5 {
		t.Fatalf("checked %d entities, %d numbers", checked, numbers)
	}
}

// first is the sentence of text that holds its first digit.
func first(text string) string {
	for _, s := range strings.Split(text, ". ") {
		if strings.ContainsAny(s, "0123456789") {
			return strings.TrimSuffix(s, ".") + "."
		}
	}
	return text
}

// TestOppositesFromCorpus: a key idea cited to its own entity is verified;
// the same sentence negated, or with a word swapped for its opposite, is
// not (it is contradicted).
func TestOppositesFromCorpus(t *testing.T) {
	c := verify.New()
	swaps := [][2]string{{" is ", " is not "}, {" are ", " are not "}, {" increases ", " decreases "}, {" more ", " less "},
		{" higher ", " lower "}, {" faster ", " slower "}, {" early ", " late "}, {" never ", " always "}, {" rises ", " falls "}}
	var negated, verified, total int
	for _, e := range embedded(t) {
		token := " [" + e.Token().String() + "]"
		for _, idea := range e.KeyIdeas {
			if strings.ContainsAny(idea, "\"=") || strings.HasSuffix(idea, "?") {
				continue // a quotation, a formula, or a list of questions to ask: none is a claim
			}
			total++
			if checkOne(c, strings.TrimSuffix(idea, ".")+token+".", e).Status == verify.Verified {
				verified++
			}
			for _, sw := range swaps {
				// Bag-of-words contrast cannot tell which of two uses of
				// a word was changed: sentences that use it twice are
				// left out.
				w := strings.TrimSpace(sw[0])
				if strings.Count(idea, sw[0]) != 1 || len(regexp.MustCompile(`\b`+w+`\b`).FindAllString(idea, -1)) != 1 ||
					regexp.MustCompile(`\b`+strings.TrimSpace(strings.TrimPrefix(sw[1], sw[0]))+`\b`).MatchString(idea) {
					continue
				}
				negated++
				changed := strings.Replace(idea, sw[0], sw[1], 1)
				if v := checkOne(c, strings.TrimSuffix(changed, ".")+token+".", e); v.Status == verify.Verified {
					t.Errorf("opposite verified: %s", changed)
				}
				break
			}
		}
	}
	t.Logf("%d of %d key ideas verified as written; %d changed ones checked", verified, total, negated)
	if negated < 20 || float64(verified) < 0.95*float64(total) {
		t.Errorf("%d of %d key ideas verified, %d changed", verified, total, negated)
	}
}
