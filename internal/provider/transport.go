package provider

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// recordKey keys the record of the current attempt in a request's context.
type recordKey struct{}

// record is what the transport saw of one attempt. The SDK may read the body on another goroutine than
// the one that made the request, hence the mutex.
type record struct {
	mu         sync.Mutex
	status     int
	retryAfter time.Duration
	netErr     error
	timedOut   bool
}

func (r *record) snapshot() record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return record{status: r.status, retryAfter: r.retryAfter, netErr: r.netErr, timedOut: r.timedOut}
}

func (r *record) setTimedOut() {
	r.mu.Lock()
	r.timedOut = true
	r.mu.Unlock()
}

func (r *record) response(resp *http.Response) {
	r.mu.Lock()
	r.status = resp.StatusCode
	r.retryAfter = RetryAfter(resp.Header, time.Now())
	r.mu.Unlock()
}

func (r *record) fail(err error) {
	r.mu.Lock()
	if r.netErr == nil {
		r.netErr = err
	}
	r.mu.Unlock()
}

// HTTPClient returns a copy of base (nil means a new client) whose transport records what Do needs to
// judge an attempt: the response status, Retry-After, and connection errors, also those met while reading
// the body (a stream cut mid-way).
func (c *Caller) HTTPClient(base *http.Client) *http.Client {
	var cl http.Client
	if base != nil {
		cl = *base
	}
	rt := cl.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	cl.Transport = &transport{base: rt}
	return &cl
}

type transport struct{ base http.RoundTripper }

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec, _ := req.Context().Value(recordKey{}).(*record)
	resp, err := t.base.RoundTrip(req)
	if rec == nil {
		return resp, err
	}
	if err != nil {
		if req.Context().Err() == nil {
			rec.fail(err)
		}
		return resp, err
	}
	rec.response(resp)
	resp.Body = &watchedBody{ReadCloser: resp.Body, rec: rec, ctx: req.Context()}
	return resp, nil
}

// watchedBody records a read error that is not the end of the body or the caller giving up.
type watchedBody struct {
	io.ReadCloser
	rec *record
	ctx context.Context
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && b.ctx.Err() == nil {
		b.rec.fail(err)
	}
	return n, err
}

// RetryAfter parses the wait a response asks for: the Retry-After-Ms header (OpenAI), or Retry-After in
// seconds or as an HTTP date. Zero when absent or unparsable.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
