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

// TestFeedbackImportance: with the preset and importance from users' ratings (rerank.FeedbackSignals over
// the real store), a passage rated down by two users drops below an equally matching unrated one, and one
// rated up rises above it; a rating of another passage of the same document moves it by half as much.
func TestFeedbackImportance(t *testing.T) {
	b := setup(t)
	text := "Compressor stall margins shrink as the inlet distortion grows."
	b.add(t, "c", "a.txt", text, nil)
	b.add(t, "c", "b.txt", text+" ", nil)
	w, _ := rerank.Preset("seed003")
	r := b.retriever(t, retrieve.Options{Rerank: rerank.Options{Weights: w, Signals: rerank.FeedbackSignals{Tallies: b.store}}})
	q := rag.SearchRequest{Query: "compressor stall inlet distortion", K: 2}
	search := func() []rag.Hit {
		t.Helper()
		res, err := r.Search(context.Background(), rag.LocalPrincipal, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) != 2 {
			t.Fatalf("%d hits", len(res.Hits))
		}
		return res.Hits
	}
	before := search()
	if *before[0].Importance != rerank.NeutralImportance || *before[1].Importance != rerank.NeutralImportance {
		t.Fatalf("unrated importance %v, %v, want %v", *before[0].Importance, *before[1].Importance, rerank.NeutralImportance)
	}
	rate := func(who string, rating int, h rag.Hit) {
		t.Helper()
		f := &rag.Feedback{Vote: rag.Vote{Target: rag.FeedbackSource, Rating: rating, Question: q.Query}, Principal: who, Passages: []rag.FeedbackPassage{{ChunkID: h.ID, DocumentID: h.DocumentID, Hash: rag.PassageHash(h.Text), Text: h.Text}}}
		if err := b.store.PutFeedback(context.Background(), f); err != nil {
			t.Fatal(err)
		}
	}
	top := before[0]
	rate("user:a", -1, top)
	rate("user:b", -1, top)
	after := search()
	if after[0].ID == top.ID || after[1].ID != top.ID {
		t.Fatalf("the passage rated down is still first: %s then %s", after[0].Source, after[1].Source)
	}
	if got := *after[1].Importance; got >= rerank.NeutralImportance {
		t.Errorf("importance of the passage rated down %v, want below %v", got, rerank.NeutralImportance)
	}
	// Rated up by three users, it rises above the unrated one again.
	rate("user:a", 1, top)
	rate("user:b", 1, top)
	rate("user:c", 1, top)
	if again := search(); again[0].ID != top.ID || *again[0].Importance <= rerank.NeutralImportance {
		t.Errorf("the passage rated up is not first: %s (importance %v)", again[0].Source, *again[0].Importance)
	}
}

// TestFeedbackSignalsDocumentShare: a rating of one passage moves the other passages of its document by
// DocumentShare, and a passage's hash (not its chunk ID) carries its ratings.
func TestFeedbackSignalsDocumentShare(t *testing.T) {
	b := setup(t)
	b.add(t, "c", "a.txt", "unused", nil)
	hits := []rag.Hit{
		{Chunk: rag.Chunk{ID: 1, DocumentID: "d", Text: "first passage"}},
		{Chunk: rag.Chunk{ID: 2, DocumentID: "d", Text: "second passage"}},
		{Chunk: rag.Chunk{ID: 3, DocumentID: "e", Text: "first passage"}},
	}
	f := &rag.Feedback{Vote: rag.Vote{Target: rag.FeedbackSource, Rating: -1, Question: "q"}, Principal: "user:a", Passages: []rag.FeedbackPassage{{ChunkID: 99, DocumentID: "d", Hash: rag.PassageHash("first  passage")}}}
	if err := b.store.PutFeedback(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	imp, perm, err := rerank.FeedbackSignals{Tallies: b.store}.Signals(context.Background(), rag.LocalPrincipal, hits)
	if err != nil {
		t.Fatal(err)
	}
	own := rerank.PriorWeight * rerank.NeutralImportance / (rerank.PriorWeight + 1)
	share := rerank.PriorWeight * rerank.NeutralImportance / (rerank.PriorWeight + rerank.DocumentShare)
	if imp[1] != own || imp[2] != share || imp[3] != rerank.NeutralImportance || len(perm) != 0 {
		t.Errorf("importance %v (want %v, %v, %v), permission %v", imp, own, share, rerank.NeutralImportance, perm)
	}
}
