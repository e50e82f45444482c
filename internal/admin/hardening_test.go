package admin_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/access"
	"github.com/constraintlab/assistant/internal/admin"
)

// loginFrom posts the login form as the client at address ip.
func (b *browser) loginFrom(ip, email, password string) page {
	return b.do("POST", "/admin/login", url.Values{"email": {email}, "password": {password}}, "X-Test-Client", ip)
}

// TestLoginHashingIsBounded: 48 simultaneous logins with unknown emails,
// from 48 addresses, never run more password hashes at once than the
// limiter allows; every one is still answered, and the owner can log in.
// Deterministic: the limiter counts the hashes running at once.
func TestLoginHashingIsBounded(t *testing.T) {
	var limiter *access.HashLimiter
	e := newEnv(t, func(h *admin.Handler) {
		limiter = access.NewHashLimiter(2)
		limiter.MaxWait, limiter.MaxWaiting = time.Minute, 1000
		h.Hashes = limiter
	})
	e.createUser(t, "alpha", "a@alpha.test", "alpha password 1")
	var wg sync.WaitGroup
	statuses := make([]int, 48)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := e.browser(t).loginFrom(fmt.Sprintf("198.51.100.%d", i), fmt.Sprintf("nobody%d@example.com", i), "some password")
			statuses[i] = p.status
		}()
	}
	wg.Wait()
	for i, s := range statuses {
		if s != http.StatusUnauthorized {
			t.Errorf("login %d: status %d, want 401", i, s)
		}
	}
	st := limiter.Stats()
	if st.Peak > 2 || st.Admitted != 48 || st.Running != 0 || st.Waiting != 0 {
		t.Errorf("hash limiter: %+v; want peak <= 2 and 48 admitted", st)
	}
	if p := e.browser(t).loginFrom("203.0.113.5", "a@alpha.test", "alpha password 1"); p.status != http.StatusSeeOther {
		t.Errorf("the owner's login after the burst: %d", p.status)
	}
}

// TestLoginWhenHashingIsSaturated: a login that finds no free hashing slot
// in time gets 503 with Retry-After (an HTML page), and is not counted as
// a failure.
func TestLoginWhenHashingIsSaturated(t *testing.T) {
	var limiter *access.HashLimiter
	e := newEnv(t, func(h *admin.Handler) {
		limiter = access.NewHashLimiter(1)
		limiter.MaxWait, limiter.MaxWaiting = time.Millisecond, 0
		h.Hashes = limiter
	})
	e.createUser(t, "alpha", "a@alpha.test", "alpha password 1")
	release, running := make(chan struct{}), make(chan struct{})
	go limiter.Do(context.Background(), func() { close(running); <-release })
	<-running
	b := e.browser(t)
	for range 12 { // more than the pair's 10 failures: none is counted
		p := b.login("a@alpha.test", "alpha password 1")
		if p.status != http.StatusServiceUnavailable || p.header.Get("Retry-After") == "" || !strings.Contains(p.header.Get("Content-Type"), "text/html") {
			t.Fatalf("saturated: %d Retry-After %q %s", p.status, p.header.Get("Retry-After"), p.header.Get("Content-Type"))
		}
	}
	close(release)
	for limiter.Stats().Running != 0 {
		time.Sleep(time.Millisecond)
	}
	if p := b.login("a@alpha.test", "alpha password 1"); p.status != http.StatusSeeOther {
		t.Errorf("login once a slot is free: %d", p.status)
	}
}

