package webhook_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/sqlite"
	"github.com/constraintlab/assistant/internal/webhook"
)

func TestBackoffSchedule(t *testing.T) {
	b := webhook.Backoff{Base: 5 * time.Second, Max: time.Hour, Period: 24 * time.Hour}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		n    int
		r    float64
		want time.Duration
	}{
		{1, 0, 2500 * time.Millisecond}, // the upper half of 5s
		{1, 0.999999, 5 * time.Second},
		{2, 0, 5 * time.Second},
		{3, 0.5, 15 * time.Second}, // 20s: 10s + 0.5*10s
		{20, 0, 30 * time.Minute},  // capped at an hour
		{200, 0, 30 * time.Minute},
	} {
		got := b.Next(tc.n, t0, t0, tc.r).Sub(t0)
		if d := got - tc.want; d < -time.Millisecond || d > time.Millisecond {
			t.Errorf("Next(%d, r=%v) = +%v, want +%v", tc.n, tc.r, got, tc.want)
		}
	}
	// Past the period: give up.
	if next := b.Next(3, t0, t0.Add(24*time.Hour), 0); !next.IsZero() {
		t.Errorf("Next past the period = %v, want zero", next)
	}
}

// fixture is a store with one endpoint whose receiver runs in process.
type fixture struct {
	store  *sqlite.DB
	worker *webhook.Worker
	secret string
	mu     sync.Mutex
	now    time.Time
	got    []received
	fail   int // answer 500 to this many requests first
}

type received struct {
	id, body string
	err      error
}

func newFixture(t *testing.T, handler http.HandlerFunc) *fixture {
	f := &fixture{now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC), secret: webhook.NewSecret()}
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "db"), f.clock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f.store = db
	if handler == nil {
		handler = f.receive
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	sealer, _ := webhook.NewSealer(strings.Repeat("s", 32))
	ctx := t.Context()
	if err := db.EnsureWorkspace(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	ep := assistant.WebhookEndpoint{ID: "we_1", Workspace: "w", URL: srv.URL + "/hook", EventTypes: assistant.EventTypes,
		Secret: sealer.Seal("we_1", f.secret), Enabled: true, CreatedAt: f.now, CreatedBy: "test"}
	if err := db.CreateWebhookEndpoint(ctx, ep); err != nil {
		t.Fatal(err)
	}
	f.worker = &webhook.Worker{Store: db, Sealer: sealer, Client: webhook.NewClient(webhook.Guard{AllowPrivate: true}, nil),
		Now: f.clock, Owner: "test", Backoff: webhook.Backoff{Base: 10 * time.Second, Max: time.Minute, Period: 10 * time.Minute},
		Rand: func() float64 { return 0.5 }}
	return f
}

func (f *fixture) clock() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fixture) advance(to time.Time) {
	f.mu.Lock()
	f.now = to
	f.mu.Unlock()
}

