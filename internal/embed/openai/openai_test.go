package openai_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/embed/openai"
	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/provider"
	"github.com/ragd/ragd/internal/rag"
)

const key = "sk-proj-FakeKey0123456789abcdef"

type bundle struct {
	fake  *fakeapi.OpenAI
	emb   *openai.Embedder
	mu    sync.Mutex
	waits []time.Duration
}

func (b *bundle) sleep(ctx context.Context, d time.Duration) error {
	b.mu.Lock()
	b.waits = append(b.waits, d)
	b.mu.Unlock()
	return ctx.Err()
}

func setup(t *testing.T, cfg openai.Config) *bundle {
	t.Helper()
	b := &bundle{fake: fakeapi.NewOpenAI(key)}
	t.Cleanup(b.fake.Close)
	if cfg.APIKey == "" {
		cfg.APIKey = key
	}
	cfg.BaseURL = b.fake.BaseURL()
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	cfg.Retry.Sleep = b.sleep
	e, err := openai.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b.emb = e
	return b
}

type embBody struct {
	Input          []string `json:"input"`
	Model          string   `json:"model"`
	Dimensions     *int     `json:"dimensions"`
	EncodingFormat string   `json:"encoding_format"`
}

func lastBody(t *testing.T, f *fakeapi.OpenAI) (fakeapi.Request, embBody) {
	t.Helper()
	req, ok := f.LastRequest(fakeapi.EndpointEmbed)
	if !ok {
		t.Fatal("no embeddings request")
	}
	var b embBody
	if err := req.JSON(&b); err != nil {
		t.Fatal(err)
	}
	return req, b
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("passage %d on pressure distributions", i)
	}
	return out
}

