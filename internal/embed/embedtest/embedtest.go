// Package embedtest is the suite every hosted embedder passes against its provider's fake
// (internal/fakeapi): vectors in order and normalised, batches at their boundary, the concurrency limit,
// and one fault matrix (429 with Retry-After, 5xx, timeouts, malformed JSON, a cut connection, a provider
// that is down, a wrong key, an unreachable server, a key that must never reach a message). An adapter's own
// tests keep only what is particular to its wire format.
package embedtest

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/provider"
	"github.com/ragd/ragd/internal/rag"
)

// Config is what the suite sets on the embedder under test; the rest stays at the adapter's defaults.
type Config struct {
	APIKey         string
	BaseURL        string
	Timeout        time.Duration
	Retry          provider.Retry
	BatchSize      int
	MaxConcurrency int
}

// Provider is the provider.Config of c, for the embedder's EmbedderConfig (BatchSize beside it).
func (c Config) Provider() provider.Config {
	return provider.Config{APIKey: c.APIKey, BaseURL: c.BaseURL, Timeout: c.Timeout, Retry: c.Retry, MaxConcurrency: c.MaxConcurrency}
}

// Kit describes an embedder to the suite.
type Kit struct {
	// Provider is the name in the embedder's space and messages ("gemini").
	Provider string
	// NewFake starts the provider's fake accepting key.
	NewFake func(key string) fakeapi.Fake
	// Key is a key in the provider's format; the suite checks that it never appears in an error.
	Key string
	// New returns the embedder (default model) for c.
	New func(c Config) (rag.Embedder, error)
	// Dim is the default model's dimension; MaxBatch the texts per request by default against the fake.
	Dim, MaxBatch int
	// ServerError is a text of the provider's answer to a 500 that the message must carry.
	ServerError string
	// WrongKey is a text of the provider's answer to a wrong key that the message must carry.
	WrongKey string
}

type bundle struct {
	fake  fakeapi.Fake
	emb   rag.Embedder
	waits *fakeapi.Waits
}

func (k Kit) setup(t *testing.T, c Config) *bundle {
	t.Helper()
	b := &bundle{waits: &fakeapi.Waits{}}
	b.fake, b.emb = fakeapi.Start(t, k.NewFake, k.Key, func(url string) (rag.Embedder, error) {
		c.APIKey, c.BaseURL = cmp.Or(c.APIKey, k.Key), url
		c.Timeout = cmp.Or(c.Timeout, 5*time.Second)
		c.Retry.Sleep = b.waits.Sleep
		return k.New(c)
	})
	return b
}

// Texts returns n distinct passages.
func Texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("passage number %d about runway lengths", i)
	}
	return out
}

