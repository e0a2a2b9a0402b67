package embed

import (
	"context"
	"log/slog"
	"maps"
	"sync"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/telemetry"
)

// Cache stores vectors by (space, text key). rag.Store implements it, so a store can be passed.
type Cache interface {
	// CachedEmbeddings returns the cached vectors of space for the given keys (missing ones absent).
	CachedEmbeddings(ctx context.Context, space rag.Space, textHashes []string) (map[string][]float32, error)
	// CacheEmbeddings stores vectors of space by key (idempotent).
	CacheEmbeddings(ctx context.Context, space rag.Space, vectors map[string][]float32) error
}

// Batcher is implemented by embedders that send texts to an API in requests of at most size texts, up to
// parallel requests at once. WithCache then asks them one request's worth at a time and caches every
// request's vectors as it returns.
type Batcher interface {
	Batching() (size, parallel int)
}

// WithCache returns an embedder that answers from cache what it has embedded before in inner's space and
// asks inner only for the rest, each distinct text once; new vectors are checked, normalised and cached.
// A cache that fails is logged (on logger; nil discards) and bypassed: the cache saves calls, it must not
// fail ingestion or a question.
func WithCache(inner rag.Embedder, cache Cache, logger *slog.Logger) rag.Embedder {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &cached{inner: inner, cache: cache, log: logger}
}

type cached struct {
	inner rag.Embedder
	cache Cache
	log   *slog.Logger
}

func (c *cached) Space() rag.Space { return c.inner.Space() }

func (c *cached) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	return c.embed(ctx, texts, DocumentKey, c.inner.EmbedDocuments)
}

func (c *cached) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	vecs, err := c.embed(ctx, []string{text}, QueryKey, func(ctx context.Context, texts []string) ([][]float32, error) {
		v, err := c.inner.EmbedQuery(ctx, texts[0])
		if err != nil {
			return nil, err
		}
		return [][]float32{v}, nil
	})
	if err != nil {
		return nil, err
	}
	return vecs[0], nil
}

func (c *cached) embed(ctx context.Context, texts []string, key func(string) string,
	call func(context.Context, []string) ([][]float32, error)) ([][]float32, error) {
	space := c.inner.Space()
	keys := make([]string, len(texts))
	distinct := make([]string, 0, len(texts))
	seen := make(map[string]bool, len(texts))
	for i, t := range texts {
		keys[i] = key(t)
		if !seen[keys[i]] {
			seen[keys[i]] = true
			distinct = append(distinct, keys[i])
		}
	}
	hits, err := c.cache.CachedEmbeddings(ctx, space, distinct)
	if err != nil {
		c.log.WarnContext(ctx, "embedding cache read failed", slog.String("space", space.ID()), slog.Any("error", err))
		hits = nil
	}
	have := make(map[string][]float32, len(distinct))
	for k, v := range hits {
		if len(v) == space.Dim {
			have[k] = v
		}
	}
	var missTexts []string
	for i, t := range texts {
		if _, ok := have[keys[i]]; !ok && seen[keys[i]] {
			seen[keys[i]] = false // ask once per distinct text
			missTexts = append(missTexts, t)
		}
	}
	telemetry.CacheLookup("embedding", len(distinct)-len(missTexts), len(missTexts))
	if len(missTexts) > 0 {
		// One request's worth at a time when the inner embedder says what a request holds: each request's
		// vectors are cached as soon as it returns, so a call that fails part-way (the API went down after
		// some requests) keeps what was embedded, and the retry sends only the rest.
		size, parallel := len(missTexts), 1
		if b, ok := c.inner.(Batcher); ok {
			if bs, bp := b.Batching(); bs > 0 {
				size, parallel = bs, bp
			}
		}
		var mu sync.Mutex
		_, err := Batches(ctx, missTexts, size, parallel, func(ctx context.Context, batch []string) ([][]float32, error) {
			vecs, err := call(ctx, batch)
			if err != nil {
				return nil, err
			}
			if err := Check(space, len(batch), vecs); err != nil {
				return nil, rag.WrapError(rag.CodeEmbeddingFailed, err, "%s embedding failed: unusable response: %v", space.Provider, err)
			}
			fresh := make(map[string][]float32, len(vecs))
			for i, v := range vecs {
				fresh[key(batch[i])] = v
			}
			if err := c.cache.CacheEmbeddings(ctx, space, fresh); err != nil {
				c.log.WarnContext(ctx, "embedding cache write failed", slog.String("space", space.ID()), slog.Any("error", err))
			}
			mu.Lock()
			maps.Copy(have, fresh)
			mu.Unlock()
			return vecs, nil
		})
		if err != nil {
			return nil, err
		}
	}
	out := make([][]float32, len(texts))
	for i := range texts {
		// Each caller gets its own slice: a shared one could be changed through another.
		out[i] = append([]float32(nil), have[keys[i]]...)
	}
	return out, nil
}
