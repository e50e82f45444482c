package knowledge_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/knowledge"
)

// TestRelated: a word of the text that triggers a vocabulary line relates
// to that line's concept phrases, stemmed; a word that triggers nothing
// relates to nothing.
func TestRelated(t *testing.T) {
	v, err := knowledge.ParseVocabulary("test", []byte("cfo, who signs => economic buyer, decision process\nchurn, attrition\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := v.Related("Our CFO never replies, and who signs is unclear; churn is up.")
	join := func(phrases [][]string) []string {
		var out []string
		for _, p := range phrases {
			out = append(out, strings.Join(p, " "))
		}
		return out
	}
	if cfo := join(got["cfo"]); !slices.Equal(cfo, []string{"econom buyer", "decis process"}) {
		t.Errorf("cfo relates to %q", cfo)
	}
	if sign := join(got["sign"]); !slices.Contains(sign, "econom buyer") {
		t.Errorf("the phrase's words relate too: %q", sign)
	}
	if churn := join(got["churn"]); !slices.Equal(churn, []string{"attrit"}) {
		t.Errorf("a group's other members: %q", churn)
	}
	if len(got["repli"]) != 0 {
		t.Errorf("a word that triggers nothing relates to %q", got["repli"])
	}
}
