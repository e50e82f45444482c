package api

import (
	"net/http"
	"net/netip"
	"strings"
)

// RequestIsHTTPS reports whether the client reached the service over
// https: the request came over TLS, or its peer is a trusted proxy that
// says so with X-Forwarded-Proto: https or Forwarded: proto=https. The
// last value of either header counts (the one the nearest proxy wrote);
// from any other peer the headers are ignored.
func RequestIsHTTPS(r *http.Request, trusted []netip.Prefix) bool {
	if r.TLS != nil {
		return true
	}
	peer := parseAddr(r.RemoteAddr)
	if !peer.IsValid() || !isTrusted(peer, trusted) {
		return false
	}
	if proto, ok := lastForwardedProto(r.Header.Values("Forwarded")); ok {
		return strings.EqualFold(proto, "https")
	}
	if v := lastListValue(r.Header.Values("X-Forwarded-Proto")); v != "" {
		return strings.EqualFold(v, "https")
	}
	return false
}

// lastListValue is the last element of a comma-separated header.
func lastListValue(values []string) string {
	if len(values) == 0 {
		return ""
	}
	parts := strings.Split(values[len(values)-1], ",")
	return strings.TrimSpace(parts[len(parts)-1])
}

// lastForwardedProto is the proto parameter of the last element of
// Forwarded (RFC 7239), when it has one.
func lastForwardedProto(values []string) (string, bool) {
	element := lastListValue(values)
	for _, pair := range strings.Split(element, ";") {
		name, value, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if ok && strings.EqualFold(name, "proto") {
			return strings.Trim(value, `"`), true
		}
	}
	return "", false
}
