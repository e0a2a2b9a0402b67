package reembed_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/embed"
	"github.com/ragd/ragd/internal/embed/hash"
	"github.com/ragd/ragd/internal/extract"
	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/openai"
	"github.com/ragd/ragd/internal/provider"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/reembed"
	"github.com/ragd/ragd/internal/store/postgres"
	"github.com/ragd/ragd/internal/store/sqlite"
)

const key = "sk-proj-ReembedTestKey0123456789"

var fixtures = []string{
	"md/ko_react_render-and-commit.md",
	"md/ko_react_queueing-a-series-of-state-updates.md",
	"md/ko_react_importing-and-exporting-components.md",
	"html/en_wikipedia_mozilla.html",
}

type bundle struct {
	store rag.Store
	ex    *extract.Extractor
	fake  *fakeapi.OpenAI
	hash  rag.Embedder
}

// setup opens a temporary SQLite store populated, with the offline hash embedder, from the fixtures.
func setup(t testing.TB, files ...string) *bundle {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ragd.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return populate(t, st, files...)
}

// setupPostgres is setup on PostgreSQL (RAGD_TEST_DATABASE_URL, a schema of the test's own).
func setupPostgres(t testing.TB, files ...string) *bundle {
	t.Helper()
	base := os.Getenv("RAGD_TEST_DATABASE_URL")
	if base == "" {
		t.Skip("RAGD_TEST_DATABASE_URL is not set: start PGlite with `scripts/pglite.sh start` and export the URL it prints")
	}
	ctx := context.Background()
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	schema := "reembed_" + hex.EncodeToString(b)
	st, err := postgres.Open(ctx, base, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := st.Pool().Exec(context.Background(), "DROP SCHEMA IF EXISTS "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
		st.Close()
	})
	return populate(t, st, files...)
}

func populate(t testing.TB, st rag.Store, files ...string) *bundle {
	t.Helper()
	ex, err := extract.New(extract.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close() })
	fake := fakeapi.NewOpenAI(key)
	t.Cleanup(fake.Close)
	b := &bundle{store: st, ex: ex, fake: fake, hash: hash.New(hash.DefaultDim)}
	for _, f := range files {
		b.ingest(t, b.hash, f)
	}
	return b
}

func fixture(t testing.TB, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "fixtures", rel))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// ingest indexes a fixture with emb.
func (b *bundle) ingest(t testing.TB, emb rag.Embedder, rel string) *rag.Document {
	t.Helper()
	p := ingest.New(b.store, b.ex, emb, ingest.Options{})
	doc, _, err := p.Ingest(context.Background(), rag.LocalPrincipal, ingest.Request{Name: filepath.Base(rel), Data: fixture(t, rel)})
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// openai returns the OpenAI embedder on the fake behind the store's embedding cache, without waits
// between retries.
func (b *bundle) openai(t testing.TB, model string, dim int) rag.Embedder {
	t.Helper()
	e, err := openai.NewEmbedder(openai.EmbedderConfig{Config: provider.Config{APIKey: key, BaseURL: b.fake.BaseURL(), Model: model,
		Retry: provider.Retry{Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }}}, Dim: dim})
	if err != nil {
		t.Fatal(err)
	}
	return embed.WithCache(e, b.store, nil)
}

// hashOnly builds the hash embedder's spaces and nothing else, as ragd does without hosted keys.
func hashOnly(_ context.Context, sp rag.Space) (rag.Embedder, error) {
	if sp.Provider != "hash" {
		return nil, errors.New(sp.Provider + " is not configured")
	}
	return hash.New(sp.Dim), nil
}

func (b *bundle) service(t testing.TB, configured rag.Embedder, old reembed.EmbedderFunc, batch int) *reembed.Service {
	t.Helper()
	s, err := reembed.New(context.Background(), b.store, configured, old, reembed.Options{Batch: batch})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func status(t *testing.T, s *reembed.Service) *reembed.Status {
	t.Helper()
	st, err := s.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// chunks returns every current chunk with its document's title.
func (b *bundle) chunks(t *testing.T) []rag.Hit {
	t.Helper()
	ctx := context.Background()
	page, err := b.store.ListDocuments(ctx, rag.LocalPrincipal, rag.DocumentQuery{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, d := range page.Documents {
		cs, err := b.store.ListChunks(ctx, rag.LocalPrincipal, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			ids = append(ids, c.ID)
		}
	}
	hits, err := b.store.Hits(ctx, rag.LocalPrincipal, ids)
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// checkFromSpace verifies that res came from a vector search in space: it has vector hits and, when vec is
// given, their vector scores are the cosine of the query's and the chunk's vectors made by the embedder of
// that space, vec. (Retrieval may refine the hash space's query vector with pseudo-relevance feedback,
// which changes its scores: those are not recomputed.)
func checkFromSpace(t *testing.T, res *rag.SearchResult, space rag.Space, query string, vec func(text string, query bool) []float32) {
	t.Helper()
	if res.Space != space.ID() {
		t.Fatalf("searched space %q, want %s", res.Space, space.ID())
	}
	checked := 0
	for _, h := range res.Hits {
		if h.VectorRank == 0 {
			continue
		}
		checked++
		if vec == nil {
			continue
		}
		want := dot(vec(query, true), vec(ingest.EmbeddingText(h.Title, h.Chunk), false))
		if math.Abs(want-h.VectorScore) > 1e-4 {
			t.Fatalf("chunk %d: vector score %.5f, but in %s its cosine is %.5f", h.ID, h.VectorScore, space.ID(), want)
		}
	}
	if checked == 0 {
		t.Fatalf("no vector hit in %+v", res)
	}
}

func fakeVec(dim int) func(string, bool) []float32 {
	return func(text string, _ bool) []float32 { return fakeapi.Vector(text, dim) }
}
