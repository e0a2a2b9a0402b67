// Package embed holds what every embedder shares: checking and L2-normalising vectors so that a wrong
// dimension never reaches a store, running batches with bounded concurrency, and a cache keyed by
// (space, sha256 of the text) so that re-ingesting a document or repeating a question does not call a
// hosted API again. The embedders live in sub-packages: hash (offline default), gemini and openai.
package embed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"sync"

	"github.com/ragd/ragd/internal/rag"
)

// Normalize scales v to unit length in place and returns it; false when v has no length or holds NaN or
// Inf values (such a vector cannot be compared).
func Normalize(v []float32) ([]float32, bool) {
	var sum float64
	for _, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return v, false
		}
		sum += f * f
	}
	if sum == 0 {
		return v, false
	}
	n := math.Sqrt(sum)
	for i, x := range v {
		v[i] = float32(float64(x) / n)
	}
	return v, true
}

// Check verifies that vecs holds want vectors of space.Dim values each and normalises them in place. Its
// error explains the mismatch; adapters wrap it as an unusable response.
func Check(space rag.Space, want int, vecs [][]float32) error {
	if len(vecs) != want {
		return fmt.Errorf("got %d vectors for %d texts", len(vecs), want)
	}
	for i, v := range vecs {
		if len(v) != space.Dim {
			return fmt.Errorf("model %s returned %d-dimensional vectors, but the embedding space is %d-dimensional (set the dimension to %d, or use a model that honours it)",
				space.Model, len(v), space.Dim, len(v))
		}
		if _, ok := Normalize(v); !ok {
			return fmt.Errorf("vector %d is zero or not finite", i)
		}
	}
	return nil
}

// Batches runs fn over texts in batches of at most size (size < 1 means one batch), at most parallel at a
// time (parallel < 1 means 1), and returns the vectors in the order of texts. The first error cancels the
// batches that have not started and is returned.
func Batches(ctx context.Context, texts []string, size, parallel int,
	fn func(ctx context.Context, batch []string) ([][]float32, error)) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	if size < 1 {
		size = len(texts)
	}
	parallel = max(parallel, 1)
	out := make([][]float32, len(texts))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		sem      = make(chan struct{}, parallel)
	)
	for start := 0; start < len(texts); start += size {
		end := min(start+size, len(texts))
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func(start, end int) {
			defer wg.Done()
			defer func() { <-sem }()
			vecs, err := fn(ctx, texts[start:end])
			if err == nil && len(vecs) != end-start {
				err = fmt.Errorf("batch of %d texts gave %d vectors", end-start, len(vecs))
			}
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
				cancel()
				return
			}
			copy(out[start:end], vecs)
		}(start, end)
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// DocumentKey is the cache key of a passage embedded for indexing: the hex sha256 of its text.
func DocumentKey(text string) string {
	h := sha256.Sum256([]byte(text))
	return hex.EncodeToString(h[:])
}

// QueryKey is the cache key of a text embedded as a query. It differs from DocumentKey because providers
// embed queries and documents differently (Gemini's RETRIEVAL_QUERY and RETRIEVAL_DOCUMENT tasks).
func QueryKey(text string) string {
	h := sha256.Sum256([]byte("query\x00" + text))
	return hex.EncodeToString(h[:])
}
