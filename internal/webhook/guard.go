package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Guard decides which webhook URLs and addresses may be reached. By
// default only https URLs whose every address is public; AllowPrivate
// (ASSISTANT_WEBHOOK_ALLOW_PRIVATE, for tests and private networks)
// also admits http and loopback, private, link-local and other
// non-public addresses.
type Guard struct {
	AllowPrivate bool
	// Resolver looks names up at creation (net.DefaultResolver if nil).
	Resolver interface {
		LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
	}
}

// MaxURLLength bounds a webhook URL.
const MaxURLLength = 2000

// notPublic are ranges that are neither loopback, private nor link-local
// by netip's methods but are not the public internet either.
var notPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, broadcast
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64 (can reach IPv4 private space)
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
}

// Public reports whether a is a public unicast address.
func Public(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	for _, p := range notPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// ErrForbiddenAddress is the error of a target that is not public.
var ErrForbiddenAddress = errors.New("the address is loopback, private, link-local or otherwise not public")

// CheckURL checks a webhook URL at creation: absolute, https (http only
// with AllowPrivate), no user information or fragment, and a host whose
// every address is public unless AllowPrivate. The message of the error
// is safe to show.
func (g Guard) CheckURL(ctx context.Context, raw string) error {
	if len(raw) > MaxURLLength {
		return fmt.Errorf("the URL is longer than %d characters", MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return errors.New("the URL must be absolute, like https://hooks.example.com/assistant")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && g.AllowPrivate:
	default:
		return errors.New("the URL must use https")
	}
	if u.User != nil {
		return errors.New("the URL must not carry a user name or password")
	}
	if u.Fragment != "" {
		return errors.New("the URL must not have a fragment")
	}
	if g.AllowPrivate {
		return nil
	}
	host := u.Hostname()
	if a, err := netip.ParseAddr(host); err == nil {
		if !Public(a) {
			return fmt.Errorf("%s: %w", host, ErrForbiddenAddress)
		}
		return nil
	}
	r := g.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := r.LookupNetIP(ctx, "ip", strings.TrimSuffix(host, "."))
	if err != nil || len(addrs) == 0 {
		return fmt.Errorf("the host %s does not resolve", host)
	}
	for _, a := range addrs {
		if !Public(a) {
			return fmt.Errorf("%s resolves to %s: %w", host, a.Unmap(), ErrForbiddenAddress)
		}
	}
	return nil
}

// control is the dialer's check of the address it is about to connect
// to, after name resolution: a name that resolved to a public address at
// creation and to a private one now (DNS rebinding) is refused here.
func (g Guard) control(_, address string, _ syscall.RawConn) error {
	if g.AllowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%s: %w", address, ErrForbiddenAddress)
	}
	if !Public(ap.Addr()) {
		return fmt.Errorf("%s: %w", ap.Addr().Unmap(), ErrForbiddenAddress)
	}
	return nil
}

// Dialer returns a dialer whose every connection is checked by the guard
// at connect time.
func (g Guard) Dialer() *net.Dialer {
	return &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second, Control: g.control}
}
