package api_test

import (
	"strings"
	"testing"
)

// TestConstructionVertical: the construction vertical of issue 25 is
// listed by /catalog, previewed in the trade's words, and accepted by the
// chat.
func TestConstructionVertical(t *testing.T) {
	f := newPreviewFixture(t)
	r := f.do(t, "GET", "/api/assistant/v1/catalog", "")
	var cat struct {
		Verticals []struct{ ID, Name, Description string }
	}
	r.json(t, &cat)
	found := false
	for _, v := range cat.Verticals {
		found = found || (v.ID == "construction" && strings.Contains(v.Description, "roofing"))
	}
	if !found {
		t.Errorf("/catalog does not list construction: %+v", cat.Verticals)
	}

	r, p := f.preview(t, `{"vertical":"construction","free_text":"Our roofing crews keep going back to fix leaks on jobs we finished last month."}`)
	if r.Code != 200 {
		t.Fatalf("preview: %d %s", r.Code, r.Body)
	}
	if p.Vertical.ID != "construction" || p.Archetype.ID != "quality-rework" || len(p.FrameworkApplications) < 3 {
		t.Errorf("preview: vertical %q, archetype %q, %d applications", p.Vertical.ID, p.Archetype.ID, len(p.FrameworkApplications))
	}
	if text := strings.Join(p.FrameworkApplications[0].Metrics, " "); !strings.Contains(text, "allbacks") {
		t.Errorf("the construction preview's metrics are not the trade's: %q", text)
	}

	key := f.newKey(t, "acme")
	if r := f.chat(t, key, `{"message":"Our drywall crews are booked for ten weeks and the general contractors are losing patience.","vertical":"construction"}`); r.Code != 200 {
		t.Errorf("chat with vertical construction: %d %s", r.Code, r.Body)
	}
}
