package gemini_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/embed/gemini"
	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/provider"
	"github.com/ragd/ragd/internal/rag"
)

const key = "AIzaFakeKey-0123456789abcdef"

type bundle struct {
	fake *fakeapi.Gemini
	emb  *gemini.Embedder
	mu   sync.Mutex
	// waits are the back-off waits the embedder asked for (nothing really sleeps).
	waits []time.Duration
}

func (b *bundle) sleep(ctx context.Context, d time.Duration) error {
	b.mu.Lock()
	b.waits = append(b.waits, d)
	b.mu.Unlock()
	return ctx.Err()
}

func setup(t *testing.T, cfg gemini.Config) *bundle {
	t.Helper()
	b := &bundle{fake: fakeapi.NewGemini(key)}
	t.Cleanup(b.fake.Close)
	cfg.APIKey = key
	cfg.BaseURL = b.fake.BaseURL()
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	cfg.Retry.Sleep = b.sleep
	e, err := gemini.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	b.emb = e
	return b
}

type batchBody struct {
	Requests []struct {
		Model                string `json:"model"`
		TaskType             string `json:"taskType"`
		OutputDimensionality int    `json:"outputDimensionality"`
		Content              struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"content"`
	} `json:"requests"`
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

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("passage number %d about runway lengths", i)
	}
	return out
}

func TestEmbedDocuments(t *testing.T) {
	t.Parallel()
	b := setup(t, gemini.Config{})
	in := []string{"The runway is 3 km long.", "활주로 길이는 3킬로미터이다.", "Boundary layers thicken downstream."}
	vecs, err := b.emb.EmbedDocuments(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.emb.Space(); got != (rag.Space{Provider: "gemini", Model: "gemini-embedding-001", Dim: 768}) {
		t.Fatalf("space %+v", got)
	}
	if len(vecs) != 3 {
		t.Fatalf("%d vectors", len(vecs))
	}
	for i, v := range vecs {
		if len(v) != 768 {
			t.Fatalf("dim %d", len(v))
		}
		unitLength(t, v)
		// The fake's reduced vectors are not unit length, like the API's; the adapter must normalise them.
		want := fakeapi.Vector(in[i], 768)
		for j := range v {
			if math.Abs(float64(v[j]-want[j])) > 1e-5 {
				t.Fatalf("vector %d differs at %d: %f vs %f", i, j, v[j], want[j])
			}
		}
	}
	req, ok := b.fake.LastRequest(fakeapi.EndpointEmbed)
	if !ok {
		t.Fatal("no request")
	}
	if req.Path != "/v1beta/models/gemini-embedding-001:batchEmbedContents" {
		t.Errorf("path %s", req.Path)
	}
	if req.Header.Get("x-goog-api-key") != key {
		t.Errorf("x-goog-api-key not sent")
	}
	var body batchBody
	if err := req.JSON(&body); err != nil {
		t.Fatal(err)
	}
	for i, r := range body.Requests {
		if r.TaskType != gemini.TaskDocument || r.OutputDimensionality != 768 || r.Model != "models/gemini-embedding-001" || r.Content.Parts[0].Text != in[i] {
			t.Errorf("request %d: %+v", i, r)
		}
	}
	if v := b.fake.Violations(); len(v) > 0 {
		t.Errorf("violations: %v", v)
	}
}

func TestEmbedQuery(t *testing.T) {
	t.Parallel()
	b := setup(t, gemini.Config{Model: "models/text-embedding-004"})
	v, err := b.emb.EmbedQuery(context.Background(), "how long is the runway?")
	if err != nil {
		t.Fatal(err)
	}
	unitLength(t, v)
	if b.emb.Space().Model != "text-embedding-004" || len(v) != 768 {
		t.Fatalf("space %v, dim %d", b.emb.Space(), len(v))
	}
	req, _ := b.fake.LastRequest(fakeapi.EndpointEmbed)
	var body batchBody
	_ = req.JSON(&body)
	if len(body.Requests) != 1 || body.Requests[0].TaskType != gemini.TaskQuery {
		t.Fatalf("body %+v", body)
	}
}

// TestBatches checks the 100-texts limit at its boundary.
func TestBatches(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ n, requests int }{{1, 1}, {100, 1}, {101, 2}, {250, 3}} {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			t.Parallel()
			b := setup(t, gemini.Config{})
			in := texts(tc.n)
			vecs, err := b.emb.EmbedDocuments(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if len(vecs) != tc.n {
				t.Fatalf("%d vectors", len(vecs))
			}
			// Order is kept across batches that ran concurrently.
			for _, i := range []int{0, tc.n - 1} {
				want := fakeapi.Vector(in[i], 768)
				if vecs[i][0] != want[0] || vecs[i][767] != want[767] {
					t.Fatalf("vector %d out of order", i)
				}
			}
			if got := b.fake.Calls(fakeapi.EndpointEmbed); got != tc.requests {
				t.Fatalf("%d requests, want %d", got, tc.requests)
			}
			if st := b.fake.Stats(); st.EmbeddedTexts != tc.n {
				t.Fatalf("fake embedded %d texts", st.EmbeddedTexts)
			}
		})
	}
}

func TestConcurrencyLimit(t *testing.T) {
	t.Parallel()
	b := setup(t, gemini.Config{BatchSize: 1, MaxConcurrency: 2})
	for range 6 {
		b.fake.FailNext(1, fakeapi.Fault{Delay: 50 * time.Millisecond})
	}
	if _, err := b.emb.EmbedDocuments(context.Background(), texts(6)); err != nil {
		t.Fatal(err)
	}
	if got := b.fake.MaxInFlight(); got > 2 || got < 1 {
		t.Fatalf("max in flight %d, limit 2", got)
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	t.Run("RateLimitedThenOK", func(t *testing.T) {
		t.Parallel()
		b := setup(t, gemini.Config{})
		b.fake.FailNext(1, fakeapi.Fault{Status: 429, RetryAfter: 2 * time.Second})
		if _, err := b.emb.EmbedDocuments(context.Background(), texts(3)); err != nil {
			t.Fatal(err)
		}
		if got := b.fake.Calls(fakeapi.EndpointEmbed); got != 2 {
			t.Fatalf("%d calls, want 2", got)
		}
		if len(b.waits) != 1 || b.waits[0] < 2*time.Second {
			t.Fatalf("waits %v, want one of at least the 2s Retry-After", b.waits)
		}
	})
	t.Run("ThreeServerErrors", func(t *testing.T) {
		t.Parallel()
		b := setup(t, gemini.Config{})
		b.fake.FailNext(3, fakeapi.Fault{Status: 500})
		_, err := b.emb.EmbedDocuments(context.Background(), texts(2))
		if rag.ErrorCode(err) != rag.CodeEmbeddingFailed {
			t.Fatalf("err %v", err)
		}
		msg := rag.ErrorMessage(err)
		if !strings.Contains(msg, "HTTP 500") || !strings.Contains(msg, "An internal error has occurred") || !strings.Contains(msg, "3 attempts") {
			t.Fatalf("message %q", msg)
		}
		if got := b.fake.Calls(fakeapi.EndpointEmbed); got != 3 {
			t.Fatalf("%d calls, want 3", got)
		}
		// Back-off grows: the second wait is drawn from a range above the first's.
		if len(b.waits) != 2 || b.waits[0] > provider.DefaultBaseDelay || b.waits[1] < provider.DefaultBaseDelay {
			t.Fatalf("waits %v", b.waits)
		}
	})
	t.Run("TwoServerErrorsThenOK", func(t *testing.T) {
		t.Parallel()
		b := setup(t, gemini.Config{})
		b.fake.FailNext(2, fakeapi.Fault{Status: 503})
		if _, err := b.emb.EmbedQuery(context.Background(), "q"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("RetryAfterTooLong", func(t *testing.T) {
		t.Parallel()
		b := setup(t, gemini.Config{})
		b.fake.FailNext(1, fakeapi.Fault{Status: 429, RetryAfter: 10 * time.Minute})
		_, err := b.emb.EmbedQuery(context.Background(), "q")
		if rag.ErrorCode(err) != rag.CodeEmbeddingFailed || !strings.Contains(rag.ErrorMessage(err), "RESOURCE_EXHAUSTED") {
			t.Fatalf("err %v", err)
		}
		if b.fake.Calls(fakeapi.EndpointEmbed) != 1 || len(b.waits) != 0 {
			t.Fatalf("retried although the provider asked for 10 minutes")
		}
	})
	t.Run("Timeout", func(t *testing.T) {
		t.Parallel()
		b := setup(t, gemini.Config{Timeout: 100 * time.Millisecond})
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
		b := setup(t, gemini.Config{})
		b.fake.FailNext(1, fakeapi.Fault{Malformed: true})
		_, err := b.emb.EmbedQuery(context.Background(), "q")
		if rag.ErrorCode(err) != rag.CodeEmbeddingFailed || !strings.Contains(rag.ErrorMessage(err), "unusable response") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("ConnectionCutThenOK", func(t *testing.T) {
		t.Parallel()
		b := setup(t, gemini.Config{})
		b.fake.FailNext(1, fakeapi.Fault{CutAfter: 1})
		if _, err := b.emb.EmbedDocuments(context.Background(), texts(4)); err != nil {
			t.Fatal(err)
		}
		if got := b.fake.Calls(fakeapi.EndpointEmbed); got != 2 {
			t.Fatalf("%d calls, want 2", got)
		}
	})
	t.Run("Down", func(t *testing.T) {
		t.Parallel()
		b := setup(t, gemini.Config{})
		b.fake.SetDown(true)
		_, err := b.emb.EmbedDocuments(context.Background(), texts(2))
		if rag.ErrorCode(err) != rag.CodeEmbeddingFailed || !strings.Contains(rag.ErrorMessage(err), "HTTP 503") {
			t.Fatalf("err %v", err)
		}
		b.fake.SetDown(false)
		if _, err := b.emb.EmbedDocuments(context.Background(), texts(2)); err != nil {
			t.Fatalf("after coming back: %v", err)
		}
	})
	t.Run("KeyNeverInError", func(t *testing.T) {
		t.Parallel()
		b := setup(t, gemini.Config{})
		b.fake.FailNext(1, fakeapi.Fault{Status: 400, Message: "API key " + key + " not valid"})
		_, err := b.emb.EmbedQuery(context.Background(), "q")
		if err == nil {
			t.Fatal("no error")
		}
		for _, s := range []string{err.Error(), rag.ErrorMessage(err), fmt.Sprintf("%+v", err)} {
			if strings.Contains(s, key) {
				t.Fatalf("key leaked: %s", s)
			}
		}
		if !strings.Contains(rag.ErrorMessage(err), "[redacted]") {
			t.Fatalf("message %q", rag.ErrorMessage(err))
		}
	})
	t.Run("WrongKey", func(t *testing.T) {
		t.Parallel()
		fake := fakeapi.NewGemini(key)
		t.Cleanup(fake.Close)
		e, err := gemini.New(context.Background(), gemini.Config{APIKey: "wrong-key-xyz", BaseURL: fake.BaseURL()})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.EmbedQuery(context.Background(), "q")
		if rag.ErrorCode(err) != rag.CodeEmbeddingFailed || !strings.Contains(rag.ErrorMessage(err), "API key not valid") {
			t.Fatalf("err %v", err)
		}
		if fake.Calls(fakeapi.EndpointEmbed) != 1 {
			t.Fatal("a 400 must not be retried")
		}
	})
}

func TestOutputDimensionalityTooLarge(t *testing.T) {
	t.Parallel()
	b := setup(t, gemini.Config{Model: "text-embedding-004", Dim: 1024})
	_, err := b.emb.EmbedQuery(context.Background(), "q")
	if rag.ErrorCode(err) != rag.CodeEmbeddingFailed || !strings.Contains(rag.ErrorMessage(err), "output_dimensionality") {
		t.Fatalf("err %v", err)
	}
}

func TestEmptyText(t *testing.T) {
	t.Parallel()
	b := setup(t, gemini.Config{})
	_, err := b.emb.EmbedDocuments(context.Background(), []string{"a", "  "})
	if rag.ErrorCode(err) != rag.CodeEmbeddingFailed || b.fake.Stats().Requests != 0 {
		t.Fatalf("err %v, requests %d", err, b.fake.Stats().Requests)
	}
}

func TestNewRequiresKey(t *testing.T) {
	t.Parallel()
	if _, err := gemini.New(context.Background(), gemini.Config{}); err == nil {
		t.Fatal("no error without a key")
	}
}
