package api

import (
	_ "embed"
	"net/http"
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
// caching middleware adds the public cache policy and an ETag, and cors
// allows any origin (a module script is fetched with CORS).
func componentHandler(body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/javascript; charset=utf-8")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cross-Origin-Resource-Policy", "cross-origin")
		w.Write(body)
	})
}