// TestLoginPerAddressLimit: the login and setup forms together take
// LoginAttemptsPerMinute posts per address a minute; the next gets 429
// with Retry-After, while other addresses are served.
func TestLoginPerAddressLimit(t *testing.T) {
	e := newEnv(t)
	b := e.browser(t)
	for i := range admin.LoginAttemptsPerMinute {
		if i%2 == 0 {
			if p := b.post("/admin/setup", url.Values{"token": {"x"}}); p.status != http.StatusBadRequest {
				t.Fatalf("setup %d: %d", i, p.status)
			}
			continue
		}
		if p := b.login(fmt.Sprintf("u%d@example.com", i), "wrong"); p.status != http.StatusUnauthorized {
			t.Fatalf("login %d: %d", i, p.status)
		}
	}
	p := b.login("someone@example.com", "wrong")
	if p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") == "" {
		t.Errorf("past the per-address limit: %d, Retry-After %q", p.status, p.header.Get("Retry-After"))
	}
	if p := b.loginFrom("203.0.113.9", "someone@example.com", "wrong"); p.status != http.StatusUnauthorized {
		t.Errorf("another address: %d", p.status)
	}
	e.clock.mu.Lock()
	e.clock.t = e.clock.t.Add(2 * time.Minute)
	e.clock.mu.Unlock()
	if p := b.login("someone@example.com", "wrong"); p.status != http.StatusUnauthorized {
		t.Errorf("two minutes later: %d", p.status)
	}
}

// TestAccountLimitAcrossAddresses: failures of one account from many
// addresses spend its budget; then every address that failed is refused,
// yet the owner logs in at once from their own address.
func TestAccountLimitAcrossAddresses(t *testing.T) {
	e := newEnv(t)
	e.createUser(t, "alpha", "a@alpha.test", "alpha password 1")
	b := e.browser(t)
	for i := range access.DefaultAccountFailures {
		if p := b.loginFrom(fmt.Sprintf("198.51.100.%d", i), "a@alpha.test", "wrong password"); p.status != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d", i, p.status)
		}
	}
	for i := range 3 {
		p := b.loginFrom(fmt.Sprintf("198.51.100.%d", i), "a@alpha.test", "alpha password 1")
		if p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") == "" {
			t.Errorf("an address that failed, past the account's budget: %d", p.status)
		}
	}
	start := time.Now()
	if p := e.browser(t).loginFrom("203.0.113.77", "a@alpha.test", "alpha password 1"); p.status != http.StatusSeeOther {
		t.Errorf("the owner from their own address: %d", p.status)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the owner's login took %v", d)
	}
}

// multipartBody returns a multipart form with one file part of n bytes.
func multipartBody(t *testing.T, n int) (string, []byte) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("email", "a@alpha.test")
	fw, err := mw.CreateFormFile("upload", "big.bin")
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(bytes.Repeat([]byte("x"), n))
	mw.Close()
	return mw.FormDataContentType(), buf.Bytes()
}

