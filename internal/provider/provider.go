// Package provider holds what every hosted-model adapter shares: per-attempt timeouts, retries with
// exponential back-off and jitter that honour Retry-After, a per-provider concurrency limit, and the mapping
// of a failure to a user-safe *rag.Error (embedding_failed or llm_failed) that carries the provider's reason
// and never its key.
//
// Adapters call their official SDK inside Caller.Do, with the SDK's own retries turned off and its HTTP client
// wrapped by Caller.HTTPClient: the wrapper records the status, the Retry-After header and broken connections
// of each attempt, which the SDKs do not all expose in their errors.
package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/telemetry"
)

// Defaults of Policy and Retry.
const (
	DefaultTimeout        = 60 * time.Second
	DefaultMaxAttempts    = 3
	DefaultBaseDelay      = 500 * time.Millisecond
	DefaultMaxDelay       = 30 * time.Second
	DefaultMaxConcurrency = 4
)

// maxReason bounds how much of a provider's error text reaches a message.
const maxReason = 300

// Policy configures a Caller.
type Policy struct {
	// Provider names the provider in messages ("gemini", "openai", "anthropic").
	Provider string
	// Code is the error code of every failure: rag.CodeEmbeddingFailed or rag.CodeLLMFailed.
	Code rag.Code
	// Timeout bounds one attempt, including reading a whole stream (default DefaultTimeout). A timed-out
	// attempt is not retried: a provider that does not answer in time is overloaded or the request is too
	// big, and retrying would multiply the caller's wait.
	Timeout time.Duration
	// Retry is the retry policy.
	Retry Retry
	// MaxConcurrency is how many calls may be in flight at once (default DefaultMaxConcurrency).
	MaxConcurrency int
	// Secrets are redacted from every message and wrapped cause (the API key).
	Secrets []string
	// Explain extracts the status and the provider's reason from an error of the adapter's SDK; nil means
	// the error text is the reason.
	Explain func(error) Failure
	// Logger receives a warning per retry (default slog.Default()).
	Logger *slog.Logger
}

// Retry is a retry policy: a call that failed with 429, 408, 5xx or a network error is tried again, up to
// MaxAttempts tries in all, after BaseDelay·2^n with jitter, or after what the provider's Retry-After says.
type Retry struct {
	// MaxAttempts is the number of tries in all, the first included (default DefaultMaxAttempts: the call
	// and up to two retries, so that three 5xx in a row fail the call; 1 means no retry).
	MaxAttempts int
	// BaseDelay is the wait before the first retry (default DefaultBaseDelay); it doubles per retry.
	BaseDelay time.Duration
	// MaxDelay caps a back-off wait (default DefaultMaxDelay). When the provider asks for a longer wait
	// with Retry-After, the call fails at once instead of retrying too early.
	MaxDelay time.Duration
	// Sleep waits d or until ctx is done (default: a timer). Tests replace it to see the waits.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Failure is what an adapter can tell about an error returned by its SDK.
type Failure struct {
	// Status is the HTTP status of the provider's answer (0 when unknown).
	Status int
	// Reason is the provider's own explanation (its error message).
	Reason string
	// RetryAfter is a wait the provider asked for in its body (e.g. Gemini's RetryInfo).
	RetryAfter time.Duration
}

// Caller runs provider calls under a Policy. It is safe for concurrent use.
type Caller struct {
	p   Policy
	sem chan struct{}
}

// New returns a Caller for p, with defaults filled in.
func New(p Policy) *Caller {
	if p.Timeout <= 0 {
		p.Timeout = DefaultTimeout
	}
	if p.Retry.MaxAttempts <= 0 {
		p.Retry.MaxAttempts = DefaultMaxAttempts
	}
	if p.Retry.BaseDelay <= 0 {
		p.Retry.BaseDelay = DefaultBaseDelay
	}
	if p.Retry.MaxDelay <= 0 {
		p.Retry.MaxDelay = DefaultMaxDelay
	}
	if p.Retry.Sleep == nil {
		p.Retry.Sleep = sleep
	}
	if p.MaxConcurrency <= 0 {
		p.MaxConcurrency = DefaultMaxConcurrency
	}
	if p.Code == "" {
		p.Code = rag.CodeInternal
	}
	if p.Logger == nil {
		p.Logger = slog.Default()
	}
	var secrets []string
	for _, s := range p.Secrets {
		if s != "" {
			secrets = append(secrets, s)
		}
	}
	p.Secrets = secrets
	return &Caller{p: p, sem: make(chan struct{}, p.MaxConcurrency)}
}

// Policy returns the policy in force, defaults filled in.
func (c *Caller) Policy() Policy { return c.p }

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// permanent marks an error that must not be retried.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Permanent marks err as not worth retrying: for example a stream that already delivered part of the
// answer to the caller, where a retry would repeat text.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanent{err}
}

