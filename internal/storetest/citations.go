package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
)

// day is the suite's reference time: midnight UTC.
var day = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

func cite(resp string, at time.Time, tokens ...assistant.Token) []assistant.CitationEvent {
	var out []assistant.CitationEvent
	for _, tk := range tokens {
		out = append(out, assistant.CitationEvent{ResponseID: resp, Workspace: "w", Source: "web", Token: tk, At: at})
	}
	return out
}

func leaderboard(t *testing.T, s Store, since, until time.Time, limit int) []assistant.LeaderboardEntry {
	t.Helper()
	rows, err := s.Leaderboard(t.Context(), since, until, limit)
	must(t, err)
	return rows
}

func testCitationDedupe(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	okrs, kaizen := tok(assistant.Framework, "okrs"), tok(assistant.Framework, "kaizen")
	// The same (response, token) twice in one call and again in a later
	// call counts once; another response counts again.
	must(t, s.RecordCitations(ctx, cite("r1", day, okrs, okrs, kaizen)))
	must(t, s.RecordCitations(ctx, cite("r1", day.Add(time.Minute), okrs)))
	must(t, s.RecordCitations(ctx, cite("r2", day, okrs)))
	must(t, s.RecordCitations(ctx, nil))
	got := leaderboard(t, s, day.Add(-time.Hour), day.Add(time.Hour), 10)
	want := []assistant.LeaderboardEntry{{Token: okrs, Citations: 2}, {Token: kaizen, Citations: 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("leaderboard %+v, want %+v", got, want)
	}
	// An invalid token refuses the whole call.
	bad := append(cite("r3", day, kaizen), cite("r3", day, tok(assistant.Framework, "Bad Slug"))...)
	wantCode(t, "an invalid token", s.RecordCitations(ctx, bad), assistant.EInvalid)
	if got := leaderboard(t, s, day.Add(-time.Hour), day.Add(time.Hour), 10); !reflect.DeepEqual(got, want) {
		t.Errorf("a refused call stored events: %+v", got)
	}
}

func testLeaderboard(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	a, b, c, d := tok(assistant.Framework, "a-b"), tok(assistant.Framework, "a_b"), tok(assistant.Paper, "c"), tok(assistant.Blog, "gone")
	doSync(t, s, assistant.OriginEmbedded, entity(a.Type, a.Slug, "Title A"), entity(b.Type, b.Slug, "Title B"), entity(c.Type, c.Slug, "Title C"))
	var events []assistant.CitationEvent
	events = append(events, cite("r1", day, a, b, c)...)
	events = append(events, cite("r2", day.Add(time.Hour), a, b, d)...)
	events = append(events, cite("r3", day.Add(2*time.Hour), c)...)
	events = append(events, cite("r4", day.Add(3*time.Hour), c, d)...)
	events = append(events, cite("r5", day.Add(-time.Millisecond), a)...) // before the window
	events = append(events, cite("r6", day.Add(24*time.Hour), a)...)      // at its end: outside
	must(t, s.RecordCitations(ctx, events))

	got := leaderboard(t, s, day, day.Add(24*time.Hour), 10)
	// c 3; then a-b, a_b and gone 2 each, by token in byte order.
	want := []assistant.LeaderboardEntry{
		{Token: c, Title: "Title C", Citations: 3}, {Token: d, Title: "", Citations: 2},
		{Token: a, Title: "Title A", Citations: 2}, {Token: b, Title: "Title B", Citations: 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("leaderboard\n got %+v\nwant %+v", got, want)
	}
	if got := leaderboard(t, s, day, day.Add(24*time.Hour), 2); !reflect.DeepEqual(got, want[:2]) {
		t.Errorf("limit 2: %+v", got)
	}
	// The window is half-open, since <= at < until, to the millisecond.
	if got := leaderboard(t, s, day.Add(-time.Millisecond), day, 10); len(got) != 1 || got[0].Token != a || got[0].Citations != 1 {
		t.Errorf("the millisecond before the window: %+v", got)
	}
	if got := leaderboard(t, s, day.Add(3*time.Hour+time.Millisecond), day.Add(24*time.Hour), 10); len(got) != 0 {
		t.Errorf("an empty window: %+v", got)
	}
}
