package storetest

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
)

func endpoint(id, ws string, types ...string) assistant.WebhookEndpoint {
	return assistant.WebhookEndpoint{ID: id, Workspace: ws, URL: "https://hooks.example.com/" + id, EventTypes: types,
		Secret: []byte("sealed-" + id), Enabled: true, CreatedAt: day, CreatedBy: "cli"}
}

// deliveries returns the workspace's delivery log as "endpoint type"
// lines, oldest first.
func deliveryLines(t *testing.T, s Store, ws string) []string {
	t.Helper()
	ds, err := s.Deliveries(t.Context(), ws, "", 1000)
	must(t, err)
	var out []string
	for _, d := range slices.Backward(ds) {
		out = append(out, d.EndpointID+" "+d.EventType)
	}
	return out
}

func testWebhookEndpoints(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	workspace(t, s, "a", "b")
	e := endpoint("we_1", "a", assistant.EventKeyCreated, assistant.EventKeyRevoked)
	e.CreatedAt = day.Add(1234567891 * time.Nanosecond)
	must(t, s.CreateWebhookEndpoint(ctx, e))
	e2 := endpoint("we_2", "a")
	e2.CreatedAt = day.Add(2 * time.Second)
	must(t, s.CreateWebhookEndpoint(ctx, e2))
	wantCode(t, "a duplicate endpoint", s.CreateWebhookEndpoint(ctx, endpoint("we_1", "a")), assistant.EConflict)
	wantCode(t, "an endpoint in a missing workspace", s.CreateWebhookEndpoint(ctx, endpoint("we_3", "nope")), assistant.ENotFound)

	got, err := s.WebhookEndpoint(ctx, "a", "we_1")
	must(t, err)
	if got.URL != e.URL || !slices.Equal(got.EventTypes, e.EventTypes) || string(got.Secret) != "sealed-we_1" || !got.Enabled ||
		got.CreatedBy != "cli" || !got.CreatedAt.Equal(day.Add(1234*time.Millisecond)) || got.CreatedAt.Location() != time.UTC {
		t.Errorf("WebhookEndpoint = %+v", got)
	}
	_, err = s.WebhookEndpoint(ctx, "b", "we_1")
	wantCode(t, "another workspace's endpoint", err, assistant.ENotFound)
	list, err := s.WebhookEndpoints(ctx, "a")
	must(t, err)
	if len(list) != 2 || list[0].ID != "we_1" || list[1].ID != "we_2" || list[1].EventTypes == nil {
		t.Errorf("WebhookEndpoints = %+v", list)
	}

	got.Enabled, got.URL, got.Secret, got.EventTypes = false, "https://other.example.com/", []byte("rolled"), []string{assistant.EventKeyRolled}
	must(t, s.UpdateWebhookEndpoint(ctx, got))
	again, err := s.WebhookEndpoint(ctx, "a", "we_1")
	must(t, err)
	if again.Enabled || again.URL != got.URL || string(again.Secret) != "rolled" || !slices.Equal(again.EventTypes, got.EventTypes) {
		t.Errorf("after UpdateWebhookEndpoint: %+v", again)
	}
	got.Workspace = "b"
	wantCode(t, "updating another workspace's endpoint", s.UpdateWebhookEndpoint(ctx, got), assistant.ENotFound)
	wantCode(t, "deleting another workspace's endpoint", s.DeleteWebhookEndpoint(ctx, "b", "we_1"), assistant.ENotFound)
	must(t, s.DeleteWebhookEndpoint(ctx, "a", "we_1"))
	wantCode(t, "deleting twice", s.DeleteWebhookEndpoint(ctx, "a", "we_1"), assistant.ENotFound)
}

