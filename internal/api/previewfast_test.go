package api_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/assistant"
)

// TestPreviewPlainBodiesAnswerAsHuma: bodies of the plain shape are read
// without huma (previewfast.go); every other body, and every request the
// diagnosis refuses, goes to huma. Each body below, valid or not, must get
// the status, headers that matter and bytes it gets from huma, which reads
// it when it is padded past the fast reader's bound (trailing white space
// changes nothing in JSON).
func TestPreviewPlainBodiesAnswerAsHuma(t *testing.T) {
	f := newPreviewFixture(t)
	a := assistant.ArchetypeIDs[0]
	long := strings.Repeat("the packing bench cannot keep up ", 130) // past 4,000 characters
	bodies := []string{
		// the plain shape, with its variations
		`{"vertical":"ecommerce","free_text":"the packing bench cannot keep up in December"}`,
		` { "free_text" : "orders ship late; the warehouse is full" ,` + "\n\t" + `"vertical":"saas" } ` + "\r\n",
		`{"vertical":"saas","archetype_id":"` + a + `"}`,
		`{"archetype_id":"` + a + `","vertical":"ecommerce"}`,
		`{"vertical":"ecommerce","free_text":"` + long[:4000] + `"}`,
		`{"vertical":"ecommerce","free_text":"<b>&amp;</b> 'quotes' are fine"}`,
		// refused by the diagnosis, left to huma
		`{"vertical":"nope","free_text":"the packing bench cannot keep up"}`,
		`{"vertical":"saas"}`,
		`{"vertical":"saas","archetype_id":"` + a + `","free_text":"both forms"}`,
		`{"vertical":"saas","archetype_id":"nope"}`,
		`{"vertical":"","free_text":"x"}`,
		`{"vertical":"saas","free_text":""}`,
		// left to huma: not the plain shape, valid or not
		`{"vertical":"ecommerce","free_text":"` + long[:4001] + `"}`,
		`{"vertical":"ecommerce","free_text":"caf\u00e9 orders ship late"}`,
		`{"vertical":"ecommerce","free_text":"café orders ship late"}`,
		`{"vertical":"ecommerce","free_text":"a \"quoted\" bench"}`,
		`{"vertical":"ecommerce","free_text":"x","vertical":"saas"}`,
		`{"vertical":"ecommerce","free_text":"x","extra":"y"}`,
		`{"Vertical":"ecommerce","free_text":"x"}`,
		`{"free_text":"the packing bench"}`,
		`{"vertical":1,"free_text":"x"}`,
		`{"vertical":"ecommerce","free_text":null}`,
		`{"vertical":"ecommerce","free_text":"x",}`,
		`{"vertical":"ecommerce","free_text":"x"`,
		`{"vertical":"ecommerce","free_text":"x"}}`,
		`{"vertical":"ecommerce","free_text":"x"} x`,
		`{}`,
		`[]`,
		`null`,
		`{"vertical":"ecommerce","free_text":"a` + "\x01" + `b"}`,
	}
	for i, body := range bodies {
		padded := body + strings.Repeat(" ", 9<<10)
		got := f.do(t, "POST", "/api/assistant/v1/preview", body)
		want := f.do(t, "POST", "/api/assistant/v1/preview", padded)
		if got.Code != want.Code || !bytes.Equal(withoutRequestID(t, got.Body.Bytes()), withoutRequestID(t, want.Body.Bytes())) {
			t.Errorf("body %d %.80q: %d %s\nhuma: %d %s", i, body, got.Code, withoutRequestID(t, got.Body.Bytes()), want.Code, withoutRequestID(t, want.Body.Bytes()))
		}
		if got.Code == 200 && !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) {
			t.Errorf("body %d: the answers differ", i)
		}
		if i < 6 && got.Code != 200 {
			t.Errorf("body %d: status %d, want 200", i, got.Code)
		}
		headers := []string{"Content-Type", "Cache-Control", "Access-Control-Allow-Origin", "Retry-After"}
		if got.Code == 200 {
			headers = append(headers, "Content-Length")
		}
		for _, h := range headers {
			if got.Header().Get(h) != want.Header().Get(h) {
				t.Errorf("body %d: %s %q, from huma %q", i, h, got.Header().Get(h), want.Header().Get(h))
			}
		}
		if len(got.Header()) != len(want.Header()) {
			t.Errorf("body %d: headers %v, from huma %v", i, got.Header(), want.Header())
		}
	}
}