// Run runs the suite as subtests of t.
func Run(t *testing.T, k Kit) {
	t.Run("EmbedDocuments", func(t *testing.T) {
		t.Parallel()
		b := k.setup(t, Config{})
		in := []string{"The runway is 3 km long.", "활주로 길이는 3킬로미터이다.", "Boundary layers thicken downstream."}
		vecs, err := b.emb.EmbedDocuments(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if sp := b.emb.Space(); sp.Provider != k.Provider || sp.Dim != k.Dim || sp.Model == "" {
			t.Fatalf("space %+v", sp)
		}
		if len(vecs) != len(in) {
			t.Fatalf("%d vectors", len(vecs))
		}
		for i, v := range vecs {
			if len(v) != k.Dim {
				t.Fatalf("dim %d", len(v))
			}
			unitLength(t, v)
			want := fakeapi.Vector(in[i], k.Dim)
			for j := range v {
				if math.Abs(float64(v[j]-want[j])) > 1e-5 {
					t.Fatalf("vector %d differs at %d: %f vs %f", i, j, v[j], want[j])
				}
			}
		}
		if v := b.fake.Violations(); len(v) > 0 {
			t.Errorf("violations: %v", v)
		}
	})
	t.Run("EmbedQuery", func(t *testing.T) {
		t.Parallel()
		b := k.setup(t, Config{})
		v, err := b.emb.EmbedQuery(context.Background(), "how long is the runway?")
		if err != nil {
			t.Fatal(err)
		}
		if len(v) != k.Dim {
			t.Fatalf("dim %d", len(v))
		}
		unitLength(t, v)
	})
	// The batch size at its boundary; order is kept across batches that ran concurrently.
	t.Run("Batches", func(t *testing.T) {
		t.Parallel()
		for _, n := range []int{1, k.MaxBatch, k.MaxBatch + 1, 2*k.MaxBatch + k.MaxBatch/2} {
			t.Run(fmt.Sprint(n), func(t *testing.T) {
				t.Parallel()
				b := k.setup(t, Config{})
				in := Texts(n)
				vecs, err := b.emb.EmbedDocuments(context.Background(), in)
				if err != nil {
					t.Fatal(err)
				}
				if len(vecs) != n {
					t.Fatalf("%d vectors", len(vecs))
				}
				for _, i := range []int{0, n - 1} {
					want := fakeapi.Vector(in[i], k.Dim)
					if vecs[i][0] != want[0] || vecs[i][k.Dim-1] != want[k.Dim-1] {
						t.Fatalf("vector %d out of order", i)
					}
				}
				if got, want := b.fake.Calls(fakeapi.EndpointEmbed), (n+k.MaxBatch-1)/k.MaxBatch; got != want {
					t.Fatalf("%d requests, want %d", got, want)
				}
				if st := b.fake.Stats(); st.EmbeddedTexts != n {
					t.Fatalf("fake embedded %d texts", st.EmbeddedTexts)
				}
			})
		}
	})
	t.Run("ConcurrencyLimit", func(t *testing.T) {
		t.Parallel()
		b := k.setup(t, Config{BatchSize: 1, MaxConcurrency: 2})
		for range 6 {
			b.fake.FailNext(1, fakeapi.Fault{Delay: 50 * time.Millisecond})
		}
		if _, err := b.emb.EmbedDocuments(context.Background(), Texts(6)); err != nil {
			t.Fatal(err)
		}
		if got := b.fake.MaxInFlight(); got > 2 || got < 1 {
			t.Fatalf("max in flight %d, limit 2", got)
		}
	})
	t.Run("EmptyText", func(t *testing.T) {
		t.Parallel()
		b := k.setup(t, Config{})
		_, err := b.emb.EmbedDocuments(context.Background(), []string{"a", "  "})
		if rag.ErrorCode(err) != rag.CodeEmbeddingFailed || b.fake.Stats().Requests != 0 {
			t.Fatalf("err %v, requests %d", err, b.fake.Stats().Requests)
		}
	})
	t.Run("Faults", func(t *testing.T) {
		t.Parallel()
		k.faults(t)
	})
}

func (k Kit) faults(t *testing.T) {
	t.Run("RateLimitedThenOK", func(t *testing.T) {
		t.Parallel()
		b := k.setup(t, Config{})
		b.fake.FailNext(1, fakeapi.Fault{Status: 429, RetryAfter: 2 * time.Second})
		if _, err := b.emb.EmbedDocuments(context.Background(), Texts(3)); err != nil {
			t.Fatal(err)
		}
		if got := b.fake.Calls(fakeapi.EndpointEmbed); got != 2 {
			t.Fatalf("%d calls, want 2", got)
		}
		if w := b.waits.All(); len(w) != 1 || w[0] < 2*time.Second {
			t.Fatalf("waits %v, want one of at least the 2s Retry-After", w)
		}
	})
	t.Run("ThreeServerErrors", func(t *testing.T) {
		t.Parallel()
		b := k.setup(t, Config{})
		b.fake.FailNext(3, fakeapi.Fault{Status: 500})
		_, err := b.emb.EmbedDocuments(context.Background(), Texts(2))
		if rag.ErrorCode(err) != rag.CodeEmbeddingFailed {
			t.Fatalf("err %v", err)
		}
		msg := rag.ErrorMessage(err)
		for _, want := range []string{k.Provider + " embedding failed", "HTTP 500", k.ServerError, "3 attempts"} {
			if !strings.Contains(msg, want) {
				t.Fatalf("message %q lacks %q", msg, want)
			}
		}
		if got := b.fake.Calls(fakeapi.EndpointEmbed); got != 3 {
			t.Fatalf("%d calls, want 3", got)
		}
		// Back-off grows: the second wait is drawn from a range above the first's.
		if w := b.waits.All(); len(w) != 2 || w[0] > provider.DefaultBaseDelay || w[1] < provider.DefaultBaseDelay {
			t.Fatalf("waits %v", w)
		}
	})
	t.Run("TwoServerErrorsThenOK", func(t *testing.T) {
		t.Parallel()
		b := k.setup(t, Config{})
		b.fake.FailNext(2, fakeapi.Fault{Status: 503})
		if _, err := b.emb.EmbedQuery(context.Background(), "q"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("RetryAfterTooLong", func(t *testing.T) {
		t.Parallel()
		b := k.setup(t, Config{})
		b.fake.FailNext(1, fakeapi.Fault{Status: 429, RetryAfter: 10 * time.Minute})
		_, err := b.emb.EmbedQuery(context.Background(), "q")
		if rag.ErrorCode(err) != rag.CodeEmbeddingFailed || !strings.Contains(rag.ErrorMessage(err), "HTTP 429") ||
			!strings.Contains(rag.ErrorMessage(err), "asked to retry after 10m0s") {
			t.Fatalf("err %v", err)
		}
		if b.fake.Calls(fakeapi.EndpointEmbed) != 1 || len(b.waits.All()) != 0 {
			t.Fatalf("retried although the provider asked for 10 minutes")
		}
	})
	t.Run("Timeout", func(t *testing.T) {
		t.Parallel()
		b := k.setup(t, Config{Timeout: 100 * time.Millisecond})
		b.fake.FailNext(1, fakeapi.Fault{Delay: 5 * time.Second})
		_, err := b.emb.EmbedQuery(context.Background(), "q")
		if rag.ErrorCode(err) != rag.CodeEmbeddingFailed || !strings.Contains(rag.ErrorMessage(err), "timed out") {
			t.Fatalf("err %v", err)
		}
		if got := b.fake.Calls(fakeapi.EndpointEmbed); got != 1 {
			t.Fatalf("%d calls: a timeout is not retried", got)
		}
	})
	t.Run("MalformedJSON", func(t *testing.T) {
		t.Parallel()
		b := k.setup(t, Config{})
		b.fake.FailNext(1, fakeapi.Fault{Malformed: true})
		_, err := b.emb.EmbedQuery(context.Background(), "q")
		if rag.ErrorCode(err) != rag.CodeEmbeddingFailed || !strings.Contains(rag.ErrorMessage(err), "unusable response") {
			t.Fatalf("err %v", err)
		}
		if b.fake.Calls(fakeapi.EndpointEmbed) != 1 {
			t.Fatal("malformed JSON must not be retried")
		}
	})
	t.Run("ConnectionCutThenOK", func(t *testing.T) {
		t.Parallel()
		b := k.setup(t, Config{})
		b.fake.FailNext(1, fakeapi.Fault{CutAfter: 1})
		if _, err := b.emb.EmbedDocuments(context.Background(), Texts(4)); err != nil {
			t.Fatal(err)
		}
		if got := b.fake.Calls(fakeapi.EndpointEmbed); got != 2 {
			t.Fatalf("%d calls, want 2", got)
		}
	})
	t.Run("Down", func(t *testing.T) {
		t.Parallel()
		b := k.setup(t, Config{})
		b.fake.SetDown(true)
		_, err := b.emb.EmbedDocuments(context.Background(), Texts(2))
		if rag.ErrorCode(err) != rag.CodeEmbeddingFailed || !strings.Contains(rag.ErrorMessage(err), "HTTP 503") {
			t.Fatalf("err %v", err)
		}
		b.fake.SetDown(false)
		if _, err := b.emb.EmbedDocuments(context.Background(), Texts(2)); err != nil {
			t.Fatalf("after coming back: %v", err)
		}
	})
	t.Run("KeyNeverInError", func(t *testing.T) {
		t.Parallel()
		b := k.setup(t, Config{})
		b.fake.FailNext(1, fakeapi.Fault{Status: 401, Message: "API key " + k.Key + " not valid"})
		_, err := b.emb.EmbedQuery(context.Background(), "q")
		if err == nil {
			t.Fatal("no error")
		}
		for _, s := range []string{err.Error(), rag.ErrorMessage(err), fmt.Sprintf("%+v", err)} {
			if strings.Contains(s, k.Key) {
				t.Fatalf("key leaked: %s", s)
			}
		}
		if !strings.Contains(rag.ErrorMessage(err), "[redacted]") {
			t.Fatalf("message %q", rag.ErrorMessage(err))
		}
	})
	t.Run("WrongKey", func(t *testing.T) {
		t.Parallel()
		const wrong = "wrong-key-0000000000"
		b := k.setup(t, Config{APIKey: wrong})
		_, err := b.emb.EmbedQuery(context.Background(), "q")
		if rag.ErrorCode(err) != rag.CodeEmbeddingFailed || !strings.Contains(rag.ErrorMessage(err), k.WrongKey) {
			t.Fatalf("err %v", err)
		}
		if strings.Contains(err.Error(), wrong) {
			t.Fatal("key leaked")
		}
		if b.fake.Calls(fakeapi.EndpointEmbed) != 1 {
			t.Fatal("a rejected key must not be retried")
		}
	})
	t.Run("Unreachable", func(t *testing.T) {
		t.Parallel()
		fake := k.NewFake(k.Key)
		url := fake.BaseURL()
		fake.Close()
		waits := &fakeapi.Waits{}
		e, err := k.New(Config{APIKey: k.Key, BaseURL: url, Timeout: 5 * time.Second, Retry: provider.Retry{Sleep: waits.Sleep}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.EmbedQuery(context.Background(), "q")
		if rag.ErrorCode(err) != rag.CodeEmbeddingFailed || !strings.Contains(rag.ErrorMessage(err), "connection error") {
			t.Fatalf("err %v", err)
		}
		if w := waits.All(); len(w) != 2 {
			t.Fatalf("waits %v: a refused connection is retried", w)
		}
	})
}

func unitLength(t *testing.T, v []float32) {
	t.Helper()
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if math.Abs(s-1) > 1e-4 {
		t.Fatalf("|v|² = %f, want 1", s)
	}
}
