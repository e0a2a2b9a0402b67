package provider_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/provider"
	"github.com/ragd/ragd/internal/rag"
)

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name string
		h    http.Header
		want time.Duration
	}{
		{"None", http.Header{}, 0},
		{"Seconds", http.Header{"Retry-After": {"7"}}, 7 * time.Second},
		{"Fraction", http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond},
		{"Date", http.Header{"Retry-After": {now.Add(30 * time.Second).Format(http.TimeFormat)}}, 30 * time.Second},
		{"PastDate", http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{"Milliseconds", http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"1"}}, 250 * time.Millisecond},
		{"Garbage", http.Header{"Retry-After": {"soon"}}, 0},
		{"Negative", http.Header{"Retry-After": {"-3"}}, 0},
	} {
		if got := provider.RetryAfter(tc.h, now); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestErrorBodyReason(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ body, want string }{
		{`{"error":{"message":"Rate limit reached","type":"requests"}}`, "requests: Rate limit reached"},
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "overloaded_error: Overloaded"},
		{`{"error":{"code":429,"message":"Quota","status":"RESOURCE_EXHAUSTED"}}`, "RESOURCE_EXHAUSTED: Quota"},
		{`{"error":"model 'x' not found"}`, "model 'x' not found"},
		{`{"detail":"Not Found"}`, "Not Found"},
		{`{"object":"error","message":"bad dims"}`, "bad dims"},
		{`upstream connect error`, "upstream connect error"},
	} {
		if got := provider.ErrorBodyReason(tc.body); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.body, got, tc.want)
		}
	}
}

// server answers each request with the next status of a script (200 after it runs out).
func server(t *testing.T, statuses ...int) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		if i < len(statuses) && statuses[i] != 200 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(statuses[i])
			fmt.Fprint(w, `{"error":{"message":"try later","type":"busy"}}`)
			return
		}
		fmt.Fprint(w, `ok`)
	}))
	t.Cleanup(s.Close)
	return s, &n
}

// call is what an adapter does inside Do: a request through the caller's client, an error on a bad status.
func call(c *provider.Caller, url string) func(context.Context) error {
	client := c.HTTPClient(nil)
	return func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if resp.StatusCode >= 400 {
			return fmt.Errorf("status %d: %s", resp.StatusCode, body)
		}
		return nil
	}
}

func TestDo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	newCaller := func(s *fakeapi.Waits, p provider.Policy) *provider.Caller {
		p.Provider, p.Code = "acme", rag.CodeLLMFailed
		p.Retry.Sleep = s.Sleep
		p.Explain = func(err error) provider.Failure {
			_, body, _ := strings.Cut(err.Error(), ": ")
			return provider.Failure{Reason: provider.ErrorBodyReason(body)}
		}
		return provider.New(p)
	}
	t.Run("AttemptsBoundary", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			failures int
			ok       bool
		}{{2, true}, {3, false}} {
			s := &fakeapi.Waits{}
			srv, n := server(t, []int{503, 503, 503}[:tc.failures]...)
			c := newCaller(s, provider.Policy{})
			err := c.Do(ctx, call(c, srv.URL))
			if (err == nil) != tc.ok {
				t.Fatalf("%d failures: err %v", tc.failures, err)
			}
			if got := int(n.Load()); got != min(tc.failures+1, 3) {
				t.Fatalf("%d failures: %d attempts", tc.failures, got)
			}
			if !tc.ok {
				if msg := rag.ErrorMessage(err); msg != "acme generation failed: HTTP 503: busy: try later (gave up after 3 attempts)" {
					t.Fatalf("message %q", msg)
				}
			}
			for _, d := range s.All() {
				if d < time.Second {
					t.Fatalf("waited %v despite Retry-After: 1", d)
				}
			}
		}
	})
	t.Run("ClientErrorNotRetried", func(t *testing.T) {
		t.Parallel()
		srv, n := server(t, 400)
		c := newCaller(&fakeapi.Waits{}, provider.Policy{})
		if err := c.Do(ctx, call(c, srv.URL)); rag.ErrorCode(err) != rag.CodeLLMFailed || n.Load() != 1 {
			t.Fatalf("err %v after %d", err, n.Load())
		}
	})
	t.Run("Permanent", func(t *testing.T) {
		t.Parallel()
		c := newCaller(&fakeapi.Waits{}, provider.Policy{})
		var n int
		err := c.Do(ctx, func(context.Context) error {
			n++
			return provider.Permanent(io.ErrUnexpectedEOF)
		})
		if err == nil || n != 1 {
			t.Fatalf("err %v after %d", err, n)
		}
	})
	t.Run("BackoffGrows", func(t *testing.T) {
		t.Parallel()
		s := &fakeapi.Waits{}
		c := newCaller(s, provider.Policy{Retry: provider.Retry{MaxAttempts: 5, BaseDelay: 100 * time.Millisecond, MaxDelay: 300 * time.Millisecond}})
		_ = c.Do(ctx, func(context.Context) error { return provider.ErrIncomplete })
		if len(s.All()) != 4 {
			t.Fatalf("waits %v", s.All())
		}
		// Jitter keeps each wait within [½, 1] of 100ms·2^n, capped at 300ms.
		for i, d := range s.All() {
			hi := min(100*time.Millisecond<<i, 300*time.Millisecond)
			if d < hi/2 || d > hi {
				t.Fatalf("wait %d = %v, want in [%v, %v]", i, d, hi/2, hi)
			}
		}
	})
	t.Run("ConcurrencyLimit", func(t *testing.T) {
		t.Parallel()
		c := newCaller(&fakeapi.Waits{}, provider.Policy{MaxConcurrency: 2})
		var now, peak atomic.Int32
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				_ = c.Do(ctx, func(context.Context) error {
					v := now.Add(1)
					for p := peak.Load(); v > p && !peak.CompareAndSwap(p, v); p = peak.Load() {
					}
					time.Sleep(5 * time.Millisecond)
					now.Add(-1)
					return nil
				})
			})
		}
		wg.Wait()
		if p := peak.Load(); p != 2 {
			t.Fatalf("peak %d, limit 2", p)
		}
	})
	t.Run("CanceledWhileWaiting", func(t *testing.T) {
		t.Parallel()
		c := provider.New(provider.Policy{Provider: "acme", Code: rag.CodeEmbeddingFailed, Retry: provider.Retry{BaseDelay: time.Hour, MaxDelay: time.Hour}})
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan error)
		go func() { done <- c.Do(cctx, func(context.Context) error { return provider.ErrIncomplete }) }()
		time.Sleep(20 * time.Millisecond)
		cancel()
		err := <-done
		if rag.ErrorCode(err) != rag.CodeEmbeddingFailed || !strings.Contains(rag.ErrorMessage(err), "canceled") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("RedactsSecrets", func(t *testing.T) {
		t.Parallel()
		c := newCaller(&fakeapi.Waits{}, provider.Policy{Secrets: []string{"s3cr3t-key"}})
		err := c.Do(ctx, func(context.Context) error { return errors.New("status 400: {\"error\":\"bad key s3cr3t-key\"}") })
		if strings.Contains(err.Error(), "s3cr3t-key") || strings.Contains(fmt.Sprintf("%v", errors.Unwrap(err)), "s3cr3t-key") {
			t.Fatalf("secret in %v", err)
		}
	})
}