// testKeyEvents: key changes write their events in their own transaction,
// for the endpoints that listen.
func testKeyEvents(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	workspace(t, s, "a", "b")
	must(t, s.CreateWebhookEndpoint(ctx, endpoint("we_all", "a", assistant.EventTypes...)))
	must(t, s.CreateWebhookEndpoint(ctx, endpoint("we_rev", "a", assistant.EventKeyRevoked)))
	off := endpoint("we_off", "a", assistant.EventTypes...)
	off.Enabled = false
	must(t, s.CreateWebhookEndpoint(ctx, off))
	must(t, s.CreateWebhookEndpoint(ctx, endpoint("we_b", "b", assistant.EventTypes...)))

	must(t, s.CreateKey(ctx, key("key000000001", "a", day)))
	_, err := s.RevokeKey(ctx, "a", "key000000001", day.Add(time.Minute))
	must(t, err)
	_, err = s.RevokeKey(ctx, "", "key000000001", day.Add(2*time.Minute)) // already revoked: no second event
	must(t, err)
	// A failed create writes no event.
	wantCode(t, "a duplicate key", s.CreateKey(ctx, key("key000000001", "a", day)), assistant.EConflict)

	// Rolls: with a grace period, then at once.
	must(t, s.CreateKey(ctx, key("key000000002", "a", day)))
	old, err := s.RollKey(ctx, "a", "key000000002", key("key000000003", "a", day.Add(time.Hour)), day.Add(25*time.Hour))
	must(t, err)
	if old.RevokedAt != nil || old.ExpiresAt == nil || !old.ExpiresAt.Equal(day.Add(25*time.Hour)) {
		t.Errorf("RollKey with grace returned %+v", old)
	}
	old, err = s.RollKey(ctx, "a", "key000000003", key("key000000004", "a", day.Add(2*time.Hour)), day.Add(2*time.Hour))
	must(t, err)
	if old.RevokedAt == nil || !old.RevokedAt.Equal(day.Add(2*time.Hour)) {
		t.Errorf("RollKey without grace returned %+v", old)
	}
	_, err = s.RollKey(ctx, "a", "key000000003", key("key000000005", "a", day.Add(3*time.Hour)), day.Add(3*time.Hour))
	wantCode(t, "rolling a revoked key", err, assistant.EConflict)
	_, err = s.RollKey(ctx, "b", "key000000004", key("key000000005", "b", day.Add(3*time.Hour)), day.Add(3*time.Hour))
	wantCode(t, "rolling another workspace's key", err, assistant.ENotFound)
	if _, err := s.KeyByID(ctx, "key000000005"); assistant.ErrorCode(err) != assistant.ENotFound {
		t.Errorf("a refused roll stored its new key: %v", err)
	}

	want := []string{
		"we_all key.created", "we_all key.revoked", "we_rev key.revoked",
		"we_all key.created",                      // key 2
		"we_all key.created", "we_all key.rolled", // 3 replaces 2
		"we_all key.created", "we_all key.revoked", "we_rev key.revoked", "we_all key.rolled", // 4 replaces 3
	}
	if got := deliveryLines(t, s, "a"); !slices.Equal(got, want) {
		t.Errorf("deliveries of a:\n got %q\nwant %q", got, want)
	}
	if got := deliveryLines(t, s, "b"); len(got) != 0 {
		t.Errorf("deliveries of b: %q", got)
	}

	// The bodies: the key, never its hash; key.rolled names the replacement.
	jobs, err := s.ClaimDeliveries(ctx, "w", day.Add(time.Hour*24), time.Minute, 100, 100)
	must(t, err)
	if len(jobs) != len(want) {
		t.Fatalf("claimed %d deliveries, want %d", len(jobs), len(want))
	}
	for _, j := range jobs {
		var data struct {
			Key        map[string]any `json:"key"`
			ReplacedBy map[string]any `json:"replaced_by"`
		}
		if err := json.Unmarshal(j.Event.Data, &data); err != nil || data.Key["id"] == nil || data.Key["hash"] != nil {
			t.Errorf("event %s data %s (%v)", j.Event.Type, j.Event.Data, err)
		}
		if j.Event.Type == assistant.EventKeyRolled && data.ReplacedBy["id"] == nil {
			t.Errorf("key.rolled data %s names no replacement", j.Event.Data)
		}
		if j.Event.Workspace != "a" || j.Endpoint.ID != j.Delivery.EndpointID || string(j.Endpoint.Secret) != "sealed-"+j.Endpoint.ID {
			t.Errorf("job %+v", j)
		}
	}
}

