package main

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/webhook"
)

// webhookEvent is a delivered event as receivers read it (the Go client's
// WebhookEvent; the client is a module of its own, tested against the same
// signatures there).
type webhookEvent struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Timestamp time.Time       `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// receiver is a webhook receiver on loopback that verifies every delivery
// with the endpoint's secret (the Standard Webhooks check) and
// can fail the first attempts of each event.
type receiver struct {
	*httptest.Server
	mu        sync.Mutex
	secrets   []string
	failFirst int            // answer 500 to the first failFirst attempts of each event
	attempts  map[string]int // by event id
	events    []webhookEvent
	delivered map[string]int // successful deliveries by event id
	bad       []string
}

func newReceiver(t *testing.T, failFirst int) *receiver {
	rc := &receiver{failFirst: failFirst, attempts: map[string]int{}, delivered: map[string]int{}}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			// The sender died mid-request (a test kills it): the body is
			// cut short, so this attempt never arrived as far as any
			// receiver is concerned; the sender retries it.
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		rc.mu.Lock()
		defer rc.mu.Unlock()
		var ev *webhookEvent
		for _, s := range rc.secrets {
			if err = webhook.Verify(s, r.Header, body, time.Now(), 5*time.Minute); err == nil {
				ev = &webhookEvent{}
				if err = json.Unmarshal(body, ev); err != nil {
					ev = nil
				}
				break
			}
		}
		if ev == nil {
			rc.bad = append(rc.bad, fmt.Sprintf("%s: %v", r.Header.Get("webhook-id"), err))
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		rc.attempts[ev.ID]++
		if rc.attempts[ev.ID] <= rc.failFirst {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		if rc.delivered[ev.ID] == 0 {
			rc.events = append(rc.events, *ev)
		}
		rc.delivered[ev.ID]++
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) addSecret(s string) {
	rc.mu.Lock()
	rc.secrets = append(rc.secrets, s)
	rc.mu.Unlock()
}

// waitFor polls cond until it holds, failing after a generous deadline
// (a bound on a hang, not a timing assertion).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(150 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// keyEvents lists the received events as "type key-id".
func (rc *receiver) keyEvents() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []string
	for _, ev := range rc.events {
		var data struct{ Key struct{ ID string } }
		json.Unmarshal(ev.Data, &data)
		out = append(out, ev.Type+" "+data.Key.ID)
	}
	return out
}

func contains(list []string, want ...string) bool {
	have := map[string]bool{}
	for _, s := range list {
		have[s] = true
	}
	for _, w := range want {
		if !have[w] {
			return false
		}
	}
	return true
}

// TestWebhookKeyEventsFromAdminAndCommandLine: a receiver on loopback
// (allowed by the operator's setting) gets key.created, key.revoked and
// key.rolled for changes made on the command line and in the admin area,
// each verifying with the Standard Webhooks signature check; endpoints
// made both ways work, and every change is in the audit log.
func TestWebhookKeyEventsFromAdminAndCommandLine(t *testing.T) {
	dir := t.TempDir()
	createAdmin(t, dir)
	env := map[string]string{"ASSISTANT_DATA_DIR": dir, "ASSISTANT_WEBHOOK_ALLOW_PRIVATE": "true"}
	base, _ := startServer(t, env)
	getenv := func(k string) string { return env[k] }
	cli := func(args ...string) string {
		t.Helper()
		out, errOut, err := cliRun(getenv, "", args...)
		if err != nil {
			t.Fatalf("assistant %v: %v\n%s", args, err, errOut)
		}
		return out
	}
	rcCLI, rcAdmin := newReceiver(t, 0), newReceiver(t, 0)

	// An endpoint from the command line.
	var made struct{ ID, Secret string }
	json.Unmarshal([]byte(cli("webhooks", "create", "--workspace", "default", "--url", rcCLI.URL+"/hook", "--events", "key.created,key.revoked,key.rolled", "--json")), &made)
	if !strings.HasPrefix(made.Secret, "whsec_") {
		t.Fatalf("webhooks create printed no secret: %+v", made)
	}
	rcCLI.addSecret(made.Secret)

	// An endpoint from the admin area.
	hc := &http.Client{CheckRedirect: noRedirects}
	cookie := adminLogin(t, hc, base)
	post := func(path string, form url.Values) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Cookie", strings.Split(cookie, ";")[0])
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	get := func(path string) string {
		t.Helper()
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Cookie", strings.Split(cookie, ";")[0])
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	resp := post("/admin/webhooks", url.Values{"url": {rcAdmin.URL + "/hook"}, "events": {"key.created", "key.revoked", "key.rolled"}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("POST /admin/webhooks: %d", resp.StatusCode)
	}
	page := get(resp.Header.Get("Location"))
	m := regexp.MustCompile(`id="new-secret">(whsec_[^<]+)<`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the secret page shows no secret:\n%s", page)
	}
	// The page escapes the secret as HTML ("+" is &#43;), as a browser
	// shows and copies it.
	rcAdmin.addSecret(html.UnescapeString(m[1]))
	if again := get(resp.Header.Get("Location")); strings.Contains(again, m[1]) {
		t.Error("the secret was shown a second time")
	}

	// Key changes on the command line.
	var k1 struct{ ID, Key string }
	json.Unmarshal([]byte(cli("keys", "create", "--workspace", "default", "--name", "cli", "--json")), &k1)
	cli("keys", "revoke", k1.ID)
	var k2, k3 struct{ ID, Key string }
	json.Unmarshal([]byte(cli("keys", "create", "--workspace", "default", "--name", "to roll", "--json")), &k2)
	json.Unmarshal([]byte(cli("keys", "roll", k2.ID, "--json")), &k3)

	// Key changes in the admin area.
	resp = post("/admin/integrations/keys", url.Values{"name": {"admin key"}})
	loc := resp.Header.Get("Location")
	adminKey := regexp.MustCompile(`/keys/([0-9A-Za-z]{12})/created`).FindStringSubmatch(loc)
	if adminKey == nil {
		t.Fatalf("key creation redirected to %q", loc)
	}
	if r := post("/admin/integrations/keys/"+adminKey[1]+"/revoke", nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("revoke: %d", r.StatusCode)
	}
	var k4 struct{ ID, Key string }
	json.Unmarshal([]byte(cli("keys", "create", "--workspace", "default", "--name", "admin roll", "--json")), &k4)
	resp = post("/admin/integrations/keys/"+k4.ID+"/roll", url.Values{"grace": {"1h"}})
	rolled := regexp.MustCompile(`/keys/([0-9A-Za-z]{12})/created`).FindStringSubmatch(resp.Header.Get("Location"))
	if rolled == nil {
		t.Fatalf("roll redirected to %q", resp.Header.Get("Location"))
	}

	want := []string{
		"key.created " + k1.ID, "key.revoked " + k1.ID, // command line
		"key.created " + k3.ID, "key.rolled " + k2.ID, "key.revoked " + k2.ID, // keys roll, no grace
		"key.created " + adminKey[1], "key.revoked " + adminKey[1], // admin area
		"key.created " + rolled[1], "key.rolled " + k4.ID, // admin roll with a grace period
	}
	for _, rc := range []*receiver{rcCLI, rcAdmin} {
		deadline := time.Now().Add(90 * time.Second)
		for !contains(rc.keyEvents(), want...) {
			if time.Now().After(deadline) {
				rc.mu.Lock()
				t.Logf("bad deliveries: %v; attempts: %v", rc.bad, rc.attempts)
				rc.mu.Unlock()
				t.Fatalf("timed out waiting for the key events: got %q, want %q\ndelivery log:\n%s", rc.keyEvents(), want,
					cli("webhooks", "deliveries", "--workspace", "default"))
			}
			time.Sleep(20 * time.Millisecond)
		}
		rc.mu.Lock()
		if len(rc.bad) > 0 {
			t.Errorf("deliveries that did not verify: %v", rc.bad)
		}
		for id, n := range rc.delivered {
			if n != 1 {
				t.Errorf("event %s delivered %d times", id, n)
			}
		}
		rc.mu.Unlock()
	}
	if got := rcAdmin.keyEvents(); contains(got, "key.revoked "+k4.ID) {
		t.Error("a roll with a grace period announced a revocation")
	}

	// The delivery log, on the command line and in the admin area.
	if log := cli("webhooks", "deliveries", "--workspace", "default", "--endpoint", made.ID); !strings.Contains(log, "delivered") {
		t.Errorf("webhooks deliveries:\n%s", log)
	}
	if page := get("/admin/webhooks"); !strings.Contains(page, "delivered") || !strings.Contains(page, made.ID) {
		t.Errorf("the webhooks page lacks the endpoints or the log")
	}
	// A manual resend from the admin area delivers the event again, with
	// the same id.
	type delivery struct {
		ID      int64  `json:"id"`
		EventID string `json:"event_id"`
		Status  string `json:"status"`
	}
	var log []delivery
	json.Unmarshal([]byte(cli("webhooks", "deliveries", "--workspace", "default", "--endpoint", made.ID, "--json")), &log)
	// The newest entry may still be on its way (a busy machine): resend
	// the newest one that was delivered.
	done := slices.IndexFunc(log, func(d delivery) bool { return d.Status == "delivered" })
	if done < 0 {
		t.Fatalf("no delivered entry in the delivery log %+v", log)
	}
	resent := log[done]
	if r := post(fmt.Sprintf("/admin/webhooks/deliveries/%d/resend", resent.ID), nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("resend: %d", r.StatusCode)
	}
	waitFor(t, "the resent delivery", func() bool { rcCLI.mu.Lock(); defer rcCLI.mu.Unlock(); return rcCLI.delivered[resent.EventID] == 2 })
	// Every change is audited.
	audit := get("/admin/audit")
	for _, action := range []string{"webhook.created", "webhook.resent", "key.rolled", "key.revoked"} {
		if !strings.Contains(audit, action) {
			t.Errorf("the audit log lacks %s", action)
		}
	}
}

// TestWebhookURLsRefusedWithoutTheSetting: loopback, private and
// link-local targets, by address or by a name resolving to one, are
// refused at creation when the operator has not allowed them, from the
// command line and the admin area, and nothing is stored.
func TestWebhookURLsRefusedWithoutTheSetting(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"ASSISTANT_DATA_DIR": dir}
	getenv := func(k string) string { return env[k] }
	if _, _, err := cliRun(getenv, "", "keys", "create", "--workspace", "default", "--name", "x"); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"https://127.0.0.1/hook", "https://10.0.0.1/hook", "https://10.200.3.4:8443/hook",
		"https://169.254.169.254/latest/meta-data/", "https://localhost/hook", "http://93.184.215.14/hook"} {
		if out, errOut, err := cliRun(getenv, "", "webhooks", "create", "--workspace", "default", "--url", u); err == nil {
			t.Errorf("webhooks create --url %s was accepted: %s", u, out)
		} else if !strings.Contains(errOut+err.Error(), "refused") {
			t.Errorf("webhooks create --url %s: %v %s", u, err, errOut)
		}
	}
	if out, _, _ := cliRun(getenv, "", "webhooks", "list", "--workspace", "default", "--json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("refused endpoints were stored: %s", out)
	}
	// The admin area refuses the same way, with a 400 page.
	createAdmin(t, dir)
	base, _ := startServer(t, env)
	hc := &http.Client{CheckRedirect: noRedirects}
	cookie := adminLogin(t, hc, base)
	req, _ := http.NewRequest("POST", base+"/admin/webhooks", strings.NewReader(url.Values{"url": {"https://169.254.169.254/x"}, "events": {"key.created"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Cookie", strings.Split(cookie, ";")[0])
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "not public") {
		t.Errorf("admin create of a link-local URL: %d\n%s", resp.StatusCode, body)
	}
}

var _ = context.Background
