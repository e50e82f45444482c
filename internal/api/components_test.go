package api_test

import (
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/api"
)

// TestComponentServed: the <assistant-citations> module is served outside
// /api/ as JavaScript, publicly cacheable with an ETag (304 on a match),
// to any origin, and is not an operation of the OpenAPI document.
func TestComponentServed(t *testing.T) {
	f := newFixture(t, 0, 0)
	const path = "/components/assistant-citations.js"
	r := f.do(t, "GET", path, "", "Origin", "https://blog.example")
	if r.Code != 200 {
		t.Fatalf("GET %s: status %d", path, r.Code)
	}
	want := map[string]string{
		"Content-Type":                 "text/javascript; charset=utf-8",
		"Cache-Control":                "public, max-age=60, stale-while-revalidate=60",
		"Access-Control-Allow-Origin":  "*",
		"X-Content-Type-Options":       "nosniff",
		"Cross-Origin-Resource-Policy": "cross-origin",
	}
	for k, v := range want {
		if got := r.Header().Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if r.Body.String() != string(api.CitationsComponent) {
		t.Errorf("body is not the embedded component (%d bytes)", r.Body.Len())
	}
	for _, s := range []string{`customElements.define("assistant-citations"`, "/api/assistant/v1/resolve", "textContent"} {
		if !strings.Contains(r.Body.String(), s) {
			t.Errorf("component lacks %q", s)
		}
	}
	if strings.Contains(r.Body.String(), "innerHTML") {
		t.Error("component uses innerHTML; resolved text must be written with textContent")
	}
	etag := r.Header().Get("ETag")
	if !strings.HasPrefix(etag, `"`) {
		t.Fatalf("ETag = %q, want a strong tag", etag)
	}
	again := f.do(t, "GET", path, "", "If-None-Match", etag)
	if again.Code != 304 || again.Body.Len() != 0 {
		t.Errorf("If-None-Match: status %d, %d bytes", again.Code, again.Body.Len())
	}
	if head := f.do(t, "HEAD", path, ""); head.Code != 200 || head.Body.Len() != 0 || head.Header().Get("ETag") != etag {
		t.Errorf("HEAD: status %d, %d bytes, ETag %q", head.Code, head.Body.Len(), head.Header().Get("ETag"))
	}
	if r := f.do(t, "GET", "/components/missing.js", ""); r.Code != 404 {
		t.Errorf("unknown component: status %d, want 404", r.Code)
	}
	var doc openAPIDocument
	f.do(t, "GET", "/api/assistant/openapi.json", "").json(t, &doc)
	for p := range doc.Paths {
		if strings.HasPrefix(p, "/components/") {
			t.Errorf("OpenAPI document lists %s", p)
		}
	}
}