func testDeliveryClaims(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	workspace(t, s, "a")
	must(t, s.CreateWebhookEndpoint(ctx, endpoint("we_1", "a", "x.y")))
	must(t, s.CreateWebhookEndpoint(ctx, endpoint("we_2", "a", "x.y")))
	for i := range 5 {
		n, err := s.EnqueueEvent(ctx, assistant.WebhookEvent{ID: assistant.NewID("msg_"), Workspace: "a", Type: "x.y",
			At: day.Add(time.Duration(i) * time.Second), Data: json.RawMessage(`{"i":` + string(rune('0'+i)) + `}`)})
		must(t, err)
		if n != 2 {
			t.Fatalf("EnqueueEvent made %d deliveries, want 2", n)
		}
	}
	if n, err := s.EnqueueEvent(ctx, assistant.WebhookEvent{ID: assistant.NewID("msg_"), Workspace: "a", Type: "nobody.listens", At: day, Data: json.RawMessage(`{}`)}); err != nil || n != 0 {
		t.Errorf("an event nobody listens to: %d, %v", n, err)
	}
	now := day.Add(time.Minute)

	// Per endpoint at most 2 under a lease: 4 claimed out of 10.
	a, err := s.ClaimDeliveries(ctx, "A", now, time.Minute, 100, 2)
	must(t, err)
	if len(a) != 4 {
		t.Fatalf("first claim took %d, want 4", len(a))
	}
	if a[0].Delivery.Attempts != 1 || string(a[0].Event.Data) != `{"i":0}` || !a[0].Event.At.Equal(day) {
		t.Errorf("first job %+v", a[0])
	}
	// Nothing more while the leases live.
	b, err := s.ClaimDeliveries(ctx, "B", now, time.Minute, 100, 2)
	must(t, err)
	if len(b) != 0 {
		t.Errorf("second claim took %d while the cap is reached", len(b))
	}
	// A success, a retry later, a failure for good; a stranger's result is ignored.
	r := assistant.DeliveryResult{Status: 500, Error: "HTTP 500", ResponseTime: 12 * time.Millisecond, At: now}
	if ok, err := s.FinishDelivery(ctx, a[1].Delivery.ID, "B", withNext(r, now.Add(time.Hour))); err != nil || ok {
		t.Errorf("FinishDelivery by a non-owner: %v, %v", ok, err)
	}
	ok, err := s.FinishDelivery(ctx, a[0].Delivery.ID, "A", assistant.DeliveryResult{Delivered: true, Status: 204, At: now, ResponseTime: 5 * time.Millisecond})
	must(t, err)
	ok2, err := s.FinishDelivery(ctx, a[1].Delivery.ID, "A", withNext(r, now.Add(time.Hour)))
	must(t, err)
	ok3, err := s.FinishDelivery(ctx, a[2].Delivery.ID, "A", r)
	must(t, err)
	if !ok || !ok2 || !ok3 {
		t.Errorf("FinishDelivery by the owner: %v %v %v", ok, ok2, ok3)
	}
	log, err := s.Deliveries(ctx, "a", "", 100)
	must(t, err)
	byID := map[int64]assistant.WebhookDelivery{}
	for _, d := range log {
		byID[d.ID] = d
	}
	if d := byID[a[0].Delivery.ID]; d.Status != assistant.DeliveryDelivered || d.DeliveredAt == nil || d.LastStatus != 204 || d.ResponseTime != 5*time.Millisecond {
		t.Errorf("delivered row %+v", d)
	}
	if d := byID[a[1].Delivery.ID]; d.Status != assistant.DeliveryPending || !d.NextAttemptAt.Equal(now.Add(time.Hour)) || d.LastError != "HTTP 500" || d.Attempts != 1 {
		t.Errorf("retried row %+v", d)
	}
	if d := byID[a[2].Delivery.ID]; d.Status != assistant.DeliveryFailed || d.LastStatus != 500 {
		t.Errorf("failed row %+v", d)
	}

	// a[3] is still leased to A; when the lease runs out it is due again
	// (A died), and the attempt counts.
	later := now.Add(2 * time.Minute)
	c, err := s.ClaimDeliveries(ctx, "C", later, time.Minute, 100, 100)
	must(t, err)
	ids := map[int64]int{}
	for _, j := range c {
		ids[j.Delivery.ID] = j.Delivery.Attempts
	}
	if ids[a[3].Delivery.ID] != 2 || len(c) != 7 { // 10 less one delivered, one failed, one not due
		t.Errorf("claim after the lease ran out: %v (len %d)", ids, len(c))
	}
	if _, ok := ids[a[1].Delivery.ID]; ok {
		t.Error("a delivery not due yet was claimed")
	}
	// The dead owner's late failure is ignored; a late success counts.
	if ok, _ := s.FinishDelivery(ctx, a[3].Delivery.ID, "A", withNext(r, later)); ok {
		t.Error("a lost lease's failure was recorded")
	}

	// Resend: a failed delivery is pending and due again.
	must(t, s.ResendDelivery(ctx, "a", a[2].Delivery.ID, later))
	wantCode(t, "resending another workspace's delivery", s.ResendDelivery(ctx, "b", a[2].Delivery.ID, later), assistant.ENotFound)
	d, err := s.ClaimDeliveries(ctx, "D", later, time.Minute, 100, 100)
	must(t, err)
	if len(d) != 1 || d[0].Delivery.ID != a[2].Delivery.ID {
		t.Errorf("claim after resend: %+v", d)
	}

	// A disabled endpoint's deliveries wait; a deleted one's go.
	e, err := s.WebhookEndpoint(ctx, "a", "we_2")
	must(t, err)
	e.Enabled = false
	must(t, s.UpdateWebhookEndpoint(ctx, e))
	f, err := s.ClaimDeliveries(ctx, "F", later.Add(3*time.Hour), time.Minute, 100, 100)
	must(t, err)
	for _, j := range f {
		if j.Endpoint.ID == "we_2" {
			t.Error("a disabled endpoint's delivery was claimed")
		}
	}
	must(t, s.DeleteWebhookEndpoint(ctx, "a", "we_2"))
	if ds, _ := s.Deliveries(ctx, "a", "we_2", 100); len(ds) != 0 {
		t.Errorf("a deleted endpoint still has %d deliveries", len(ds))
	}

	// Purge: finished rows older than the cut go, pending ones stay.
	n, err := s.PurgeWebhooks(ctx, later.Add(24*time.Hour))
	must(t, err)
	rest, _ := s.Deliveries(ctx, "a", "", 100)
	for _, d := range rest {
		if d.Status != assistant.DeliveryPending {
			t.Errorf("purge left %+v", d)
		}
	}
	if n == 0 {
		t.Error("purge deleted nothing")
	}
}

