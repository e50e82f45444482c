package admin_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/admin"
)

// A key can be created with its own limit of requests a minute; the keys
// table shows it, and "default (N)" for the others; a bad limit is 400
// and creates nothing; rolling the key keeps its limit.
func TestKeyWithOwnLimit(t *testing.T) {
	e := newEnv(t, func(h *admin.Handler) { h.KeyRateLimit = 60 })
	e.createUser(t, "acme", "a@acme.test", "acme password 1")
	b := e.browser(t)
	b.login("a@acme.test", "acme password 1")
	if p := b.get("/admin/integrations"); !strings.Contains(p.body, `name="limit"`) || !strings.Contains(p.body, `placeholder="default (60)"`) {
		t.Fatalf("the create form has no limit field:\n%s", p.body)
	}
	for _, bad := range []string{"0", "-1", "abc", "10001", "2.5"} {
		p := b.post("/admin/integrations/keys", url.Values{"name": {"bad"}, "limit": {bad}})
		if p.status != http.StatusBadRequest || !strings.Contains(p.body, "Invalid limit") {
			t.Errorf("limit %q: %d", bad, p.status)
		}
	}
	if keys, _ := e.db.ListKeys(context.Background(), "acme"); len(keys) != 0 {
		t.Fatalf("a refused form created %d keys", len(keys))
	}

	p := b.post("/admin/integrations/keys", url.Values{"name": {"widget"}, "limit": {"5"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("create with a limit: %d", p.status)
	}
	b.get(p.location)
	b.createKey("plain")
	keys, err := e.db.ListKeys(context.Background(), "acme")
	if err != nil || len(keys) != 2 {
		t.Fatalf("keys %v %v", keys, err)
	}
	limits := map[string]int{}
	for _, k := range keys {
		limits[k.Name] = k.RateLimit
	}
	if limits["widget"] != 5 || limits["plain"] != 0 {
		t.Errorf("stored limits %v, want widget 5 and plain 0 (default)", limits)
	}
	table := b.get("/admin/integrations").body
	cell := regexp.MustCompile(`data-label="Limit">([^<]*)<`)
	var shown []string
	for _, m := range cell.FindAllStringSubmatch(table, -1) {
		shown = append(shown, m[1])
	}
	slices.Sort(shown) // keys created at the same moment are listed by their random ids
	if strings.Join(shown, ",") != "5,default (60)" {
		t.Errorf("the Limit column shows %q, want 5 and default (60)", shown)
	}

	var widget string
	for _, k := range keys {
		if k.Name == "widget" {
			widget = k.ID
		}
	}
	if p := b.post("/admin/integrations/keys/"+widget+"/roll", url.Values{"grace": {"0"}}); p.status != http.StatusSeeOther {
		t.Fatalf("roll: %d", p.status)
	}
	keys, _ = e.db.ListKeys(context.Background(), "acme")
	for _, k := range keys {
		if k.Name == "widget" && k.ID != widget && k.RateLimit != 5 {
			t.Errorf("the rolled key has limit %d, want 5", k.RateLimit)
		}
	}
}