// TestAdminFormsAcceptOnlySmallURLEncodedBodies: an 8 MiB multipart upload
// to each admin form is refused before parsing and leaves no temporary
// file; so does one of unknown length; an oversized url-encoded form is
// 413. The refusals are HTML pages.
func TestAdminFormsAcceptOnlySmallURLEncodedBodies(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	e := newEnv(t)
	e.createUser(t, "alpha", "a@alpha.test", "alpha password 1")
	b := e.browser(t)
	b.login("a@alpha.test", "alpha password 1")
	id, _ := b.createKey("k")
	ct, body := multipartBody(t, 8<<20)
	forms := []string{"/admin/setup", "/admin/login", "/admin/logout", "/admin/integrations/keys",
		"/admin/integrations/keys/" + id + "/revoke"}
	send := func(path, contentType string, body io.Reader, length int64) (int, string) {
		req, _ := http.NewRequest("POST", e.srv.URL+path, body)
		req.ContentLength = length
		req.Header.Set("Content-Type", contentType)
		resp, err := b.client.Do(req)
		if err != nil {
			return 0, "" // the server may close before the whole upload is sent
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type")
	}
	for _, path := range forms {
		if status, pageType := send(path, ct, bytes.NewReader(body), int64(len(body))); status != 0 &&
			(status != http.StatusUnsupportedMediaType || !strings.HasPrefix(pageType, "text/html")) {
			t.Errorf("%s, 8 MiB multipart: %d %s", path, status, pageType)
		}
		if status, _ := send(path, ct, io.MultiReader(bytes.NewReader(body)), -1); status != 0 && status != http.StatusUnsupportedMediaType {
			t.Errorf("%s, chunked multipart: %d", path, status)
		}
		big := "name=" + strings.Repeat("x", admin.MaxFormBytes)
		if status, _ := send(path, "application/x-www-form-urlencoded", strings.NewReader(big), int64(len(big))); status != 0 && status != http.StatusRequestEntityTooLarge {
			t.Errorf("%s, oversized form: %d", path, status)
		}
		if status, _ := send(path, "application/x-www-form-urlencoded", io.MultiReader(strings.NewReader(big)), -1); status != 0 && status != http.StatusRequestEntityTooLarge {
			t.Errorf("%s, oversized chunked form: %d", path, status)
		}
		if status, _ := send(path, "text/plain", strings.NewReader("a=b"), 3); status != 0 && status != http.StatusUnsupportedMediaType {
			t.Errorf("%s, text/plain: %d", path, status)
		}
	}
	entries, _ := os.ReadDir(tmp)
	for _, en := range entries {
		t.Errorf("left in TMPDIR: %s", en.Name())
	}
	// The forms still work with what browsers send.
	if p := b.do("POST", "/admin/integrations/keys", nil, "Content-Type", "application/x-www-form-urlencoded; charset=UTF-8"); p.status != http.StatusSeeOther {
		t.Errorf("form with a charset: %d", p.status)
	}
}

// dataFiles returns the contents of every file in dir (the database, its
// WAL and shared-memory files, any journal).
func dataFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		data, err := os.ReadFile(filepath.Join(dir, en.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[en.Name()] = data
	}
	return out
}

func assertAbsent(t *testing.T, files map[string][]byte, secret, when string) {
	t.Helper()
	if len(files) == 0 {
		t.Fatal("no data files")
	}
	for name, data := range files {
		if bytes.Contains(data, []byte(secret)) || bytes.Contains(data, []byte(secret[len(access.KeyPrefix):])) {
			t.Errorf("%s: the key's plaintext is in %s", when, name)
		}
	}
}

// TestKeyPlaintextNeverAtRest: after creating keys in the admin area,
// with and without following the redirect to the page that shows them, no
// file of the data directory (database, -wal, -shm, -journal) holds a
// key's plaintext.
func TestKeyPlaintextNeverAtRest(t *testing.T) {
	e := newEnv(t)
	e.createUser(t, "alpha", "a@alpha.test", "alpha password 1")
	b := e.browser(t)
	b.login("a@alpha.test", "alpha password 1")

	// Without following the redirect: the key waits in the session.
	p := b.post("/admin/integrations/keys", url.Values{"name": {"not followed"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("create: %d", p.status)
	}
	waiting := dataFiles(t, e.dir)
	shown := b.get(p.location)
	plaintext := keyPattern.FindString(shown.body)
	if plaintext == "" {
		t.Fatal("the created page does not show the key")
	}
	assertAbsent(t, waiting, plaintext, "while the key waited in the session")
	assertAbsent(t, dataFiles(t, e.dir), plaintext, "after it was shown")

	// Following the redirect, a few times.
	for i := range 3 {
		_, plaintext := b.createKey(fmt.Sprintf("followed %d", i))
		assertAbsent(t, dataFiles(t, e.dir), plaintext, "a key shown at once")
	}
	// A key left waiting, then the session's data is all there is.
	b.post("/admin/integrations/keys", url.Values{"name": {"never shown"}})
	if _, err := e.db.SQL().Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	files := dataFiles(t, e.dir)
	for name, data := range files {
		if keyPattern.Match(data) {
			t.Errorf("something shaped like a key is in %s", name)
		}
	}
}

func TestStaticFilesHaveNoListing(t *testing.T) {
	e := newEnv(t)
	b := e.browser(t)
	for _, path := range []string{"/admin/static/", "/admin/static"} {
		if p := b.get(path); p.status != http.StatusNotFound && p.status != http.StatusTemporaryRedirect {
			t.Errorf("%s: %d", path, p.status)
		} else if strings.Contains(p.body, `<a href="admin.css">`) {
			t.Errorf("%s lists the directory", path)
		}
	}
	if p := b.get("/admin/static/admin.css"); p.status != 200 {
		t.Errorf("a static file: %d", p.status)
	}
}
