package fakeapi

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// Fake is what the three fakes (Gemini, OpenAI, Anthropic) offer alike, so that one test suite can drive
// any of them (internal/embed/embedtest, internal/generate/generatetest).
type Fake interface {
	// BaseURL is the URL to give the provider's SDK.
	BaseURL() string
	Key() string
	FailNext(n int, f Fault)
	SetDown(down bool)
	SetAnswer(f func(prompt string) string)
	SetStructured(f func(prompt string, schema map[string]any) string)
	StructuredCalls() int
	Calls(endpoint string) int
	Stats() Stats
	MaxInFlight() int
	Violations() []string
	LastRequest(endpoint string) (Request, bool)
	Close()
}

var (
	_ Fake = (*Gemini)(nil)
	_ Fake = (*OpenAI)(nil)
	_ Fake = (*Anthropic)(nil)
)

// Waits stands in for provider.Retry.Sleep in tests: it records the back-off waits an adapter asks for and
// returns at once (with the context's error), so that retries are seen without sleeping.
type Waits struct {
	mu    sync.Mutex
	waits []time.Duration
}

// Sleep records d.
func (w *Waits) Sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.waits = append(w.waits, d)
	w.mu.Unlock()
	return ctx.Err()
}

// All returns the waits recorded so far, oldest first.
func (w *Waits) All() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.waits)
}

// Start starts a fake accepting key, closed when the test ends, and returns it with what open builds against
// its base URL (the adapter under test); an error of open fails the test.
func Start[F Fake, A any](t testing.TB, newFake func(key string) F, key string, open func(baseURL string) (A, error)) (F, A) {
	t.Helper()
	f := newFake(key)
	t.Cleanup(f.Close)
	a, err := open(f.BaseURL())
	if err != nil {
		t.Fatal(err)
	}
	return f, a
}
