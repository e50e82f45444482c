package api

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestRememberedPatternsAreTheMuxes: the pattern router.pattern remembers
// for a request is the one the muxes give, the first time and after.
func TestRememberedPatternsAreTheMuxes(t *testing.T) {
	rt := newRouter()
	api := rt.surface()
	api.HandleFunc("GET /api/v1/items/{id}", func(http.ResponseWriter, *http.Request) {})
	api.HandleFunc("POST /api/v1/items", func(http.ResponseWriter, *http.Request) {})
	api.HandleFunc("GET /api/v1/tree/", func(http.ResponseWriter, *http.Request) {})
	rt.mount(api, "/api/")
	other := rt.surface()
	other.HandleFunc("GET /{$}", func(http.ResponseWriter, *http.Request) {})
	rt.mount(other, "/")
	for _, c := range []struct{ method, target string }{
		{"GET", "/api/v1/items/7"}, {"GET", "/api/v1/items/a%2Fb"}, {"POST", "/api/v1/items"}, {"GET", "/api/v1/items"},
		{"DELETE", "/api/v1/items/7"}, {"GET", "/api/v1/tree"}, {"GET", "/api/v1/tree/x/y"}, {"GET", "/"},
		{"GET", "/nothing"}, {"GET", "/api//v1/items/7"}, {"GET", "http://other.example/api/v1/items/7"},
	} {
		r := httptest.NewRequest(c.method, c.target, nil)
		want := rt.lookup(r)
		for i := range 3 {
			if got := rt.pattern(r); got != want {
				t.Errorf("%s %s, time %d: pattern %q, the muxes say %q", c.method, c.target, i+1, got, want)
			}
		}
	}
	if len(rt.found) == 0 {
		t.Error("nothing remembered")
	}
}
