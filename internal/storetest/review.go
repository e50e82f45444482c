package storetest

import (
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
