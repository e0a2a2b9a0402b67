package retrieve_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/provider"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/rerank"
	"github.com/ragd/ragd/internal/retrieve"
)

// TestCrossEncoder: a search over the real store with a cross-encoder (the TEI fake) returns its scores in
// the hits and orders by them; with the re-ranker down the search still answers, in fused order, and says
// why.
func TestCrossEncoder(t *testing.T) {
	b := setup(t)
	b.add(t, "c", "levy.txt", "The harbour levy is due monthly. The harbour office takes the levy in cash.", nil)
	b.add(t, "c", "ferry.txt", "Ferries pay the levy once a year at the harbour, with the ferry licence.", nil)
	b.add(t, "c", "tunnel.txt", "Wind tunnel tests of the harbour crane measured gusts.", nil)
	f := fakeapi.NewReranker(fakeapi.RerankTEI, "")
	defer f.Close()
	enc, err := rerank.New(rerank.Config{Reranker: rerank.TEI, BaseURL: f.URL(),
		Retry: provider.Retry{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	r := b.retriever(t, retrieve.Options{Rerank: rerank.Options{Encoder: enc, TopN: 20}})
	q := rag.SearchRequest{Query: "ferry licence levy once a year", K: 2}
	plain, err := b.retriever(t, retrieve.Options{}).Search(context.Background(), rag.LocalPrincipal, q)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Search(context.Background(), rag.LocalPrincipal, q)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rerank == nil || res.Rerank.Reranker != "tei" || res.Rerank.Warning != "" || len(res.Hits) != 2 {
		t.Fatalf("info %+v, %d hits", res.Rerank, len(res.Hits))
	}
	if res.Hits[0].Source != "ferry.txt" || res.Hits[0].RerankScore == nil || *res.Hits[0].RerankScore <= *res.Hits[1].RerankScore {
		t.Errorf("first %s %+v, second %+v: the ferry passage holds every query word", res.Hits[0].Source, res.Hits[0].Scores, res.Hits[1].Scores)
	}
	var body struct{ Texts []string }
	req, _ := f.LastRequest(fakeapi.EndpointRerank)
	if err := req.JSON(&body); err != nil || len(body.Texts) != res.Rerank.Candidates || len(body.Texts) < 2 {
		t.Errorf("sent %d passages, info says %d", len(body.Texts), res.Rerank.Candidates)
	}

	f.SetDown(true)
	down, err := r.Search(context.Background(), rag.LocalPrincipal, q)
	if err != nil {
		t.Fatalf("a failing re-ranker must not fail the search: %v", err)
	}
	if down.Rerank == nil || !strings.Contains(down.Rerank.Warning, "503") || len(down.Hits) != len(plain.Hits) {
		t.Fatalf("down: info %+v", down.Rerank)
	}
	for i := range down.Hits {
		if down.Hits[i].ID != plain.Hits[i].ID || down.Hits[i].RerankScore != nil {
			t.Errorf("down: hit %d is %d, fused order has %d", i, down.Hits[i].ID, plain.Hits[i].ID)
		}
	}
}

// TestSeed003: with the preset, a document's authored_at and importance metadata lift it over an equally
// matching older, unrated one.
func TestSeed003(t *testing.T) {
	b := setup(t)
	text := "Compressor stall margins shrink as the inlet distortion grows."
	b.add(t, "c", "old.txt", text, map[string]any{"authored_at": "2015-03-01"})
	b.add(t, "c", "rated.txt", text+" ", map[string]any{"authored_at": "2025-12-01", "importance": 0.9})
	w, _ := rerank.Preset("seed003")
	now := func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }
	res, err := b.retriever(t, retrieve.Options{Rerank: rerank.Options{Weights: w, Now: now}}).Search(context.Background(),
		rag.LocalPrincipal, rag.SearchRequest{Query: "compressor stall inlet distortion", K: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 2 || res.Hits[0].Source != "rated.txt" || *res.Hits[0].Importance != 0.9 || *res.Hits[1].Recency > 0.01 {
		t.Errorf("hits %d, first %s", len(res.Hits), res.Hits[0].Source)
	}
}
