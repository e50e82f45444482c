package verify_test

import (
	"testing"
	"unicode/utf16"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/verify"
)

// TestEvidenceOffsetsAreUTF16: offsets count UTF-16 code units, as a
// JavaScript client indexes the card's strings: an emoji before the
// passage counts two, "λ" one.
func TestEvidenceOffsetsAreUTF16(t *testing.T) {
	e := assistant.Entity{Type: "framework", Slug: "flow", Title: "Flow 🚀",
		Summary: "Flow λ 🚀 matters. Queues in front of the bottleneck set the lead time of every order."}
	v := checkOne(verify.New(), "Queues in front of the bottleneck set the lead time of every order [framework:flow].", e)
	ev := v.Evidence
	if v.Status != verify.Verified || ev == nil {
		t.Fatalf("%s (%s)", v.Status, v.Reason)
	}
	want := "Queues in front of the bottleneck set the lead time of every order."
	units := utf16.Encode([]rune(e.Summary))
	if ev.Field != "summary" || ev.Quote != want || string(utf16.Decode(units[ev.Start:ev.End])) != want {
		t.Fatalf("evidence %+v", ev)
	}
	if ev.Start != 19 { // "Flow λ 🚀 matters. " is 18 characters, 19 UTF-16 units
		t.Errorf("start %d, want 19", ev.Start)
	}
	if s, ok := verify.UTF16Slice(e.Summary, ev.Start, ev.End); !ok || s != want {
		t.Errorf("UTF16Slice = %q, %v", s, ok)
	}
	if _, ok := verify.UTF16Slice("a🚀b", 0, 2); ok {
		t.Error("a slice that ends inside a surrogate pair is accepted")
	}
}

// TestContradictedYearIsLocated: a wrong year is contradicted by the
// card's year field.
func TestContradictedYearIsLocated(t *testing.T) {
	little := entityBySlug(t, "little-1961-queuing-formula")
	v := checkOne(verify.New(), "Little published the proof of L = λW in 1971 [paper:little-1961-queuing-formula].", little)
	if v.Status != verify.Contradicted || v.Evidence == nil || v.Evidence.Field != "year" || v.Evidence.Quote != "1961" ||
		v.Evidence.Start != 0 || v.Evidence.End != 4 {
		t.Fatalf("%s %+v", v.Status, v.Evidence)
	}
}
