package embed_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/embed"
	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/openai"
	"github.com/ragd/ragd/internal/provider"
	"github.com/ragd/ragd/internal/rag"
)

func TestNormalize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   []float32
		ok   bool
	}{
		{"OK", []float32{3, 4}, true},
		{"Zero", []float32{0, 0}, false},
		{"Empty", nil, false},
		{"NaN", []float32{1, float32(math.NaN())}, false},
		{"Inf", []float32{1, float32(math.Inf(1))}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, ok := embed.Normalize(tc.in)
			if ok != tc.ok {
				t.Fatalf("ok %v", ok)
			}
			if ok && (math.Abs(float64(v[0])-0.6) > 1e-6 || math.Abs(float64(v[1])-0.8) > 1e-6) {
				t.Fatalf("got %v", v)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	sp := rag.Space{Provider: "p", Model: "m", Dim: 2}
	if err := embed.Check(sp, 1, [][]float32{{1, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := embed.Check(sp, 2, [][]float32{{1, 1}}); err == nil {
		t.Fatal("count mismatch accepted")
	}
	if err := embed.Check(sp, 1, [][]float32{{1, 1, 1}}); err == nil {
		t.Fatal("dimension mismatch accepted")
	}
	if err := embed.Check(sp, 1, [][]float32{{0, 0}}); err == nil {
		t.Fatal("zero vector accepted")
	}
}

func TestBatches(t *testing.T) {
	t.Parallel()
	texts := make([]string, 10)
	for i := range texts {
		texts[i] = fmt.Sprint(i)
	}
	one := func(_ context.Context, batch []string) ([][]float32, error) {
		out := make([][]float32, len(batch))
		for i, s := range batch {
			var n float32
			fmt.Sscan(s, &n)
			out[i] = []float32{n}
		}
		return out, nil
	}
	t.Run("OrderAndSizes", func(t *testing.T) {
		var mu sync.Mutex
		var sizes []int
		got, err := embed.Batches(context.Background(), texts, 4, 3, func(ctx context.Context, b []string) ([][]float32, error) {
			mu.Lock()
			sizes = append(sizes, len(b))
			mu.Unlock()
			return one(ctx, b)
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			if v[0] != float32(i) {
				t.Fatalf("position %d holds %v", i, v)
			}
		}
		total := 0
		for _, s := range sizes {
			if s > 4 {
				t.Fatalf("batch of %d", s)
			}
			total += s
		}
		if len(sizes) != 3 || total != 10 {
			t.Fatalf("sizes %v", sizes)
		}
	})
	t.Run("Parallelism", func(t *testing.T) {
		var now, peak atomic.Int32
		_, err := embed.Batches(context.Background(), texts, 1, 2, func(ctx context.Context, b []string) ([][]float32, error) {
			n := now.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			time.Sleep(5 * time.Millisecond)
			now.Add(-1)
			return one(ctx, b)
		})
		if err != nil {
			t.Fatal(err)
		}
		if p := peak.Load(); p > 2 {
			t.Fatalf("%d batches at once, limit 2", p)
		}
	})
	t.Run("FirstErrorStops", func(t *testing.T) {
		boom := errors.New("boom")
		var calls atomic.Int32
		_, err := embed.Batches(context.Background(), texts, 1, 1, func(ctx context.Context, b []string) ([][]float32, error) {
			calls.Add(1)
			return nil, boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("err %v", err)
		}
		if c := calls.Load(); c != 1 {
			t.Fatalf("%d batches ran after the first error", c)
		}
	})
	t.Run("WrongCount", func(t *testing.T) {
		_, err := embed.Batches(context.Background(), texts, 5, 1, func(ctx context.Context, b []string) ([][]float32, error) {
			return [][]float32{{1}}, nil
		})
		if err == nil {
			t.Fatal("short batch accepted")
		}
	})
}

// memCache is a Cache in memory with the semantics of rag.Store's two cache methods.
type memCache struct {
	mu   sync.Mutex
	m    map[string][]float32
	fail bool
}

func (c *memCache) CachedEmbeddings(_ context.Context, sp rag.Space, keys []string) (map[string][]float32, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail {
		return nil, errors.New("database is locked")
	}
	out := map[string][]float32{}
	for _, k := range keys {
		if v, ok := c.m[sp.ID()+"|"+k]; ok {
			out[k] = v
		}
	}
	return out, nil
}

func (c *memCache) CacheEmbeddings(_ context.Context, sp rag.Space, vecs map[string][]float32) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail {
		return errors.New("database is locked")
	}
	for k, v := range vecs {
		c.m[sp.ID()+"|"+k] = append([]float32(nil), v...)
	}
	return nil
}

func setupCache(t *testing.T, logger *slog.Logger) (*fakeapi.OpenAI, *memCache, rag.Embedder) {
	t.Helper()
	fake := fakeapi.NewOpenAI("sk-cache-test-key-0000")
	t.Cleanup(fake.Close)
	inner, err := openai.NewEmbedder(openai.EmbedderConfig{Config: provider.Config{APIKey: fake.Key(), BaseURL: fake.BaseURL()}, Dim: 64})
	if err != nil {
		t.Fatal(err)
	}
	c := &memCache{m: map[string][]float32{}}
	return fake, c, embed.WithCache(inner, c, logger)
}

func TestWithCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("ReingestDoesNotCallAgain", func(t *testing.T) {
		t.Parallel()
		fake, _, e := setupCache(t, nil)
		docs := []string{"alpha runway", "beta wing", "alpha runway", "gamma flap"}
		first, err := e.EmbedDocuments(ctx, docs)
		if err != nil {
			t.Fatal(err)
		}
		if fake.TimesEmbedded("alpha runway") != 1 || fake.Stats().EmbeddedTexts != 3 {
			t.Fatalf("duplicate text embedded: %+v", fake.Stats())
		}
		second, err := e.EmbedDocuments(ctx, append(docs, "delta slat"))
		if err != nil {
			t.Fatal(err)
		}
		if st := fake.Stats(); st.EmbeddedTexts != 4 || st.EmbedCalls != 2 {
			t.Fatalf("re-ingest called the API again: %+v", st)
		}
		for i := range docs {
			if len(first[i]) != 64 || first[i][3] != second[i][3] {
				t.Fatalf("cached vector %d differs", i)
			}
		}
		// Callers get their own slices.
		first[0][0] = 42
		if first[2][0] == 42 {
			t.Fatal("duplicate texts share a slice")
		}
	})
	t.Run("QueryKeyedApart", func(t *testing.T) {
		t.Parallel()
		fake, _, e := setupCache(t, nil)
		if _, err := e.EmbedDocuments(ctx, []string{"how long is the runway"}); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if _, err := e.EmbedQuery(ctx, "how long is the runway"); err != nil {
				t.Fatal(err)
			}
		}
		// One document call and one query call: a query is not served from a document's vector.
		if got := fake.TimesEmbedded("how long is the runway"); got != 2 {
			t.Fatalf("embedded %d times, want 2", got)
		}
	})
	t.Run("FailingCacheIsBypassed", func(t *testing.T) {
		t.Parallel()
		// The failures are logged on the logger given (the app's), not slog.Default().
		var logged bytes.Buffer
		fake, c, e := setupCache(t, slog.New(slog.NewTextHandler(&logged, nil)))
		c.fail = true
		v, err := e.EmbedQuery(ctx, "question")
		if err != nil || len(v) != 64 {
			t.Fatalf("err %v", err)
		}
		if fake.TimesEmbedded("question") != 1 {
			t.Fatal("not embedded")
		}
		for _, want := range []string{"level=WARN msg=\"embedding cache read failed\"", "level=WARN msg=\"embedding cache write failed\""} {
			if !strings.Contains(logged.String(), want) {
				t.Errorf("log lacks %s:\n%s", want, logged.String())
			}
		}
	})
	t.Run("ProviderErrorPassesThrough", func(t *testing.T) {
		t.Parallel()
		fake, c, e := setupCache(t, nil)
		fake.SetDown(true)
		_, err := e.EmbedDocuments(ctx, []string{"x"})
		if rag.ErrorCode(err) != rag.CodeEmbeddingFailed {
			t.Fatalf("err %v", err)
		}
		if len(c.m) != 0 {
			t.Fatal("something was cached")
		}
	})
	t.Run("PartialFailureKeepsEarlierRequests", func(t *testing.T) {
		t.Parallel()
		fake := fakeapi.NewOpenAI("sk-cache-test-key-0000")
		t.Cleanup(fake.Close)
		// Two texts per request, one request at a time, no retries: the third request meets the outage.
		inner, err := openai.NewEmbedder(openai.EmbedderConfig{Config: provider.Config{APIKey: fake.Key(), BaseURL: fake.BaseURL(),
			MaxConcurrency: 1, Retry: provider.Retry{MaxAttempts: 1}}, Dim: 64, BatchSize: 2})
		if err != nil {
			t.Fatal(err)
		}
		c := &memCache{m: map[string][]float32{}}
		e := embed.WithCache(inner, c, nil)
		texts := []string{"t0 alpha", "t1 beta", "t2 gamma", "t3 delta", "t4 epsilon", "t5 zeta"}
		fake.FailNext(2, fakeapi.Fault{})
		fake.FailNext(1, fakeapi.Fault{Status: 503})
		if _, err := e.EmbedDocuments(ctx, texts); rag.ErrorCode(err) != rag.CodeEmbeddingFailed {
			t.Fatalf("call during the outage: %v, want embedding_failed", err)
		}
		if got := len(c.m); got != 4 {
			t.Fatalf("%d vectors cached from the two requests that went through, want 4", got)
		}
		vecs, err := e.EmbedDocuments(ctx, texts)
		if err != nil || len(vecs) != len(texts) {
			t.Fatalf("retry: %d vectors, %v", len(vecs), err)
		}
		for _, text := range texts {
			if n := fake.TimesEmbedded(text); n != 1 {
				t.Errorf("%q embedded %d times, want 1", text, n)
			}
		}
		if st := fake.Stats(); st.EmbedCalls != 3 || st.Faulted != 1 {
			t.Errorf("%d answered embedding requests and %d refused, want 3 (two, then one for the rest) and 1", st.EmbedCalls, st.Faulted)
		}
	})
	t.Run("KeysDiffer", func(t *testing.T) {
		if embed.DocumentKey("x") == embed.QueryKey("x") || len(embed.DocumentKey("x")) != 64 {
			t.Fatal("keys")
		}
	})
}
