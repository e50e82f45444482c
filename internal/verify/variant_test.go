package verify

import (
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/constraintlab/assistant/internal/assistant"
)

// TestVariantIsTheEvidenceOfTheWholeEntity: the evidence of an entity
// with key ideas added, built from its base (variantOf), reads as the
// evidence built from all its passages: the same passages, locations,
// postings of every term, words, numbers and directions.
func TestVariantIsTheEvidenceOfTheWholeEntity(t *testing.T) {
	year := 1984
	base := assistant.Entity{Type: "framework", Slug: "theory-of-constraints", Title: "Theory of Constraints", Year: &year,
		Authors: []string{"Eliyahu Goldratt"}, Summary: "A system is limited by one constraint. Throughput rises only when it is exploited.",
		KeyIdeas:  []string{"Identify the constraint first.", "Subordinate everything else to the constraint."},
		WhenToUse: []string{"When work piles up before one step."}, Pitfalls: []string{"Optimising a step that is not the constraint wastes effort."},
		Tags: []string{"throughput", "bottleneck"}}
	variant := base
	variant.KeyIdeas = append(slices.Clone(base.KeyIdeas), "Cut the packing queue by 30% before hiring.", "Measure orders shipped per day, not hours worked.")

	var bases entityBases
	if ev := bases.of(base); ev.base != nil {
		t.Fatal("the entity itself came back as a variant")
	}
	got, want := bases.of(variant), buildEvidence(variant)
	if got.base == nil {
		t.Fatal("the entity with key ideas added was not built from its base")
	}
	if !slices.Equal(got.texts, want.texts) || !reflect.DeepEqual(got.locs, want.locs) || !sameUnits(got, want) ||
		!slices.Equal(got.group, want.group) || !reflect.DeepEqual(got.tagStems, want.tagStems) {
		t.Fatal("the variant's passages differ from the whole entity's")
	}
	var buf []int
	terms := slices.Collect(maps.Keys(want.postings))
	terms = append(terms, slices.Collect(maps.Keys(got.base.postings))...)
	terms = append(terms, "zebra")
	for _, term := range terms {
		if g, w := got.post(term, &buf), want.postings[term]; !slices.Equal(g, w) {
			t.Errorf("postings of %q: %v, want %v", term, g, w)
		}
	}
	for w := range want.words {
		if !got.hasWord(w) || !got.eachWord(func(x string) bool { return x == w }) {
			t.Errorf("the variant lacks the word %q", w)
		}
	}
	for term := range want.postings {
		if !got.hasPost(term) {
			t.Errorf("the variant has no passage for %q", term)
		}
	}
	if got.hasWord("zebra") || got.hasNum("77") || !got.hasNum("30") {
		t.Error("the variant's words or numbers are wrong")
	}
	got.dirOnce.Do(got.readDirections)
	want.dirOnce.Do(want.readDirections)
	if !reflect.DeepEqual(got.dirs, want.dirs) {
		t.Error("the variant's directions differ")
	}

	// Another variant: the key ideas the two share become the base.
	other := base
	other.KeyIdeas = append(slices.Clone(base.KeyIdeas), "Move inspection before the constraint.")
	bases.of(other)
	other2 := base
	other2.KeyIdeas = append(slices.Clone(base.KeyIdeas), "Another application.")
	if ev := bases.of(other2); ev.base == nil || len(ev.base.texts) != len(buildEvidence(base).texts) {
		t.Error("a second variant was not built from the entity's own passages")
	}
}

func sameUnits(a, b *evidence) bool {
	if a.size() != b.size() {
		return false
	}
	for j := range a.size() {
		if !reflect.DeepEqual(a.unitAt(j), b.unitAt(j)) {
			return false
		}
	}
	return true
}
