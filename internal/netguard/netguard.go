// Package netguard makes the HTTP clients ragd uses to reach addresses a user gave it (a URL to ingest, a web
// source, a webhook): they refuse loopback, private, link-local, multicast and unspecified addresses unless the
// operator allowed them. The check runs on the address actually dialled, after DNS resolution and on every
// redirect, so neither a DNS name pointing inside nor a redirect to 127.0.0.1 gets through.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// ErrForbiddenAddress is wrapped by the dial error of a refused address.
var ErrForbiddenAddress = errors.New("address not allowed")

// Options says what a client may reach.
type Options struct {
	// AllowPrivate allows loopback, private (RFC 1918, fc00::/7) and CGNAT addresses: for sources inside the
	// operator's own network, and for tests on 127.0.0.1. Link-local addresses stay refused even then: the
	// cloud metadata services (169.254.169.254, fd00:ec2::254) answer there with the machine's credentials,
	// and no document source lives on a link-local address.
	AllowPrivate bool
	// Timeout bounds one request including reading the body (0: 60 s).
	Timeout time.Duration
	// MaxRedirects bounds the redirects followed (0: 5; a negative value follows none).
	MaxRedirects int
}

// Allowed reports whether an address may be dialled under o.
func (o Options) Allowed(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsUnspecified() || ip.IsMulticast() || ip.IsInterfaceLocalMulticast() ||
		ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip == awsMetadataV6 {
		return false
	}
	if o.AllowPrivate {
		return true
	}
	if ip.IsLoopback() || ip.IsPrivate() {
		return false
	}
	for _, p := range reserved {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// awsMetadataV6 is the IPv6 address of AWS's instance metadata service (a unique-local address, which
// AllowPrivate would otherwise allow).
var awsMetadataV6 = netip.MustParseAddr("fd00:ec2::254")

// reserved are ranges that are neither private nor public in netip's sense but must not be reached from
// outside input: CGNAT, "this network", IETF protocol assignments, benchmarking, reserved, and the IPv6
// NAT64/discard/documentation prefixes that can map onto internal IPv4 addresses.
var reserved = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("100::/64"),
	netip.MustParsePrefix("2001:db8::/32"),
}

// Dialer returns a dialer that refuses the addresses o does not allow.
func (o Options) Dialer() *net.Dialer {
	return &net.Dialer{
		Timeout: 10 * time.Second,
		Control: func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("%w: %s", ErrForbiddenAddress, address)
			}
			if !o.Allowed(ap.Addr()) {
				return fmt.Errorf("%w: %s", ErrForbiddenAddress, ap.Addr())
			}
			return nil
		},
	}
}

// Client returns an HTTP client under o. It uses no proxy from the environment: a proxy would dial the
// address on ragd's behalf and bypass the check.
func (o Options) Client() *http.Client {
	timeout := o.Timeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	maxRedirects := o.MaxRedirects
	if maxRedirects == 0 {
		maxRedirects = 5
	}
	d := o.Dialer()
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
	}
	return &http.Client{
		Transport: tr,
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return fmt.Errorf("stopped after %d redirects", maxRedirects)
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("redirect to a %q URL refused", req.URL.Scheme)
			}
			return nil
		},
	}
}

// IsForbidden reports whether err is (or wraps) a refused address.
func IsForbidden(err error) bool { return errors.Is(err, ErrForbiddenAddress) }

// DialContext dials addr under o, for callers that need a guarded connection that is not HTTP.
func (o Options) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return o.Dialer().DialContext(ctx, network, addr)
}
