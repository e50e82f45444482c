package api_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/constraintlab/assistant/internal/access"
	"github.com/constraintlab/assistant/internal/api"
)

// padded returns a JSON object with the given fields and an ignored "pad"
// field that brings it to exactly n bytes.
func padded(t *testing.T, fields string, n int) string {
	t.Helper()
	head := "{" + fields + `,"pad":"`
	body := head + strings.Repeat("x", n-len(head)-2) + `"}`
	if len(body) != n {
		t.Fatalf("padded body is %d bytes, want %d", len(body), n)
	}
	return body
}

// TestBodyLimitIsInclusive: a body of exactly 256 KiB is accepted (D4: "at
// most 256 KiB"), one byte more is 413, on public and authenticated
// endpoints.
func TestBodyLimitIsInclusive(t *testing.T) {
	f := newFixture(t, 0, 0)
	key := f.newKey(t, "acme")
	const limit = 256 << 10
	resolve := `"tokens":[{"type":"framework","slug":"theory-of-constraints"}]`
	if r := f.do(t, "POST", "/api/assistant/v1/resolve", padded(t, resolve, limit)); r.Code != 200 {
		t.Errorf("resolve, %d bytes: %d %s", limit, r.Code, r.Body)
	}
	p := assertProblem(t, f.do(t, "POST", "/api/assistant/v1/resolve", padded(t, resolve, limit+1)), 413)
	if d, _ := p["detail"].(string); !strings.Contains(d, "262144") {
		t.Errorf("413 detail: %q", d)
	}
	if r := f.chat(t, key, padded(t, `"message":"hi"`, limit)); r.Code != 200 {
		t.Errorf("chat, %d bytes: %d %s", limit, r.Code, r.Body)
	}
	assertProblem(t, f.chat(t, key, padded(t, `"message":"hi"`, limit+1)), 413)
}

func TestDuplicateAuthorizationIsRefused(t *testing.T) {
	f := newFixture(t, 0, 0)
	key := f.newKey(t, "acme")
	req := httptest.NewRequest("GET", "/api/v1/key", nil)
	req.Header.Add("Authorization", "Bearer "+key)
	req.Header.Add("Authorization", "Bearer "+key)
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	p := assertProblem(t, response{rec}, 401)
	if d, _ := p["detail"].(string); !strings.Contains(d, "exactly one Authorization") {
		t.Errorf("detail: %q", d)
	}
	if r := f.do(t, "GET", "/api/v1/key", "", "Authorization", "Bearer "+key); r.Code != 200 {
		t.Errorf("one header: %d", r.Code)
	}
}

// TestErrorValuesAreTruncated: errors[].value never echoes more than
// api.MaxErrorValueChars characters of what was sent.
func TestErrorValuesAreTruncated(t *testing.T) {
	f := newFixture(t, 0, 0)
	key := f.newKey(t, "acme")
	for _, body := range []string{
		`{"message":"` + strings.Repeat("é", 9000) + `"}`,
		`{"message":"hi","history":"` + strings.Repeat("y", 100_000) + `"}`,
		`{"message":"hi","history":[{"role":"` + strings.Repeat("z", 50_000) + `","content":"c"}]}`,
	} {
		r := f.chat(t, key, body)
		p := assertProblem(t, r, 400)
		if r.Body.Len() > 4000 {
			t.Errorf("a %d-byte body gave a %d-byte problem", len(body), r.Body.Len())
		}
		errs, _ := p["errors"].([]any)
		for _, e := range errs {
			v := e.(map[string]any)["value"]
			s, ok := v.(string)
			if !ok {
				data, _ := json.Marshal(v)
				s = string(data)
			}
			if n := utf8.RuneCountInString(s); n > api.MaxErrorValueChars+1 {
				t.Errorf("errors[].value has %d characters", n)
			}
		}
	}
}

