package webhook_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/webhook"
)

// fakeResolver answers names from a table.
type fakeResolver map[string][]string

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, a := range f[host] {
		out = append(out, netip.MustParseAddr(a))
	}
	if len(out) == 0 {
		return nil, errors.New("no such host")
	}
	return out, nil
}

func TestCheckURLRefusesNonPublicTargets(t *testing.T) {
	g := webhook.Guard{Resolver: fakeResolver{
		"public.example.com":   {"93.184.215.14"},
		"loop.example.com":     {"127.0.0.1"},
		"ten.example.com":      {"93.184.215.14", "10.1.2.3"}, // one private address is enough to refuse
		"metadata.example.com": {"169.254.169.254"},
		"mapped.example.com":   {"::ffff:10.0.0.1"},
		"v6.example.com":       {"fe80::1"},
	}}
	ctx := t.Context()
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"https://public.example.com/hook", true},
		{"https://93.184.215.14:8443/hook?x=1", true},
		{"http://public.example.com/hook", false}, // https only
		{"https://127.0.0.1/hook", false},
		{"https://10.0.0.1/hook", false},
		{"https://10.255.255.255/hook", false},
		{"https://169.254.169.254/latest/meta-data/", false},
		{"https://[::1]/hook", false},
		{"https://[::ffff:127.0.0.1]/hook", false},
		{"https://0.0.0.0/hook", false},
		{"https://100.64.0.1/hook", false},
		{"https://loop.example.com/hook", false},
		{"https://ten.example.com/hook", false},
		{"https://metadata.example.com/hook", false},
		{"https://mapped.example.com/hook", false},
		{"https://v6.example.com/hook", false},
		{"https://nowhere.example.com/hook", false}, // does not resolve
		{"https://user:pw@public.example.com/hook", false},
		{"https://public.example.com/hook#frag", false},
		{"/relative", false},
		{"ftp://public.example.com/", false},
		{"https://public.example.com/" + strings.Repeat("a", webhook.MaxURLLength), false},
	} {
		err := g.CheckURL(ctx, tc.url)
		if (err == nil) != tc.ok {
			t.Errorf("CheckURL(%.60q) = %v, want ok=%v", tc.url, err, tc.ok)
		}
	}
	// The operator's setting admits private targets and http.
	allow := webhook.Guard{AllowPrivate: true}
	for _, u := range []string{"http://127.0.0.1:9000/hook", "https://10.0.0.1/", "https://169.254.169.254/"} {
		if err := allow.CheckURL(ctx, u); err != nil {
			t.Errorf("with AllowPrivate, CheckURL(%q) = %v", u, err)
		}
	}
	if err := allow.CheckURL(ctx, "ftp://x/"); err == nil {
		t.Error("AllowPrivate admitted an ftp URL")
	}
}

// TestDialTimeCheck: the connection itself is refused when the resolved
// address is not public, whatever the URL's name said at creation (DNS
// rebinding), and a redirect is never followed.
func TestDialTimeCheck(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://example.com/elsewhere", http.StatusFound)
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	// The check runs before the connection is made: private addresses
	// are refused without a packet sent.
	for _, u := range []string{srv.URL, "http://localhost" + port + "/hook", "https://10.0.0.1/hook", "https://10.255.0.9:8443/",
		"http://169.254.169.254/latest/meta-data/", "https://[::1]/", "https://[::ffff:10.0.0.1]/"} {
		_, err := webhook.NewClient(webhook.Guard{}, nil).Get(u)
		if !errors.Is(err, webhook.ErrForbiddenAddress) {
			t.Errorf("GET %s without AllowPrivate: %v, want ErrForbiddenAddress", u, err)
		}
	}
	resp, err := webhook.NewClient(webhook.Guard{AllowPrivate: true}, nil).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Errorf("a redirect was followed: status %d", resp.StatusCode)
	}
}

func TestPublic(t *testing.T) {
	for a, want := range map[string]bool{
		"8.8.8.8": true, "2606:4700:4700::1111": true, "127.0.0.1": false, "10.0.0.1": false, "172.16.0.1": false,
		"192.168.1.1": false, "169.254.169.254": false, "::1": false, "fd00::1": false, "fe80::1": false,
		"::ffff:192.168.0.1": false, "224.0.0.1": false, "255.255.255.255": false, "::": false,
	} {
		if got := webhook.Public(netip.MustParseAddr(a)); got != want {
			t.Errorf("Public(%s) = %v", a, got)
		}
	}
}

func TestSealer(t *testing.T) {
	if _, err := webhook.NewSealer("short"); err == nil {
		t.Error("a short key was accepted")
	}
	s, err := webhook.NewSealer(strings.Repeat("k", 32))
	if err != nil {
		t.Fatal(err)
	}
	sealed := s.Seal("we_1", "whsec_abc")
	if strings.Contains(string(sealed), "whsec_abc") {
		t.Error("the sealed secret holds the plaintext")
	}
	if got, err := s.Open("we_1", sealed); err != nil || got != "whsec_abc" {
		t.Errorf("Open = %q, %v", got, err)
	}
	if _, err := s.Open("we_2", sealed); err == nil {
		t.Error("a secret opened for another endpoint")
	}
	other, _ := webhook.NewSealer(strings.Repeat("x", 32))
	if _, err := other.Open("we_1", sealed); err == nil {
		t.Error("a secret opened with another key")
	}
}
