// Package ratelimit makes the HTTP clients of API-backed sources (Notion, Google Drive) back off when the
// API says it is overloaded: a 429 (or a 503) is retried after the response's Retry-After, else after an
// exponential delay, a bounded number of times. It wraps the SSRF-guarded client's transport, so the
// retries go through the same guard.
package ratelimit

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Defaults of Transport.
const (
	DefaultMaxRetries = 6
	DefaultBaseDelay  = time.Second
	// MaxDelay bounds one wait, whatever Retry-After asks.
	MaxDelay = 2 * time.Minute
)

// Transport retries throttled requests.
type Transport struct {
	// Base does the requests (the guarded client's transport; http.DefaultTransport when nil).
	Base http.RoundTripper
	// MaxRetries bounds the retries of one request (DefaultMaxRetries when 0).
	MaxRetries int
	// BaseDelay is the first wait when the response says none; it doubles at each retry (DefaultBaseDelay
	// when 0).
	BaseDelay time.Duration
	// Sleep waits (a timer that ends early with ctx when nil); tests record the waits instead.
	Sleep func(ctx context.Context, d time.Duration) error
	// Throttled reports whether a response asks to slow down (429 or 503 when nil). Google APIs also say
	// so with 403 rateLimitExceeded.
	Throttled func(resp *http.Response, body []byte) bool
}

// Client returns a copy of c whose transport is t over c's transport.
func Client(c *http.Client, t Transport) *http.Client {
	cc := *c
	t.Base = c.Transport
	cc.Transport = &t
	return &cc
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	retries := t.MaxRetries
	if retries == 0 {
		retries = DefaultMaxRetries
	}
	delay := t.BaseDelay
	if delay == 0 {
		delay = DefaultBaseDelay
	}
	for attempt := 0; ; attempt++ {
		if attempt > 0 && req.Body != nil && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			req = req.Clone(req.Context())
			req.Body = body
		}
		resp, err := base.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		if !t.throttled(resp) || attempt == retries || (req.Body != nil && req.GetBody == nil) {
			return resp, nil
		}
		wait := RetryAfter(resp.Header.Get("Retry-After"), time.Now())
		if wait == 0 {
			wait = delay << attempt
		}
		resp.Body.Close()
		if err := t.sleep(req.Context(), min(wait, MaxDelay)); err != nil {
			return nil, fmt.Errorf("waiting out the API's rate limit: %w", err)
		}
	}
}

func (t *Transport) throttled(resp *http.Response) bool {
	if t.Throttled == nil {
		return resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable
	}
	if resp.StatusCode < 400 {
		return false
	}
	// Read the error body to decide, and give the caller an equal one back.
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	resp.Body = io.NopCloser(strings.NewReader(string(body)))
	return t.Throttled(resp, body)
}

func (t *Transport) sleep(ctx context.Context, d time.Duration) error {
	if t.Sleep != nil {
		return t.Sleep(ctx, d)
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}

// RetryAfter reads a Retry-After header: seconds or an HTTP date; 0 when absent or unreadable.
func RetryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(h, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
