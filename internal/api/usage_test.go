package api_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/constraintlab/assistant/internal/assistant"
)

// turnLog records the usage rows and citation events authenticate writes,
// and can refuse to write turns.
type turnLog struct {
	assistant.AccessStore
	mu    sync.Mutex
	rows  []assistant.UsageRecord
	turns [][]assistant.CitationEvent
	fail  error
}

func (l *turnLog) RecordUsage(ctx context.Context, r assistant.UsageRecord) error {
	l.mu.Lock()
	l.rows = append(l.rows, r)
	l.mu.Unlock()
	return l.AccessStore.RecordUsage(ctx, r)
}

func (l *turnLog) RecordTurn(ctx context.Context, r assistant.UsageRecord, c []assistant.CitationEvent) error {
	if l.fail != nil {
		return l.fail
	}
	l.mu.Lock()
	l.rows = append(l.rows, r)
	l.turns = append(l.turns, c)
	l.mu.Unlock()
	return l.AccessStore.RecordTurn(ctx, r, c)
}

// The authenticate middleware writes a chat turn's usage row, with its
// citation events in the same write (D5) and the turn's status, mode and
// source; a turn whose recording fails is answered 500, and its row (500)
// carries no citation.
func TestChatUsageRowsAreWrittenByTheMiddleware(t *testing.T) {
	f := newFixture(t, 0, 0)
	log := &turnLog{AccessStore: f.srv.Access}
	f.srv.Access = log
	key := f.newKey(t, "acme")
	body := `{"message":"We get plenty of demos but few deals close","source":"crm","mode":"customer"}`
	if r := f.chat(t, key, body); r.Code != 200 {
		t.Fatalf("chat: %d %s", r.Code, r.Body)
	}
	if r := f.chat(t, key, body, "Accept", "text/event-stream"); r.Code != 200 || !strings.Contains(r.Body.String(), "event: final") {
		t.Fatalf("streamed chat: %d %s", r.Code, r.Body)
	}
	log.mu.Lock()
	if len(log.rows) != 2 || len(log.turns) != 2 {
		t.Fatalf("rows %+v, turns %d; want 2 of each", log.rows, len(log.turns))
	}
	for i, row := range log.rows {
		if row.Status != 200 || row.Mode != "customer" || row.Source != "crm" || row.Workspace != "acme" ||
			row.KeyID == "" || row.Endpoint != "POST /api/v1/chat" {
			t.Errorf("usage row %d: %+v", i, row)
		}
		if len(log.turns[i]) == 0 || log.turns[i][0].Source != "crm" || log.turns[i][0].Workspace != "acme" {
			t.Errorf("citation events of turn %d: %+v", i, log.turns[i])
		}
	}
	log.rows, log.turns = nil, nil
	log.fail = errors.New("disk full")
	log.mu.Unlock()

	assertProblem(t, f.chat(t, key, body), 500)
	if r := f.chat(t, key, body, "Accept", "text/event-stream"); !strings.Contains(r.Body.String(), "event: error") {
		t.Fatalf("streamed chat that cannot be recorded: %s", r.Body)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.turns) != 0 || len(log.rows) != 2 || log.rows[0].Status != 500 || log.rows[1].Status != 500 {
		t.Errorf("after failed recordings: rows %+v, turns %+v", log.rows, log.turns)
	}
}
