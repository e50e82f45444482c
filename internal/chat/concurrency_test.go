package chat_test

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/constraintlab/assistant/internal/chat"
	"github.com/constraintlab/assistant/internal/retrieval"
)

// TestConcurrentTurnsAnswerAsOneAtATime: turns run at the same time (which
// share the pooled toolboxes, the remembered prompts, entity results and
// evidence variants) answer exactly as the same turns run one at a time.
// Run it with -race.
func TestConcurrentTurnsAnswerAsOneAtATime(t *testing.T) {
	s, db := fullService(t)
	ix := retrieval.NewIndex(db)
	s.Retriever, s.Knowledge = ix, ix.Reader(db)
	var ids atomic.Int64 // the helper's counter is not for concurrent turns
	s.NewID = func() string { return "r" + strconv.FormatInt(ids.Add(1), 10) }
	ctx := context.Background()
	verticals := []string{"", "ecommerce", "agency"}
	answer := func(i int) string {
		c := rubricCases[i%len(rubricCases)]
		r, _, err := s.Run(ctx, chat.Request{Message: c.question, Mode: c.mode, Vertical: verticals[i%len(verticals)]}, nil)
		if err != nil {
			t.Error(err)
			return ""
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Error(err)
		}
		return string(b)
	}
	n := 2 * len(rubricCases)
	if testing.Short() {
		n = 12
	}
	want := make([]string, n)
	for i := range n {
		want[i] = answer(i)
	}
	got := make([]string, n)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < n; i += 4 {
				got[i] = answer(i)
			}
		})
	}
	wg.Wait()
	for i := range n {
		if got[i] != want[i] {
			t.Errorf("turn %d answered differently when run alongside others:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}
