package api_test

import (
	"bytes"
	"context"
	"net/url"
	"strconv"
	"testing"
)

// TestSearchWritesWhatHumaWouldEncode: GET /search, assembled from the
// cards' remembered JSON, writes the bytes huma writes for the typed
// answer, for queries with many, few and no results and characters JSON
// escapes.
func TestSearchWritesWhatHumaWouldEncode(t *testing.T) {
	f := newFixture(t, 0, 0)
	ctx := context.Background()
	for _, c := range []struct {
		q     string
		limit int
	}{
		{"the packing station cannot keep up and orders ship late", 10},
		{"pricing", 50},
		{"churn after the first month", 1},
		{"zzzz qqqq", 10},
		{`<b>"bottleneck"</b> & \ queue \u2028`, 20},
	} {
		want, err := f.srv.SearchEncoded(ctx, c.q, c.limit)
		if err != nil {
			t.Fatal(err)
		}
		if c.limit == 10 && c.q[0] == 't' && !bytes.Contains(want, []byte(`"score":`)) {
			t.Fatalf("%q found nothing: %s", c.q, want)
		}
		for round := range 2 { // the second from remembered cards
			r := f.do(t, "GET", "/api/assistant/v1/search?limit="+strconv.Itoa(c.limit)+"&q="+url.QueryEscape(c.q), "")
			if r.Code != 200 {
				t.Fatalf("%q: %d %s", c.q, r.Code, r.Body)
			}
			if !bytes.Equal(r.Body.Bytes(), want) {
				t.Fatalf("%q, round %d: the body differs from huma's encoding\n got %.400s\nwant %.400s", c.q, round, r.Body, want)
			}
		}
	}
}