func withNext(r assistant.DeliveryResult, next time.Time) assistant.DeliveryResult {
	r.NextAttemptAt = next
	return r
}

func testAsyncTurns(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	workspace(t, s, "a", "b")
	must(t, s.CreateWebhookEndpoint(ctx, endpoint("we_1", "a", assistant.EventChatTurnCompleted)))
	submit := func(ws, id string, at time.Time) error {
		return s.SubmitTurn(ctx, assistant.AsyncTurn{ID: id, Workspace: ws, KeyID: "key000000001",
			Request: json.RawMessage(`{"message":"secret text"}`), SubmittedAt: at}, 2)
	}
	must(t, submit("a", "turn_1", day))
	must(t, submit("a", "turn_2", day.Add(time.Second)))
	wantCode(t, "a third turn past the queue's bound", submit("a", "turn_3", day), assistant.ERateLimited)
	must(t, submit("b", "turn_b", day.Add(2*time.Second))) // each workspace has its own bound

	got, err := s.Turn(ctx, "a", "turn_1")
	must(t, err)
	if got.State != assistant.TurnQueued || string(got.Request) != `{"message":"secret text"}` || got.KeyID != "key000000001" || !got.SubmittedAt.Equal(day) {
		t.Errorf("Turn = %+v", got)
	}
	_, err = s.Turn(ctx, "b", "turn_1")
	wantCode(t, "another workspace's turn", err, assistant.ENotFound)

	now := day.Add(time.Minute)
	claimed, err := s.ClaimTurns(ctx, "A", now, time.Minute, 2)
	must(t, err)
	if len(claimed) != 2 || claimed[0].ID != "turn_1" || claimed[1].ID != "turn_2" || claimed[0].State != assistant.TurnRunning || claimed[0].Attempts != 1 {
		t.Fatalf("ClaimTurns = %+v", claimed)
	}
	// Running turns still count against the bound.
	wantCode(t, "a turn while two run", submit("a", "turn_3", now), assistant.ERateLimited)

	tok := assistant.Token{Type: assistant.Framework, Slug: "async-cited"}
	ok, err := s.CompleteTurn(ctx, "turn_1", "A", assistant.TurnResult{Response: json.RawMessage(`{"response":"done"}`),
		Citations: []assistant.CitationEvent{{ResponseID: "resp_1", Workspace: "a", Token: tok, At: now}}, At: now})
	must(t, err)
	if !ok {
		t.Fatal("CompleteTurn by the owner reported false")
	}
	if ok, _ := s.CompleteTurn(ctx, "turn_2", "B", assistant.TurnResult{Problem: json.RawMessage(`{}`), At: now}); ok {
		t.Error("CompleteTurn by a non-owner reported true")
	}
	got, err = s.Turn(ctx, "a", "turn_1")
	must(t, err)
	if got.State != assistant.TurnSucceeded || got.Request != nil || string(got.Response) != `{"response":"done"}` || got.CompletedAt == nil {
		t.Errorf("completed turn = %+v (the request must be gone)", got)
	}
	if lb := leaderboard(t, s, day, now.Add(time.Hour), 10); len(lb) != 1 || lb[0].Token != tok {
		t.Errorf("the turn's citations were not recorded with it: %+v", lb)
	}
	// Its event, with the response, for the listening endpoint.
	jobs, err := s.ClaimDeliveries(ctx, "W", now, time.Minute, 10, 10)
	must(t, err)
	if len(jobs) != 1 || jobs[0].Event.Type != assistant.EventChatTurnCompleted {
		t.Fatalf("deliveries after completion: %+v", jobs)
	}
	var data struct {
		TurnID   string          `json:"turn_id"`
		Status   string          `json:"status"`
		Response json.RawMessage `json:"response"`
	}
	must(t, json.Unmarshal(jobs[0].Event.Data, &data))
	if data.TurnID != "turn_1" || data.Status != assistant.TurnSucceeded || string(data.Response) != `{"response":"done"}` {
		t.Errorf("chat.turn.completed data %s", jobs[0].Event.Data)
	}

	// A renewed lease keeps the turn; only its owner renews.
	if ok, err := s.RenewTurn(ctx, "turn_2", "A", now.Add(90*time.Second)); err != nil || !ok {
		t.Errorf("RenewTurn by the owner: %v, %v", ok, err)
	}
	if ok, _ := s.RenewTurn(ctx, "turn_2", "B", now.Add(time.Hour)); ok {
		t.Error("RenewTurn by a non-owner reported true")
	}
	if ok, _ := s.RenewTurn(ctx, "turn_1", "A", now.Add(time.Hour)); ok {
		t.Error("RenewTurn of a completed turn reported true")
	}
	if c, _ := s.ClaimTurns(ctx, "B", now.Add(80*time.Second), time.Minute, 10); len(c) != 1 || c[0].ID != "turn_b" {
		t.Errorf("a claim within the renewed lease took %+v", c)
	}
	// turn_2's owner died: after its lease it is claimed again.
	again, err := s.ClaimTurns(ctx, "B", now.Add(2*time.Minute), time.Minute, 10)
	must(t, err)
	ids := []string{}
	for _, t := range again {
		ids = append(ids, t.ID)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"turn_2"}) {
		t.Errorf("second claim %v", ids)
	}
	ok, err = s.CompleteTurn(ctx, "turn_2", "B", assistant.TurnResult{Problem: json.RawMessage(`{"status":502}`), At: now, KeepRequest: true})
	must(t, err)
	got, _ = s.Turn(ctx, "a", "turn_2")
	if !ok || got.State != assistant.TurnFailed || string(got.Problem) != `{"status":502}` || got.Request == nil || got.Attempts != 2 {
		t.Errorf("failed turn kept for review = %+v", got)
	}
	// Completed turns no longer count against the bound.
	must(t, submit("a", "turn_3", now))

	n, err := s.PurgeWebhooks(ctx, now.Add(time.Second))
	must(t, err)
	if _, err := s.Turn(ctx, "a", "turn_1"); assistant.ErrorCode(err) != assistant.ENotFound || n < 2 {
		t.Errorf("purge (%d rows) left a completed turn: %v", n, err)
	}
	if _, err := s.Turn(ctx, "a", "turn_3"); err != nil {
		t.Errorf("purge removed a queued turn: %v", err)
	}
}
