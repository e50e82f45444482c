package storetest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
)

// testReviewSetting: review is off for a workspace that never set it
// (and for one that does not exist); a setting is kept and replaced; an
// invalid one, or one for a missing workspace, changes nothing.
func testReviewSetting(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	workspace(t, s, "a", "b")
	for _, ws := range []string{"a", "nope"} {
		if got, err := s.ReviewSetting(ctx, ws); err != nil || got != (assistant.ReviewSetting{}) {
			t.Errorf("ReviewSetting(%s) before any = %+v, %v; want off", ws, got, err)
		}
	}
	on := assistant.ReviewSetting{Enabled: true, RetentionDays: 7}
	must(t, s.SetReviewSetting(ctx, "a", on, day))
	if got, err := s.ReviewSetting(ctx, "a"); err != nil || got != on {
		t.Errorf("ReviewSetting(a) = %+v, %v; want %+v", got, err, on)
	}
	if got, _ := s.ReviewSetting(ctx, "b"); got.Enabled {
		t.Error("another workspace's setting changed")
	}
	for _, bad := range []assistant.ReviewSetting{{Enabled: true}, {Enabled: true, RetentionDays: 366}, {RetentionDays: -1}} {
		wantCode(t, "an invalid review setting", s.SetReviewSetting(ctx, "a", bad, day), assistant.EInvalid)
	}
	wantCode(t, "a review setting of a missing workspace", s.SetReviewSetting(ctx, "nope", on, day), assistant.ENotFound)
	if got, _ := s.ReviewSetting(ctx, "a"); got != on {
		t.Errorf("after refused changes ReviewSetting(a) = %+v, want %+v", got, on)
	}
	off := assistant.ReviewSetting{RetentionDays: 7}
	must(t, s.SetReviewSetting(ctx, "a", off, day.Add(time.Hour)))
	if got, _ := s.ReviewSetting(ctx, "a"); got != off {
		t.Errorf("after turning it off ReviewSetting(a) = %+v, want %+v", got, off)
	}
}

// review is a kept turn of workspace ws at `at`, with every field set.
func review(ws, id string, at time.Time) assistant.Review {
	return assistant.Review{ID: id, Workspace: ws, At: at, KeyID: "key_" + id, Surface: "POST /api/v1/chat", Mode: "operator",
		Level: "medium", Message: "message of " + id, History: 2, Answer: "answer of " + id + " [framework:theory-of-constraints]",
		Trace:     []byte(`[{"hop":0,"tool":"search_knowledge","input_summary":"q","result_summary":"3 hits"}]`),
		Knowledge: []byte(`[{"title":"Theory of Constraints","source":"framework:theory-of-constraints","url":null,"score":0.9,"snippet":"s"}]`),
		Verdicts:  []byte(`{"score":0.5,"level":"medium","totalClaims":2,"verifiedClaims":1,"verdicts":[{"claim":"c","status":"verified"}]}`)}
}

// sameJSON reports whether a and b hold the same JSON value (PostgreSQL
// keeps jsonb in a form of its own).
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Errorf("%s: %v", a, err)
		return false
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Errorf("%s: %v", b, err)
		return false
	}
	return reflect.DeepEqual(x, y)
}

