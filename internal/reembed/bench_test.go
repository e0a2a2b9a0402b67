package reembed_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/rag"
)

// BenchmarkReembed measures a re-embed of the four fixtures' chunks from the hash space into an OpenAI
// space on the local fake (HTTP, JSON, the embedding cache and the store's writes; the fake answers at
// once, so a real provider's latency comes on top). Each iteration fills a space of its own dimension, so
// nothing comes from the cache.
func BenchmarkReembed(b *testing.B) {
	bb := setup(b, fixtures...)
	ctx := context.Background()
	total := 0
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		e := bb.openai(b, "text-embedding-3-small", 256+i)
		s := bb.service(b, e, hashOnly, 0)
		if err := s.Reembed(ctx); err != nil {
			b.Fatal(err)
		}
		stats, err := bb.store.SpaceStats(ctx)
		if err != nil {
			b.Fatal(err)
		}
		total += stats.Spaces[e.Space().ID()]
	}
	b.ReportMetric(float64(total)/time.Since(start).Seconds(), "chunks/s")
	b.ReportMetric(float64(total)/float64(b.N), "chunks/op")
}

// BenchmarkSearch compares a search through the Service (which picks the space) with the same search on
// its retriever directly.
func BenchmarkSearch(b *testing.B) {
	bb := setup(b, fixtures...)
	ctx := context.Background()
	s := bb.service(b, bb.hash, hashOnly, 0)
	req := rag.SearchRequest{Query: query, K: 10}
	for _, bc := range []struct {
		name string
		fn   func() error
	}{
		{"Service", func() error { _, err := s.Search(ctx, rag.LocalPrincipal, req); return err }},
		{"Retriever", func() error { _, err := s.Retriever().Search(ctx, rag.LocalPrincipal, req); return err }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for range b.N {
				if err := bc.fn(); err != nil {
					b.Fatal(fmt.Errorf("search: %w", err))
				}
			}
		})
	}
}