func (f *fixture) receive(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	// The receiver's clock is the worker's (a fake one).
	err := webhook.Verify(f.secret, r.Header, body, f.now, webhook.DefaultTolerance)
	f.got = append(f.got, received{r.Header.Get(webhook.HeaderID), string(body), err})
	if f.fail > 0 {
		f.fail--
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// TestWorkerRetriesWithBackoff: a receiver failing its first three
// attempts gets the event a fourth time, with the same id and body and a
// valid signature each time, at the times the schedule says.
func TestWorkerRetriesWithBackoff(t *testing.T) {
	f := newFixture(t, nil)
	f.fail = 3
	ctx := t.Context()
	if err := f.store.CreateKey(ctx, assistant.APIKey{ID: "key000000001", Workspace: "w", Name: "k", CreatedAt: f.now, CreatedBy: "cli"}); err != nil {
		t.Fatal(err)
	}
	wantGaps := []time.Duration{7500 * time.Millisecond, 15 * time.Second, 30 * time.Second} // upper halves of 10s, 20s, 40s at r=0.5
	for attempt := 1; attempt <= 4; attempt++ {
		n, err := f.worker.RunOnce(ctx)
		if err != nil || n != 1 {
			t.Fatalf("attempt %d: RunOnce = %d, %v", attempt, n, err)
		}
		// Nothing is due before the next attempt's time.
		if n, _ := f.worker.RunOnce(ctx); n != 0 {
			t.Fatalf("attempt %d: %d deliveries due again at once", attempt, n)
		}
		ds, _ := f.store.Deliveries(ctx, "w", "", 10)
		d := ds[0]
		if d.Attempts != attempt {
			t.Errorf("attempts = %d, want %d", d.Attempts, attempt)
		}
		if attempt < 4 {
			if d.Status != assistant.DeliveryPending || d.LastStatus != 500 || d.LastError != "HTTP 500" {
				t.Errorf("after failed attempt %d: %+v", attempt, d)
			}
			if gap := d.NextAttemptAt.Sub(f.clock()); gap != wantGaps[attempt-1] {
				t.Errorf("after attempt %d the next comes %v later, want %v", attempt, gap, wantGaps[attempt-1])
			}
			f.advance(d.NextAttemptAt)
		} else if d.Status != assistant.DeliveryDelivered || d.LastStatus != 204 || d.DeliveredAt == nil {
			t.Errorf("after the fourth attempt: %+v", d)
		}
	}
	if len(f.got) != 4 {
		t.Fatalf("the receiver got %d requests, want 4", len(f.got))
	}
	for i, r := range f.got {
		if r.err != nil || r.id != f.got[0].id || r.body != f.got[0].body {
			t.Errorf("request %d: id %s, verify %v", i, r.id, r.err)
		}
	}
	var body struct {
		ID, Type, Timestamp string
		Data                struct{ Key map[string]any }
	}
	if err := json.Unmarshal([]byte(f.got[0].body), &body); err != nil || body.ID != f.got[0].id || body.Type != "key.created" ||
		body.Data.Key["id"] != "key000000001" || body.Timestamp != "2026-05-01T12:00:00Z" {
		t.Errorf("body %s (%v)", f.got[0].body, err)
	}
}

// TestWorkerGivesUpAfterThePeriod: past the period a failing delivery is
// marked failed, and a resend makes it pending again.
func TestWorkerGivesUpAfterThePeriod(t *testing.T) {
	f := newFixture(t, nil)
	f.fail = 1000
	ctx := t.Context()
	f.store.EnqueueEvent(ctx, assistant.WebhookEvent{ID: "msg_1", Workspace: "w", Type: "key.revoked", At: f.now, Data: json.RawMessage(`{}`)})
	for range 100 {
		if n, _ := f.worker.RunOnce(ctx); n == 0 {
			break
		}
		ds, _ := f.store.Deliveries(ctx, "w", "", 1)
		f.advance(ds[0].NextAttemptAt)
	}
	ds, _ := f.store.Deliveries(ctx, "w", "", 1)
	if ds[0].Status != assistant.DeliveryFailed || ds[0].Attempts < 5 {
		t.Fatalf("after the period: %+v", ds[0])
	}
	// Every attempt lay within the period.
	if last := f.clock(); last.Sub(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)) > 10*time.Minute {
		t.Errorf("an attempt at %v, past the period", last)
	}
	if err := f.store.ResendDelivery(ctx, "w", ds[0].ID, f.clock()); err != nil {
		t.Fatal(err)
	}
	f.fail = 0
	if n, _ := f.worker.RunOnce(ctx); n != 1 {
		t.Fatal("the resent delivery was not attempted")
	}
	ds, _ = f.store.Deliveries(ctx, "w", "", 1)
	if ds[0].Status != assistant.DeliveryDelivered {
		t.Errorf("after resend: %+v", ds[0])
	}
}

// TestWorkerDoesNotFollowRedirects: a 3xx is a failed attempt.
func TestWorkerDoesNotFollowRedirects(t *testing.T) {
	var hits int
	f := newFixture(t, func(w http.ResponseWriter, r *http.Request) {
		hits++
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	})
	ctx := t.Context()
	f.store.EnqueueEvent(ctx, assistant.WebhookEvent{ID: "msg_1", Workspace: "w", Type: "key.revoked", At: f.now, Data: json.RawMessage(`{}`)})
	f.worker.RunOnce(ctx)
	ds, _ := f.store.Deliveries(ctx, "w", "", 1)
	if hits != 1 || ds[0].Status != assistant.DeliveryPending || ds[0].LastStatus != 307 || !strings.Contains(ds[0].LastError, "redirect") {
		t.Errorf("hits %d, delivery %+v", hits, ds[0])
	}
}

// TestWorkerRefusesPrivateTargetsAtDelivery: an endpoint stored while
// private targets were allowed is not reached once they are not.
func TestWorkerRefusesPrivateTargetsAtDelivery(t *testing.T) {
	var hits int
	f := newFixture(t, func(w http.ResponseWriter, r *http.Request) { hits++ })
	f.worker.Client = webhook.NewClient(webhook.Guard{}, nil)
	ctx := t.Context()
	f.store.EnqueueEvent(ctx, assistant.WebhookEvent{ID: "msg_1", Workspace: "w", Type: "key.revoked", At: f.now, Data: json.RawMessage(`{}`)})
	f.worker.RunOnce(ctx)
	ds, _ := f.store.Deliveries(ctx, "w", "", 1)
	if hits != 0 || !strings.Contains(ds[0].LastError, "not public") {
		t.Errorf("hits %d, delivery %+v", hits, ds[0])
	}
}