// testReviewsKeepReadDelete: nothing is kept while review is off; on, a
// turn is kept with its expiry, listed newest first (ties by id, then
// paged) with its text but not its JSON, read back in full, and only in
// its workspace; deleting one or all deletes exactly those.
func testReviewsKeepReadDelete(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	workspace(t, s, "a", "b")
	if ok, err := s.KeepReview(ctx, review("a", "rev_off", day)); err != nil || ok {
		t.Fatalf("KeepReview with review never set = %v, %v; want false", ok, err)
	}
	must(t, s.SetReviewSetting(ctx, "a", assistant.ReviewSetting{RetentionDays: 7}, day))
	if ok, err := s.KeepReview(ctx, review("a", "rev_off", day)); err != nil || ok {
		t.Fatalf("KeepReview with review off = %v, %v; want false", ok, err)
	}
	must(t, s.SetReviewSetting(ctx, "a", assistant.ReviewSetting{Enabled: true, RetentionDays: 7}, day))
	must(t, s.SetReviewSetting(ctx, "b", assistant.ReviewSetting{Enabled: true, RetentionDays: 30}, day))
	at := func(h int) time.Time { return day.Add(time.Duration(h) * time.Hour) }
	for _, r := range []assistant.Review{review("a", "rev_1", at(1)), review("a", "rev_3", at(2)), review("a", "rev_2", at(2)), review("b", "rev_b", at(3))} {
		if ok, err := s.KeepReview(ctx, r); err != nil || !ok {
			t.Fatalf("KeepReview(%s) = %v, %v; want kept", r.ID, ok, err)
		}
	}
	if ok, err := s.KeepReview(ctx, review("a", "rev_1", at(5))); ok || assistant.ErrorCode(err) != assistant.EConflict {
		t.Errorf("KeepReview of an existing id = %v, %v; want EConflict", ok, err)
	}
	now := at(4)
	list, err := s.Reviews(ctx, "a", now, 0, 10)
	must(t, err)
	var ids []string
	for _, r := range list {
		ids = append(ids, r.ID)
	}
	if want := []string{"rev_3", "rev_2", "rev_1"}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("Reviews(a) = %v, want %v", ids, want)
	}
	want := review("a", "rev_1", at(1))
	got := list[2]
	if got.Message != want.Message || got.Answer != want.Answer || got.KeyID != want.KeyID || got.Surface != want.Surface ||
		got.Mode != want.Mode || got.Level != want.Level || got.History != want.History || !got.At.Equal(want.At) ||
		!got.ExpiresAt.Equal(want.At.Add(7*24*time.Hour)) || got.Trace != nil || got.Verdicts != nil || got.Knowledge != nil {
		t.Errorf("listed %+v\nwant the summary of %+v expiring 7 days later", got, want)
	}
	if page, _ := s.Reviews(ctx, "a", now, 1, 1); len(page) != 1 || page[0].ID != "rev_2" {
		t.Errorf("Reviews(a, offset 1, limit 1) = %+v, want rev_2", page)
	}
	full, err := s.Review(ctx, "a", "rev_1", now)
	must(t, err)
	if full.Message != want.Message || full.Answer != want.Answer || !full.ExpiresAt.Equal(got.ExpiresAt) ||
		!sameJSON(t, full.Trace, want.Trace) || !sameJSON(t, full.Knowledge, want.Knowledge) || !sameJSON(t, full.Verdicts, want.Verdicts) {
		t.Errorf("Review(rev_1) = %+v\nwant %+v", full, want)
	}
	_, err = s.Review(ctx, "b", "rev_1", now)
	wantCode(t, "a turn of another workspace", err, assistant.ENotFound)
	_, err = s.Review(ctx, "a", "rev_nope", now)
	wantCode(t, "a turn that does not exist", err, assistant.ENotFound)

	wantCode(t, "deleting a turn of another workspace", s.DeleteReview(ctx, "b", "rev_1"), assistant.ENotFound)
	must(t, s.DeleteReview(ctx, "a", "rev_1"))
	wantCode(t, "deleting a turn twice", s.DeleteReview(ctx, "a", "rev_1"), assistant.ENotFound)
	if n, err := s.DeleteReviews(ctx, "a"); err != nil || n != 2 {
		t.Errorf("DeleteReviews(a) = %d, %v; want 2", n, err)
	}
	if list, _ := s.Reviews(ctx, "a", now, 0, 10); len(list) != 0 {
		t.Errorf("after DeleteReviews(a): %+v", list)
	}
	if list, _ := s.Reviews(ctx, "b", now, 0, 10); len(list) != 1 {
		t.Errorf("another workspace's turns went: %+v", list)
	}
}

