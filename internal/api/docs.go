package api

import (
	"embed"
	"io/fs"
	"net/http"
)

// docsUI is the interactive documentation page: vendored Swagger UI
// (docsui/VENDOR.md) with our own page and start-up script, served from the
// binary with no asset from a CDN (D15).
//
//go:embed docsui/index.html docsui/init.js docsui/swagger-ui
var docsUI embed.FS

// docsHandler serves /api/assistant/docs/ and redirects the bare path to it
// so relative asset paths resolve.
func docsHandler() http.Handler {
	sub, err := fs.Sub(docsUI, "docsui")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	files := http.StripPrefix("/api/assistant/docs/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/assistant/docs" {
			http.Redirect(w, r, "/api/assistant/docs/", http.StatusMovedPermanently)
			return
		}
		// The page runs only our own script and styles; it may call this
		// origin only.
		w.Header().Set("Content-Security-Policy",
			"default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		files.ServeHTTP(w, r)
	})
}
