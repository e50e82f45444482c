package verify_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/verify"
)

func TestZZGolden(t *testing.T) {
	out := os.Getenv("GOLDEN_OUT")
	if out == "" {
		t.Skip()
	}
	var b strings.Builder
	for _, name := range []string{"wice_claim_dev.jsonl", "wice_claim_test.jsonl"} {
		f, err := os.Open("/work/shared/eval/wice/" + name)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := verify.ReadJSONL[verify.WiCERow](f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			fmt.Fprintf(&b, "%.12f\n", verify.EvidenceScore(r.Claim, r.Evidence))
		}
	}
	// every entity: each summary sentence as a claim against the entity, and against all hits
	es := embedded(t)
	c := verify.New()
	for i, e := range es {
		hits := es[max(0, i-3):min(len(es), i+3)]
		conf := c.Check(e.Summary+" ["+e.Token().String()+"]", map[assistant.Token]assistant.Entity{e.Token(): e}, nil)
		j, _ := json.Marshal(conf)
		fmt.Fprintf(&b, "%s\n", j)
		conf = c.Check(e.Summary, nil, hits)
		j, _ = json.Marshal(conf)
		fmt.Fprintf(&b, "%s\n", j)
		tok := " [" + e.Token().String() + "]"
		cm := map[assistant.Token]assistant.Entity{e.Token(): e}
		for _, txt := range []string{
			"In \"" + e.Title + "\", Peter Drucker wrote in 1999 that focus matters" + tok + ".",
			"The book \"" + e.Title + "\" by " + strings.Join(e.Authors, " and ") + " says \"" + firstWords(e.Summary, 5) + "\" about work" + tok + ".",
			"According to \"" + firstWords(e.Summary, 6) + "\", teams are slower in December" + tok + ".",
			"Goldratt and Cox wrote \"The Goal\" in 1984" + tok + ".",
		} {
			j, _ := json.Marshal(c.Check(txt, cm, nil))
			fmt.Fprintf(&b, "%s\n", j)
		}
		if len(e.KeyIdeas) > 0 {
			conf = c.Check("It is not true that "+e.KeyIdeas[0]+" ["+e.Token().String()+"]", map[assistant.Token]assistant.Entity{e.Token(): e}, nil)
			j, _ = json.Marshal(conf)
			fmt.Fprintf(&b, "%s\n", j)
		}
	}
	os.WriteFile(out, []byte(b.String()), 0o644)
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		f = f[:n]
	}
	return strings.Join(f, " ")
}