func TestEmbedDocuments(t *testing.T) {
	t.Parallel()
	b := setup(t, openai.Config{Dim: 256})
	in := []string{"The runway is 3 km long.", "활주로 길이는 3킬로미터이다."}
	vecs, err := b.emb.EmbedDocuments(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if sp := b.emb.Space(); sp != (rag.Space{Provider: "openai", Model: "text-embedding-3-small", Dim: 256}) {
		t.Fatalf("space %v", sp)
	}
	for i, v := range vecs {
		want := fakeapi.Vector(in[i], 256)
		if len(v) != 256 {
			t.Fatalf("dim %d", len(v))
		}
		for j := range v {
			if math.Abs(float64(v[j]-want[j])) > 1e-6 {
				t.Fatalf("vector %d differs at %d", i, j)
			}
		}
	}
	req, body := lastBody(t, b.fake)
	if req.Path != "/v1/embeddings" || req.Header.Get("Authorization") != "Bearer "+key {
		t.Errorf("path %s, auth %q", req.Path, req.Header.Get("Authorization"))
	}
	if body.Model != "text-embedding-3-small" || body.Dimensions == nil || *body.Dimensions != 256 || body.EncodingFormat != "float" || len(body.Input) != 2 {
		t.Errorf("body %+v", body)
	}
	if v := b.fake.Violations(); len(v) > 0 {
		t.Errorf("violations: %v", v)
	}
}

func TestEmbedQuery(t *testing.T) {
	t.Parallel()
	b := setup(t, openai.Config{})
	v, err := b.emb.EmbedQuery(context.Background(), "how long is the runway?")
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != 1536 || b.emb.Space().Dim != 1536 {
		t.Fatalf("dim %d, space %v", len(v), b.emb.Space())
	}
}

// TestLocalServerModel is Ollama's nomic-embed-text: fixed size, no "dimensions" sent, size from KnownDims.
func TestLocalServerModel(t *testing.T) {
	t.Parallel()
	b := setup(t, openai.Config{Model: "nomic-embed-text:latest", APIKey: key})
	if b.emb.Space().Dim != 768 {
		t.Fatalf("space %v", b.emb.Space())
	}
	// The fake knows the model without its Ollama tag, as a vLLM/TEI deployment would name it.
	e2, err := openai.New(openai.Config{APIKey: key, BaseURL: b.fake.BaseURL(), Model: "nomic-embed-text"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e2.EmbedQuery(context.Background(), "q"); err != nil {
		t.Fatal(err)
	}
	_, body := lastBody(t, b.fake)
	if body.Dimensions != nil {
		t.Fatalf("dimensions sent to a fixed-size model: %d", *body.Dimensions)
	}
}

// TestModelIgnoresDimension: a server that returns its own size instead of the configured one must fail,
// so that a vector of the wrong size never reaches a store.
func TestModelIgnoresDimension(t *testing.T) {
	t.Parallel()
	b := setup(t, openai.Config{Model: "mxbai-embed-large", Dim: 768})
	_, err := b.emb.EmbedDocuments(context.Background(), texts(3))
	if rag.ErrorCode(err) != rag.CodeEmbeddingFailed {
		t.Fatalf("err %v", err)
	}
	if msg := rag.ErrorMessage(err); !strings.Contains(msg, "1024-dimensional") || !strings.Contains(msg, "768") {
		t.Fatalf("message %q", msg)
	}
	if b.fake.Calls(fakeapi.EndpointEmbed) != 1 {
		t.Fatal("a wrong dimension must not be retried")
	}
}

func TestUnknownModelNeedsDim(t *testing.T) {
	t.Parallel()
	if _, err := openai.New(openai.Config{BaseURL: "http://127.0.0.1:1/v1", Model: "my-model"}); err == nil {
		t.Fatal("no error for a model of unknown size")
	}
	if _, err := openai.New(openai.Config{Model: "text-embedding-3-small"}); err == nil {
		t.Fatal("no error without a key for api.openai.com")
	}
}

// TestBatches checks the batch size at its boundary; a local server gets batches of 32 by default.
func TestBatches(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ size, n, requests int }{{0, 32, 1}, {0, 33, 2}, {100, 100, 1}, {100, 101, 2}} {
		t.Run(fmt.Sprintf("%d/%d", tc.size, tc.n), func(t *testing.T) {
			t.Parallel()
			b := setup(t, openai.Config{BatchSize: tc.size})
			in := texts(tc.n)
			vecs, err := b.emb.EmbedDocuments(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if got := b.fake.Calls(fakeapi.EndpointEmbed); got != tc.requests {
				t.Fatalf("%d requests, want %d", got, tc.requests)
			}
			last := fakeapi.Vector(in[tc.n-1], 1536)
			if vecs[tc.n-1][5] != last[5] {
				t.Fatal("order lost")
			}
		})
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	t.Run("RateLimitedThenOK", func(t *testing.T) {
		t.Parallel()
		b := setup(t, openai.Config{})
		b.fake.FailNext(1, fakeapi.Fault{Status: 429, RetryAfter: 3 * time.Second})
		if _, err := b.emb.EmbedDocuments(context.Background(), texts(2)); err != nil {
			t.Fatal(err)
		}
		if len(b.waits) != 1 || b.waits[0] < 3*time.Second {
			t.Fatalf("waits %v", b.waits)
		}
		if b.fake.Calls(fakeapi.EndpointEmbed) != 2 {
			t.Fatal("want 2 calls")
		}
	})
	t.Run("ThreeServerErrors", func(t *testing.T) {
		t.Parallel()
		b := setup(t, openai.Config{})
		b.fake.FailNext(3, fakeapi.Fault{Status: 500})
		_, err := b.emb.EmbedQuery(context.Background(), "q")
		if rag.ErrorCode(err) != rag.CodeEmbeddingFailed || !strings.Contains(rag.ErrorMessage(err), "server_error") {
			t.Fatalf("err %v", err)
		}
		if b.fake.Calls(fakeapi.EndpointEmbed) != 3 {
			t.Fatalf("%d calls", b.fake.Calls(fakeapi.EndpointEmbed))
		}
	})
	t.Run("Timeout", func(t *testing.T) {
		t.Parallel()
		b := setup(t, openai.Config{Timeout: 100 * time.Millisecond})
		b.fake.FailNext(1, fakeapi.Fault{Delay: 5 * time.Second})
		_, err := b.emb.EmbedQuery(context.Background(), "q")
		if rag.ErrorCode(err) != rag.CodeEmbeddingFailed || !strings.Contains(rag.ErrorMessage(err), "timed out") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("MalformedJSON", func(t *testing.T) {
		t.Parallel()
		b := setup(t, openai.Config{})
		b.fake.FailNext(1, fakeapi.Fault{Malformed: true})
		_, err := b.emb.EmbedQuery(context.Background(), "q")
		if rag.ErrorCode(err) != rag.CodeEmbeddingFailed || !strings.Contains(rag.ErrorMessage(err), "unusable response") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("ConnectionCutThenOK", func(t *testing.T) {
		t.Parallel()
		b := setup(t, openai.Config{})
		b.fake.FailNext(1, fakeapi.Fault{CutAfter: 1})
		if _, err := b.emb.EmbedQuery(context.Background(), "q"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("KeyNeverInError", func(t *testing.T) {
		t.Parallel()
		b := setup(t, openai.Config{})
		b.fake.FailNext(1, fakeapi.Fault{Status: 401, Message: "Incorrect API key provided: " + key})
		_, err := b.emb.EmbedQuery(context.Background(), "q")
		if err == nil || strings.Contains(err.Error(), key) || strings.Contains(rag.ErrorMessage(err), key) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("WrongKey", func(t *testing.T) {
		t.Parallel()
		b := setup(t, openai.Config{APIKey: "sk-wrong-0000000000"})
		_, err := b.emb.EmbedQuery(context.Background(), "q")
		if rag.ErrorCode(err) != rag.CodeEmbeddingFailed || !strings.Contains(rag.ErrorMessage(err), "HTTP 401") {
			t.Fatalf("err %v", err)
		}
		if strings.Contains(err.Error(), "sk-wrong-0000000000") {
			t.Fatal("key leaked")
		}
	})
	t.Run("Unreachable", func(t *testing.T) {
		t.Parallel()
		fake := fakeapi.NewOpenAI(key)
		url := fake.BaseURL()
		fake.Close()
		b := &bundle{}
		e, err := openai.New(openai.Config{APIKey: key, BaseURL: url, Retry: provider.Retry{Sleep: b.sleep}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.EmbedQuery(context.Background(), "q")
		if rag.ErrorCode(err) != rag.CodeEmbeddingFailed || !strings.Contains(rag.ErrorMessage(err), "connection error") {
			t.Fatalf("err %v", err)
		}
		if len(b.waits) != 2 {
			t.Fatalf("waits %v: a refused connection is retried", b.waits)
		}
	})
}