// badResponse is a response that arrived but cannot be used.
type badResponse struct{ reason string }

func (b badResponse) Error() string { return b.reason }

// BadResponse returns a permanent error for a response that arrived but cannot be used (wrong vector count
// or dimension, no candidate, …); reason is shown to the user.
func BadResponse(format string, args ...any) error {
	return permanent{badResponse{fmt.Sprintf(format, args...)}}
}

// ErrIncomplete means a stream ended without the provider's final event: the connection was cut, so the
// answer is incomplete. It counts as a network error.
var ErrIncomplete = fmt.Errorf("stream ended before the provider finished: %w", io.ErrUnexpectedEOF)

// Do runs fn under the policy: it waits for a concurrency slot, gives fn a context bounded by the
// timeout, and retries failures that are worth retrying. An error is a *rag.Error with the policy's code
// whose message names the provider and gives its reason; the key never appears in it.
func (c *Caller) Do(ctx context.Context, fn func(ctx context.Context) error) error {
	attempts := 0
	for {
		attempts++
		rec := &record{}
		err := c.attempt(ctx, rec, fn)
		if err == nil {
			return nil
		}
		v := c.judge(ctx, err, rec)
		if !v.retry || attempts >= c.p.Retry.MaxAttempts {
			return c.fail(v, err, attempts)
		}
		wait := c.backoff(attempts)
		if v.retryAfter > 0 {
			if v.retryAfter > c.p.Retry.MaxDelay {
				v.detail = fmt.Sprintf("the provider asked to retry after %s", v.retryAfter.Round(time.Second))
				return c.fail(v, err, attempts)
			}
			wait = v.retryAfter + time.Duration(rand.Int64N(int64(v.retryAfter)/10+1))
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return c.fail(v, err, attempts)
		}
		telemetry.ModelRetry(c.p.Provider)
		c.p.Logger.WarnContext(ctx, "provider call failed, retrying",
			slog.String("provider", c.p.Provider), slog.String("code", string(c.p.Code)),
			slog.Int("attempt", attempts), slog.Int("status", v.status), slog.Duration("wait", wait),
			slog.String("reason", c.redact(v.reason)))
		if err := c.p.Retry.Sleep(ctx, wait); err != nil {
			return c.fail(verdict{kind: kindCanceled}, err, attempts)
		}
	}
}

func (c *Caller) attempt(ctx context.Context, rec *record, fn func(ctx context.Context) error) error {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-c.sem }()
	actx, cancel := context.WithTimeout(context.WithValue(ctx, recordKey{}, rec), c.p.Timeout)
	defer cancel()
	err := fn(actx)
	if err != nil && actx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
		rec.setTimedOut()
	}
	return err
}

// backoff is the wait before retry n (1-based): BaseDelay·2^(n-1), capped, with jitter in [½, 1].
func (c *Caller) backoff(n int) time.Duration {
	d := c.p.Retry.BaseDelay << (n - 1)
	if d <= 0 || d > c.p.Retry.MaxDelay {
		d = c.p.Retry.MaxDelay
	}
	half := int64(d) / 2
	return time.Duration(half + rand.Int64N(half+1))
}

type kind int

const (
	kindHTTP kind = iota
	kindTimeout
	kindCanceled
	kindNetwork
	kindBad
)

