package postgres

import (
	"testing"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// TestDocumentIndexBackfill: documents of a schema whose document-level index is empty (one made before
// migration 0003, which adds it empty) are indexed when the store opens.
func TestDocumentIndexBackfill(t *testing.T) {
	url := testURL(t)
	schema := testSchema(t, url)
	s1 := openStore(t, Options{Schema: schema})
	ctx := t.Context()
	d := commitTexts(t, s1, "lighthouse_keeping.txt", "lighthouse_keeping", "a keeper's log")
	if _, err := s1.pool.Exec(ctx, s1.q(`DELETE FROM {S}.doc_postings; DELETE FROM {S}.doc_lengths`)); err != nil {
		t.Fatal(err)
	}
	find := func(s *Store) []rag.DocumentCandidate {
		got, err := s.DocumentCandidates(ctx, rag.LocalPrincipal, rag.KeywordQuery{Terms: textproc.QueryTerms("lighthouse"), K: 5})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := find(s1); len(got) != 0 {
		t.Fatalf("emptied index still finds %+v", got)
	}
	s2 := openStore(t, Options{Schema: schema})
	if got := find(s2); len(got) != 1 || got[0].DocumentID != d.ID || got[0].Chunks != 1 {
		t.Fatalf("after reopening: %+v, want the document re-indexed", got)
	}
}

// commitTexts stores a document of one chunk per text, with 2-dimensional vectors, in a collection "c".
func commitTexts(t *testing.T, s *Store, ext, title string, texts ...string) *rag.Document {
	t.Helper()
	ctx := t.Context()
	c, err := s.EnsureCollection(ctx, "c", "")
	if err != nil {
		t.Fatal(err)
	}
	d := &rag.Document{CollectionID: c.ID, ExternalID: ext, Title: title,
		Status: rag.StatusQueued, Stage: rag.StageQueued, Owner: rag.LocalPrincipal.ID, PendingHash: "h"}
	if err := s.CreateDocument(ctx, d); err != nil {
		t.Fatal(err)
	}
	chunks := make([]rag.Chunk, len(texts))
	for i, text := range texts {
		chunks[i] = rag.Chunk{Index: i, Text: text, Kind: rag.KindText, Vector: []float32{float32(1 - i%2), float32(i % 2)}}
	}
	if _, err := s.CommitVersion(ctx, &rag.VersionCommit{DocumentID: d.ID, ContentHash: "h", Title: d.Title,
		Space: rag.Space{Provider: "test", Model: "x", Dim: 2}, Chunks: chunks}); err != nil {
		t.Fatal(err)
	}
	return d
}