// TestFailedAuthenticationIsLimitedPerAddress: past AuthFailuresPerMinute
// failed authentications an address gets 429 on /api/v1/ (keys already
// verified still work from it); other addresses and keys are unaffected;
// the limit lifts after a minute.
func TestFailedAuthenticationIsLimitedPerAddress(t *testing.T) {
	f := newFixture(t, 0, 0)
	good := f.newKey(t, "acme")
	from := func(addr, key string) response {
		req := httptest.NewRequest("GET", "/api/v1/key", nil)
		req.RemoteAddr = addr + ":4242"
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		rec := httptest.NewRecorder()
		f.h.ServeHTTP(rec, req)
		return response{rec}
	}
	if r := from("198.51.100.1", good); r.Code != 200 {
		t.Fatalf("good key: %d", r.Code)
	}
	for i := range api.AuthFailuresPerMinute {
		bad, _, _ := access.NewKey()
		if i%3 == 0 {
			bad = ""
		}
		assertProblem(t, from("198.51.100.1", bad), 401)
	}
	unknown, _, _ := access.NewKey()
	p := assertProblem(t, from("198.51.100.1", unknown), 429)
	if p["retry_after_seconds"] == nil {
		t.Errorf("429 without retry_after_seconds: %v", p)
	}
	if r := from("198.51.100.1", good); r.Code != 200 {
		t.Errorf("a verified key from the limited address: %d", r.Code)
	}
	assertProblem(t, from("198.51.100.2", unknown), 401)
	f.clock.Add(2 * time.Minute)
	assertProblem(t, from("198.51.100.1", unknown), 401)
}

// A valid key is never refused because other authentications failed from
// the same address: after a worker behind a NAT failed 40 times with its
// revoked key, a freshly created key from that address is served at once.
// The revoked key keeps getting 429.
func TestValidKeyIsServedPastTheFailureLimit(t *testing.T) {
	f := newFixture(t, 0, 0)
	f.srv.SetAuthPenalty(-1)
	f.srv.Metrics = prometheus.NewRegistry()
	f.h, f.routes = f.srv.HandlerAndRoutes()
	ctx := context.Background()
	old := f.newKey(t, "acme")
	id, _ := access.ParseKey(old)
	if _, err := f.db.RevokeKey(ctx, "acme", id, f.clock.Now()); err != nil {
		t.Fatal(err)
	}
	from := func(key string) int {
		req := httptest.NewRequest("GET", "/api/v1/key", nil)
		req.RemoteAddr = "203.0.113.9:4242"
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		f.h.ServeHTTP(rec, req)
		return rec.Code
	}
	for i := range 40 {
		want := 401
		if i >= api.AuthFailuresPerMinute {
			want = 429
		}
		if code := from(old); code != want {
			t.Fatalf("revoked key, attempt %d: %d, want %d", i+1, code, want)
		}
	}
	fresh := f.newKey(t, "acme")
	for i := range 3 {
		if code := from(fresh); code != 200 {
			t.Errorf("fresh key, request %d: %d", i+1, code)
		}
		if code := from(old); code != 429 {
			t.Errorf("revoked key again: %d", code)
		}
	}
}

// Past the limit, guessing is slowed: new wrong keys from the address are
// verified one at a time, each holding the address's turn for the
// penalty, so 10 guesses sent at once take at least 10 penalties; a valid
// key sent among them is still served.
func TestGuessingIsSlowedPastTheFailureLimit(t *testing.T) {
	f := newFixture(t, 0, 0)
	const penalty = 100 * time.Millisecond
	f.srv.SetAuthPenalty(penalty)
	f.srv.Metrics = prometheus.NewRegistry()
	f.h, f.routes = f.srv.HandlerAndRoutes()
	from := func(key string) int {
		req := httptest.NewRequest("GET", "/api/v1/key", nil)
		req.RemoteAddr = "203.0.113.10:4242"
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		f.h.ServeHTTP(rec, req)
		return rec.Code
	}
	for range api.AuthFailuresPerMinute {
		bad, _, _ := access.NewKey()
		if code := from(bad); code != 401 {
			t.Fatalf("guess under the limit: %d", code)
		}
	}
	good := f.newKey(t, "acme")
	start := time.Now()
	var wg sync.WaitGroup
	codes := make([]int, 10)
	for i := range codes {
		wg.Go(func() {
			bad, _, _ := access.NewKey()
			codes[i] = from(bad)
		})
	}
	goodCode := 0
	wg.Go(func() { goodCode = from(good) })
	wg.Wait()
	elapsed := time.Since(start)
	for i, c := range codes {
		if c != 429 {
			t.Errorf("guess %d past the limit: %d", i, c)
		}
	}
	if goodCode != 200 {
		t.Errorf("valid key among the guesses: %d", goodCode)
	}
	if elapsed < 10*penalty {
		t.Errorf("10 guesses past the limit took %v, want at least %v", elapsed, 10*penalty)
	}
}