// testReviewsSetting: a new retention period moves the expiry of the
// turns kept; turning review off deletes them (and only that
// workspace's); turning it on again starts from nothing.
func testReviewsSetting(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	workspace(t, s, "a", "b")
	for _, ws := range []string{"a", "b"} {
		must(t, s.SetReviewSetting(ctx, ws, assistant.ReviewSetting{Enabled: true, RetentionDays: 30}, day))
		for _, id := range []string{"rev_1", "rev_2"} {
			if ok, err := s.KeepReview(ctx, review(ws, id+ws, day)); !ok || err != nil {
				t.Fatalf("KeepReview = %v, %v", ok, err)
			}
		}
	}
	must(t, s.SetReviewSetting(ctx, "a", assistant.ReviewSetting{Enabled: true, RetentionDays: 2}, day))
	r, err := s.Review(ctx, "a", "rev_1a", day)
	must(t, err)
	if want := day.Add(2 * 24 * time.Hour); !r.ExpiresAt.Equal(want) {
		t.Errorf("after a 2-day period the expiry is %v, want %v", r.ExpiresAt, want)
	}
	must(t, s.SetReviewSetting(ctx, "a", assistant.ReviewSetting{RetentionDays: 2}, day))
	if list, _ := s.Reviews(ctx, "a", day, 0, 10); len(list) != 0 {
		t.Errorf("after turning review off: %+v", list)
	}
	_, err = s.Review(ctx, "a", "rev_1a", day)
	wantCode(t, "a turn after review was turned off", err, assistant.ENotFound)
	if list, _ := s.Reviews(ctx, "b", day, 0, 10); len(list) != 2 {
		t.Errorf("another workspace's turns: %+v", list)
	}
	must(t, s.SetReviewSetting(ctx, "a", assistant.ReviewSetting{Enabled: true, RetentionDays: 2}, day))
	if list, _ := s.Reviews(ctx, "a", day, 0, 10); len(list) != 0 {
		t.Errorf("after turning review on again: %+v", list)
	}
}

// testReviewsExpiry: a turn is not read once its expiry is reached, even
// before the purge; the purge deletes exactly the expired turns of every
// workspace.
func testReviewsExpiry(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	workspace(t, s, "a", "b")
	must(t, s.SetReviewSetting(ctx, "a", assistant.ReviewSetting{Enabled: true, RetentionDays: 1}, day))
	must(t, s.SetReviewSetting(ctx, "b", assistant.ReviewSetting{Enabled: true, RetentionDays: 3}, day))
	for _, r := range []assistant.Review{review("a", "rev_a", day), review("b", "rev_b", day)} {
		if ok, err := s.KeepReview(ctx, r); !ok || err != nil {
			t.Fatalf("KeepReview = %v, %v", ok, err)
		}
	}
	end := day.Add(24 * time.Hour)
	if _, err := s.Review(ctx, "a", "rev_a", end.Add(-time.Millisecond)); err != nil {
		t.Errorf("a turn a moment before its expiry: %v", err)
	}
	_, err := s.Review(ctx, "a", "rev_a", end)
	wantCode(t, "a turn at its expiry", err, assistant.ENotFound)
	if list, _ := s.Reviews(ctx, "a", end, 0, 10); len(list) != 0 {
		t.Errorf("listed at its expiry: %+v", list)
	}
	if n, err := s.PurgeReviews(ctx, end.Add(-time.Millisecond)); err != nil || n != 0 {
		t.Errorf("PurgeReviews before any expiry = %d, %v; want 0", n, err)
	}
	if n, err := s.PurgeReviews(ctx, end); err != nil || n != 1 {
		t.Errorf("PurgeReviews at the first expiry = %d, %v; want 1", n, err)
	}
	if list, _ := s.Reviews(ctx, "a", day, 0, 10); len(list) != 0 {
		t.Errorf("a purged turn is still there: %+v", list)
	}
	if list, _ := s.Reviews(ctx, "b", end, 0, 10); len(list) != 1 {
		t.Errorf("a turn not expired was purged: %+v", list)
	}
}

// testReviewsTurnedOffConcurrently: turns kept while review is being
// turned off are refused or deleted with the rest, never left behind.
func testReviewsTurnedOffConcurrently(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	workspace(t, s, "a")
	for round := range 5 {
		must(t, s.SetReviewSetting(ctx, "a", assistant.ReviewSetting{Enabled: true, RetentionDays: 7}, day))
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				if _, err := s.KeepReview(ctx, review("a", fmt.Sprintf("rev_%d_%d", round, i), day)); err != nil {
					t.Errorf("KeepReview: %v", err)
				}
			})
		}
		wg.Go(func() { must(t, s.SetReviewSetting(ctx, "a", assistant.ReviewSetting{RetentionDays: 7}, day)) })
		wg.Wait()
		if list, _ := s.Reviews(ctx, "a", day, 0, 100); len(list) != 0 {
			t.Fatalf("round %d: %d turns kept after review was turned off", round, len(list))
		}
	}
}
