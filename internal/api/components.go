package api

import (
	_ "embed"
	"net/http"
	"strconv"
)

// componentsPrefix is where the embeddable web components are served:
// outside /api/, so they are not operations of the OpenAPI document.
const componentsPrefix = "/components/"

// citationsComponent is the <assistant-citations> web component
// (docs/web-component.md): a dependency-free ES module that pages anywhere
// load with <script type="module">.
//
//go:embed components/assistant-citations.js
var citationsComponent []byte

// componentHandler serves the embedded component as JavaScript. The
// caching middleware adds the public cache policy (the ETag is computed once, here), and cors
// allows any origin (a module script is fetched with CORS).
func componentHandler(body []byte) http.Handler {
	etag := strongETag(body)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("ETag", etag)
		if etagMatches(r.Header.Get("If-None-Match"), etag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		h.Set("Content-Type", "text/javascript; charset=utf-8")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cross-Origin-Resource-Policy", "cross-origin")
		h.Set("Content-Length", strconv.Itoa(len(body)))
		if r.Method != http.MethodHead {
			w.Write(body)
		}
	})
}
