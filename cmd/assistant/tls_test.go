package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeCert writes a self-signed certificate for 127.0.0.1 with the given
// serial number, and its key, to certFile and keyFile.
func writeCert(t *testing.T, certFile, keyFile string, serial int64) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "assistant test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	// Written next to the target and renamed, as certbot and cert-manager do.
	for name, block := range map[string]*pem.Block{certFile: {Type: "CERTIFICATE", Bytes: der}, keyFile: {Type: "EC PRIVATE KEY", Bytes: keyDER}} {
		tmp := name + ".tmp"
		if err := os.WriteFile(tmp, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, name); err != nil {
			t.Fatal(err)
		}
	}
}

// adminLogin creates an admin in the data dir and logs in through base
// with the given extra headers; it returns the session cookie's line.
func adminLogin(t *testing.T, client *http.Client, base string, header ...string) string {
	t.Helper()
	form := url.Values{"email": {"admin@example.com"}, "password": {"a long passphrase here"}}
	req, _ := http.NewRequest("POST", base+"/admin/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Header.Values("Set-Cookie") {
		if strings.HasPrefix(c, "assistant_admin=") {
			return c
		}
	}
	t.Fatalf("login: %d, no session cookie in %v", resp.StatusCode, resp.Header.Values("Set-Cookie"))
	return ""
}

func createAdmin(t *testing.T, dir string) {
	t.Helper()
	env := map[string]string{"ASSISTANT_DATA_DIR": dir}
	if _, errOut, err := cliRun(func(k string) string { return env[k] }, "a long passphrase here\n",
		"admin", "create-user", "--workspace", "default", "--email", "admin@example.com"); err != nil {
		t.Fatalf("create-user: %v %s", err, errOut)
	}
}

var noRedirects = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// serve terminates TLS itself: the session cookie is Secure, and a
// certificate replaced on disk is served without a restart.
func TestServeTerminatesTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	writeCert(t, certFile, keyFile, 1)
	createAdmin(t, dir)
	base, _ := startServer(t, map[string]string{"ASSISTANT_DATA_DIR": dir, "ASSISTANT_TLS_CERT_FILE": certFile, "ASSISTANT_TLS_KEY_FILE": keyFile})
	if !strings.HasPrefix(base, "https://") {
		t.Fatalf("serving on %s", base)
	}
	served := func() int64 {
		conn, err := tls.Dial("tcp", strings.TrimPrefix(base, "https://"), &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
	}
	client := &http.Client{CheckRedirect: noRedirects, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	if c := adminLogin(t, client, base); !strings.Contains(c, "; Secure") {
		t.Errorf("session cookie over TLS: %s", c)
	}
	if got := served(); got != 1 {
		t.Fatalf("serial %d, want 1", got)
	}
	writeCert(t, certFile, keyFile, 2)
	deadline := time.Now().Add(15 * time.Second)
	for served() != 2 {
		if time.Now().After(deadline) {
			t.Fatal("the renewed certificate is not served")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if resp, err := client.Get(base + "/healthz"); err != nil || resp.StatusCode != 200 {
		t.Errorf("healthz over TLS after the reload: %v", err)
	} else {
		resp.Body.Close()
	}
}

// Behind a proxy: the cookie is Secure when a trusted proxy says the
// client used https (X-Forwarded-Proto or Forwarded), not when an
// untrusted peer says it, and always with an https ASSISTANT_PUBLIC_URL.
func TestSecureCookieBehindAProxy(t *testing.T) {
	client := &http.Client{CheckRedirect: noRedirects}
	for _, c := range []struct {
		name   string
		env    map[string]string
		header []string
		secure bool
	}{
		{"trusted X-Forwarded-Proto", map[string]string{"ASSISTANT_TRUSTED_PROXIES": "127.0.0.1/32"}, []string{"X-Forwarded-Proto", "https"}, true},
		{"trusted Forwarded", map[string]string{"ASSISTANT_TRUSTED_PROXIES": "127.0.0.1/32"}, []string{"Forwarded", `for=192.0.2.1;proto=https`}, true},
		{"trusted, plain http", map[string]string{"ASSISTANT_TRUSTED_PROXIES": "127.0.0.1/32"}, []string{"X-Forwarded-Proto", "http"}, false},
		{"untrusted peer", map[string]string{"ASSISTANT_TRUSTED_PROXIES": "10.0.0.0/8"}, []string{"X-Forwarded-Proto", "https"}, false},
		{"https public URL", map[string]string{"ASSISTANT_PUBLIC_URL": "https://assistant.example.com"}, nil, true},
		{"nothing", nil, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			createAdmin(t, dir)
			env := map[string]string{"ASSISTANT_DATA_DIR": dir}
			for k, v := range c.env {
				env[k] = v
			}
			base, _ := startServer(t, env)
			cookie := adminLogin(t, client, base, c.header...)
			if got := strings.Contains(cookie, "; Secure"); got != c.secure {
				t.Errorf("Secure %v, want %v: %s", got, c.secure, cookie)
			}
		})
	}
}
