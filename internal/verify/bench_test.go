package verify_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/verify"
)

// answer300 is an answer of about 300 words in the persona's shape, with
// claims citing real corpus entities and uncited advice.
const answer300 = `## The constraint
**Delivery capacity.** Your orders wait in front of one station, and everything else waits on it [framework:theory-of-constraints].
The Theory of Constraints was written by Goldratt and Cox in 1984 [framework:theory-of-constraints].
Kingman showed that waiting time explodes as utilization approaches one [paper:kingman-1961-heavy-traffic].
Little published the proof that work in process equals throughput times lead time in 1961 [paper:little-1961-queuing-formula].

## What to do
- Find the station where work waits longest: that is the constraint [framework:theory-of-constraints].
- Build the schedule around the constraint's capacity and release work only as fast as it can take it [framework:drum-buffer-rope].
- Keep a time buffer of work in front of the constraint so it never starves [framework:drum-buffer-rope].
- Cut the batch sizes upstream so the queue shrinks and lead times fall [paper:kingman-1961-heavy-traffic].
- "Entrepreneurial seizure": a technician leaves an employer believing that craft skill is enough to run a business [framework:e-myth].
- Every owner holds three roles, the Entrepreneur, the Manager and the Technician, and most live in the third [framework:e-myth].
- Document the routine of the constraint so people of ordinary skill can run it [framework:e-myth].

## What to measure
- Orders completed per week at the constraint.
- Lead time from order to dispatch, measured every week.
- Idle hours of the constraint, which are lost for the whole company.

## Watch out
Adding capacity anywhere but at the constraint only adds inventory and hides the real problem.
Customers prefer blue logos to red ones, according to Kingman in 1973 [paper:kingman-1961-heavy-traffic].
If utilization stays above ninety percent, expect queues that grow without warning and promise dates you cannot keep.
Review the plan with the team after two weeks and move the buffer if the constraint has shifted elsewhere in the flow.`

func benchInputs(t testing.TB) (map[assistant.Token]assistant.Entity, []assistant.Entity) {
	cited := map[assistant.Token]assistant.Entity{}
	var hits []assistant.Entity
	want := map[string]bool{}
	for _, cl := range verify.SplitClaims(answer300) {
		for _, tok := range cl.Citations {
			want[tok.String()] = true
		}
	}
	for _, e := range embedded(t) {
		if want[e.Token().String()] {
			cited[e.Token()] = e
			hits = append(hits, e)
		}
	}
	if len(cited) != len(want) {
		t.Fatalf("resolved %d of %d tokens", len(cited), len(want))
	}
	return cited, hits
}

// TestDeterministic: the same text gets the same verdicts, every time.
func TestDeterministic(t *testing.T) {
	if n := len(strings.Fields(answer300)); n < 280 || n > 340 {
		t.Fatalf("the benchmark answer has %d words", n)
	}
	cited, hits := benchInputs(t)
	first, _ := json.Marshal(verify.New().Check(answer300, cited, hits))
	for i := 0; i < 20; i++ {
		again, _ := json.Marshal(verify.New().Check(answer300, cited, hits))
		if string(again) != string(first) {
			t.Fatalf("run %d differs:\n%s\n%s", i, first, again)
		}
	}
	var conf verify.Confidence
	json.Unmarshal(first, &conf)
	for _, v := range conf.Verdicts {
		t.Logf("%-12s %.3f %-12s %s", v.Status, v.Score, v.Basis, v.Claim)
	}
}

// BenchmarkCheck300Words verifies a 300-word answer with cited and
// uncited claims against real corpus entities (budget: 20 ms).
func BenchmarkCheck300Words(b *testing.B) {
	cited, hits := benchInputs(b)
	c := verify.New()
	c.Check(answer300, cited, hits) // load the word ranks once
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.Check(answer300, cited, hits)
	}
}
