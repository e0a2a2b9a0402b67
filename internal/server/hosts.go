package server

import (
	"net"
	"net/netip"
	"strings"
)

// hostPolicy is the allow-list of Host header values (host names, without port). A page on another site
// can make a browser send requests to a server on loopback through a name that resolves to 127.0.0.1 (DNS
// rebinding): the same-origin and CORS checks then see matching Host and Origin headers. Checking the name
// the client asked for refuses those requests.
type hostPolicy struct {
	any   bool
	names map[string]bool
}

func newHostPolicy(allowed []string) hostPolicy {
	p := hostPolicy{names: map[string]bool{}}
	for _, h := range allowed {
		h = normalizeHost(h)
		if h == "*" {
			p.any = true
		}
		if h != "" {
			p.names[h] = true
		}
	}
	if len(p.names) == 0 {
		p.any = true
	}
	return p
}

// allows reports whether a request's Host (with or without port) is on the list.
func (p hostPolicy) allows(host string) bool {
	return p.any || p.names[normalizeHost(host)]
}

// normalizeHost lower-cases a host, drops its port and a trailing dot, and writes IPv6 addresses without
// brackets ("[::1]:8080" → "::1").
func normalizeHost(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(h, "]"), "["), ".")
	return h
}

// DefaultAllowedHosts is the host allow-list of a server listening on addr when RAGD_ALLOWED_HOSTS is not
// set: the listen host itself, plus localhost, 127.0.0.1 and ::1 when it is a loopback address (the names a
// local user types). A server on every interface (0.0.0.0, ::, or no host) is reached by names it cannot
// know: it gets no default list (every host), and should be given one.
func DefaultAllowedHosts(addr string) []string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	host = normalizeHost(host)
	ip, ipErr := netip.ParseAddr(host)
	switch {
	case host == "" || (ipErr == nil && ip.IsUnspecified()):
		return nil
	case host == "localhost" || (ipErr == nil && ip.IsLoopback()):
		return dedupe([]string{host, "localhost", "127.0.0.1", "::1"})
	}
	return []string{host}
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	out := s[:0]
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
