package admin_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/admin"
)

// TestCreatedPageSnippets: the one page that shows a new key hands over
// working code, each block filled with the key and the service's public
// URL (configured, else the request's own scheme and host); the nav marks
// the current section; revoke is a quiet link to a confirmation page.
func TestCreatedPageSnippets(t *testing.T) {
	for _, public := range []string{"", "https://assistant.example.com"} {
		e := newEnv(t, func(h *admin.Handler) { h.PublicURL = public })
		e.createUser(t, "alpha", "a@alpha.test", "alpha password 1")
		b := e.browser(t)
		b.login("a@alpha.test", "alpha password 1")
		p := b.post("/admin/integrations/keys", url.Values{"name": {"snippets"}})
		if p.status != http.StatusSeeOther {
			t.Fatalf("create: %d", p.status)
		}
		shown := b.get(p.location)
		body := html.UnescapeString(shown.body)
		key := keyPattern.FindString(body)
		base := public
		if base == "" {
			base = e.srv.URL
		}
		for _, id := range []string{"snippet-shell", "snippet-curl", "snippet-go", "snippet-typescript", "snippet-openai", "snippet-mcp"} {
			block := regexp.MustCompile(`(?s)<code id="` + id + `"[^>]*>(.*?)</code>`).FindStringSubmatch(body)
			if block == nil {
				t.Errorf("%s: no %s block", base, id)
				continue
			}
			if !strings.Contains(block[1], key) || !strings.Contains(block[1], base) {
				t.Errorf("%s: %s is not filled with the key and the URL:\n%s", base, id, block[1])
			}
			if !strings.Contains(body, `data-copy="`+id+`"`) {
				t.Errorf("%s: %s has no copy button", base, id)
			}
		}
		for _, want := range []string{base + "/api/v1/openai", base + "/mcp", "export KEY='" + key + "'"} {
			if !strings.Contains(body, want) {
				t.Errorf("%s: the page lacks %q", base, want)
			}
		}
		if shown.header.Get("Cache-Control") != "no-store" {
			t.Errorf("the snippets page is cacheable")
		}
		// Shown once: a reload has neither the key nor the snippets.
		if again := b.get(p.location); keyPattern.MatchString(again.body) || strings.Contains(again.body, "snippet-curl") {
			t.Errorf("a reload shows the key or its snippets again")
		}

		keys := b.get("/admin/integrations")
		if !strings.Contains(keys.body, `<a href="/admin/integrations" aria-current="page">API keys</a>`) ||
			strings.Count(keys.body, `aria-current="page"`) != 1 {
			t.Errorf("the nav does not mark API keys as the current page")
		}
		if !strings.Contains(keys.body, `class="quiet-danger">Revoke…</a>`) || strings.Contains(keys.body, `class="danger">Revoke`) {
			t.Errorf("revoke is not a quiet link")
		}
	}
}
