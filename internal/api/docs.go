package api

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"io/fs"
	"net/http"
	"strings"
)

// strongETag is the ETag of a body: a quoted, URL-safe base64 prefix of
// its SHA-256 (the caching middleware computes the same for buffered
// responses).
func strongETag(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`
}

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
	// Each file's ETag is computed once, here: the files cannot change
	// while the binary runs, so hashing them per request (1.7 MB for the
	// Swagger bundle) would be waste. The file server answers
	// If-None-Match from the header set below.
	etags := map[string]string{}
	err = fs.WalkDir(sub, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sub, path)
		if err != nil {
			return err
		}
		etags[path] = strongETag(b)
		return nil
	})
	if err != nil {
		panic(err)
	}
	etags[""] = etags["index.html"]
	files := http.StripPrefix("/api/assistant/docs/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/assistant/docs" {
			http.Redirect(w, r, "/api/assistant/docs/", http.StatusMovedPermanently)
			return
		}
		if tag, ok := etags[strings.TrimPrefix(r.URL.Path, "/api/assistant/docs/")]; ok {
			w.Header().Set("ETag", tag)
		}
		// The page runs only our own script and styles; it may call this
		// origin only.
		w.Header().Set("Content-Security-Policy",
			"default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		files.ServeHTTP(w, r)
	})
}
