package api

import "testing"

// TestParsePreviewBody: the shapes the fast reader takes and leaves.
func TestParsePreviewBody(t *testing.T) {
	in, ok := parsePreviewBody([]byte(`{"vertical":"ecommerce","free_text":"orders ship late","archetype_id":"x"}`))
	if b := in.Body; !ok || b.Vertical != "ecommerce" || b.FreeText != "orders ship late" || b.ArchetypeID != "x" {
		t.Errorf("parsePreviewBody = %+v, %v", in, ok)
	}
	for body, want := range map[string]bool{
		` {"archetype_id":"a" , "vertical":"saas"}` + "\n":       true,
		`{"vertical":"saas","archetype_id":"a","free_text":"b"}`: true,
		`{"vertical":""}`:                       true,
		`{"archetype_id":"a"}`:                  false,
		`{"vertical":"saas","vertical":"saas"}`: false,
		`{"vertical":"saas","other":"x"}`:       false,
		`{"vertical":"sa\u0061s"}`:              false,
		`{"vertical":"saas"`:                    false,
		`{"vertical":"saas"} `:                  true,
		`{"vertical":"saas"}x`:                  false,
		`{"vertical":"saas","free_text":null}`:  false,
		`{}`:                                    false,
	} {
		if _, ok := parsePreviewBody([]byte(body)); ok != want {
			t.Errorf("%s: taken %v, want %v", body, ok, want)
		}
	}
}