type verdict struct {
	kind       kind
	retry      bool
	status     int
	reason     string
	retryAfter time.Duration
	detail     string
}

func (c *Caller) judge(ctx context.Context, err error, rec *record) verdict {
	st := rec.snapshot()
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return verdict{kind: kindTimeout}
		}
		return verdict{kind: kindCanceled}
	}
	if st.timedOut {
		return verdict{kind: kindTimeout}
	}
	var bad badResponse
	if errors.As(err, &bad) {
		return verdict{kind: kindBad, reason: bad.reason}
	}
	var perm permanent
	isPermanent := errors.As(err, &perm)
	f := Failure{Reason: err.Error()}
	if c.p.Explain != nil {
		f = c.p.Explain(err)
	}
	status := f.Status
	if status == 0 && st.status >= 400 {
		status = st.status
	}
	if status >= 400 {
		after := st.retryAfter
		if after == 0 {
			after = f.RetryAfter
		}
		return verdict{kind: kindHTTP, status: status, reason: f.Reason, retryAfter: after,
			retry: !isPermanent && retryableStatus(status)}
	}
	// A response that arrived whole but cannot be decoded is the provider's fault, even when the decoder
	// calls it an unexpected EOF; only a broken connection (seen by the transport) is worth a retry.
	broken := st.netErr != nil || errors.Is(err, ErrIncomplete) || (st.status == 0 && isNetworkError(err))
	if broken {
		reason := err.Error()
		if st.netErr != nil && !errors.Is(err, st.netErr) && !strings.Contains(reason, st.netErr.Error()) {
			reason += ": " + st.netErr.Error()
		}
		return verdict{kind: kindNetwork, reason: reason, retry: !isPermanent}
	}
	return verdict{kind: kindBad, reason: f.Reason}
}

func retryableStatus(s int) bool {
	return s == http.StatusTooManyRequests || s == http.StatusRequestTimeout || s >= 500
}

// isNetworkError reports errors of a connection that failed or broke, which another attempt may not meet.
func isNetworkError(err error) bool {
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &ne) || errors.As(err, &oe) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, http.ErrServerClosed)
}

func (c *Caller) fail(v verdict, cause error, attempts int) error {
	what := "embedding"
	if c.p.Code == rag.CodeLLMFailed {
		what = "generation"
	}
	name := c.p.Provider
	var msg string
	switch v.kind {
	case kindTimeout:
		msg = fmt.Sprintf("%s %s timed out after %s", name, what, c.p.Timeout)
	case kindCanceled:
		msg = fmt.Sprintf("%s %s was canceled", name, what)
	case kindHTTP:
		msg = fmt.Sprintf("%s %s failed: HTTP %d", name, what, v.status)
		if r := c.clip(v.reason); r != "" {
			msg += ": " + r
		}
	case kindNetwork:
		msg = fmt.Sprintf("%s %s failed: connection error: %s", name, what, c.clip(v.reason))
	case kindBad:
		msg = fmt.Sprintf("%s %s failed: unusable response: %s", name, what, c.clip(v.reason))
	}
	if v.detail != "" {
		msg += " (" + v.detail + ")"
	}
	if attempts > 1 {
		msg += fmt.Sprintf(" (gave up after %d attempts)", attempts)
	}
	return rag.WrapError(c.p.Code, redacted{cause, c.p.Secrets}, "%s", msg)
}

func (c *Caller) clip(s string) string {
	s = strings.Join(strings.Fields(c.redact(s)), " ")
	if r := []rune(s); len(r) > maxReason {
		s = string(r[:maxReason]) + "…"
	}
	return s
}

func (c *Caller) redact(s string) string { return redact(s, c.p.Secrets) }

func redact(s string, secrets []string) string {
	for _, k := range secrets {
		s = strings.ReplaceAll(s, k, "[redacted]")
	}
	return s
}

// redacted is a cause whose text has the secrets removed, so logging the wrapped error is safe too.
type redacted struct {
	err     error
	secrets []string
}

func (r redacted) Error() string { return redact(r.err.Error(), r.secrets) }
func (r redacted) Unwrap() error { return r.err }
