package main

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// certCheckInterval is how often, at most, serve looks whether the
// certificate or key file changed.
const certCheckInterval = time.Second

// certReloader serves the certificate of ASSISTANT_TLS_CERT_FILE and
// ASSISTANT_TLS_KEY_FILE and loads the pair again when either file changed
// (modification time or size), checked during handshakes at most once per
// certCheckInterval. A pair that does not load (half-written, mismatched)
// is logged and the previous one stays in use until the files load.
type certReloader struct {
	certFile, keyFile string
	logger            *slog.Logger
	now               func() time.Time

	mu      sync.Mutex
	cert    *tls.Certificate
	stamp   string // the files' modification times and sizes when cert was loaded
	checked time.Time
}

// newCertReloader loads the pair once: at start, a pair that does not load
// is an error.
func newCertReloader(certFile, keyFile string, logger *slog.Logger, now func() time.Time) (*certReloader, error) {
	c := &certReloader{certFile: certFile, keyFile: keyFile, logger: logger, now: now}
	stamp, err := c.fileStamp()
	if err == nil {
		err = c.load(stamp)
	}
	if err != nil {
		return nil, fmt.Errorf("loading the TLS certificate (ASSISTANT_TLS_CERT_FILE, ASSISTANT_TLS_KEY_FILE): %w", err)
	}
	c.checked = now()
	return c, nil
}

// tlsConfig is serve's TLS configuration: TLS 1.2 or later, HTTP/2
// offered, the certificate from the reloader.
func (c *certReloader) tlsConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: c.certificate, NextProtos: []string{"h2", "http/1.1"}}
}

func (c *certReloader) certificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := c.now(); now.Sub(c.checked) >= certCheckInterval {
		c.checked = now
		if stamp, err := c.fileStamp(); err != nil {
			c.logger.Warn("TLS certificate files unreadable; serving the loaded certificate", "err", err)
		} else if stamp != c.stamp {
			if err := c.load(stamp); err != nil {
				c.logger.Warn("TLS certificate files changed but do not load; serving the previous certificate", "err", err)
			} else {
				c.logger.Info("TLS certificate reloaded", "cert_file", c.certFile)
			}
		}
	}
	return c.cert, nil
}

func (c *certReloader) load(stamp string) error {
	cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return err
	}
	c.cert, c.stamp = &cert, stamp
	return nil
}

func (c *certReloader) fileStamp() (string, error) {
	var stamp string
	for _, name := range []string{c.certFile, c.keyFile} {
		fi, err := os.Stat(name)
		if err != nil {
			return "", err
		}
		stamp += fmt.Sprintf("%d:%d;", fi.ModTime().UnixNano(), fi.Size())
	}
	return stamp, nil
}
