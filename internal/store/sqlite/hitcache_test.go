package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/store/sqlite"
)

// TestHitCache checks that the passages Hits keeps in memory are what the database holds after every kind
// of change to what Hits reads, made through this store or another one on the same file (another
// process), and that who may see a passage is still decided by the database.
func TestHitCache(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "ragd.db")
	s := openAt(t, path)
	other := openAt(t, path)
	d := ingest(t, ctx, s, "a", []string{"alpha one", "alpha two"}, [][]float32{unit(0), unit(1)})
	ids := chunkIDs(t, s, d.ID)
	hits := func(st rag.Store, p rag.Principal, ids []int64) []rag.Hit {
		t.Helper()
		h, err := st.Hits(ctx, p, ids)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	first := hits(s, rag.LocalPrincipal, ids)
	if len(first) != 2 || first[0].Text != "alpha one" || first[1].Text != "alpha two" {
		t.Fatalf("hits = %+v", first)
	}
	if n := sqlite.KeptHits(s); n != 2 {
		t.Fatalf("kept %d passages after the first read, want 2", n)
	}
	// Order and repeats are the caller's, from memory as from the database.
	if h := hits(s, rag.LocalPrincipal, []int64{ids[1], ids[0], ids[1], 999999}); len(h) != 2 || h[0].ID != ids[1] || h[1].ID != ids[0] {
		t.Fatalf("hits in the order asked = %+v", h)
	}

	// A caller changing what it got changes nothing kept.
	first[0].Metadata = map[string]any{"x": 1}
	h := hits(s, rag.LocalPrincipal, ids[:1])
	h[0].Title = "changed by the caller"
	if h[0].Metadata == nil {
		h[0].Metadata = map[string]any{}
	}
	h[0].Metadata["y"] = 2
	if again := hits(s, rag.LocalPrincipal, ids[:1]); again[0].Title != "a" || again[0].Metadata["y"] != nil || again[0].Metadata["x"] != nil {
		t.Fatalf("a caller's change reached the kept passage: %+v", again[0])
	}

	// A new title and metadata, written by this store and by another one.
	title := "Alpha report"
	if _, err := s.UpdateDocument(ctx, rag.LocalPrincipal, d.ID, rag.DocumentUpdate{Title: &title}); err != nil {
		t.Fatal(err)
	}
	if h := hits(s, rag.LocalPrincipal, ids); h[0].Title != title || h[1].Title != title {
		t.Fatalf("after a new title: %q, %q", h[0].Title, h[1].Title)
	}
	if _, err := other.UpdateDocument(ctx, rag.LocalPrincipal, d.ID, rag.DocumentUpdate{Metadata: map[string]any{"year": "2024"}}); err != nil {
		t.Fatal(err)
	}
	if h := hits(s, rag.LocalPrincipal, ids); h[0].Metadata["year"] != "2024" {
		t.Fatalf("after another store's new metadata: %+v", h[0].Metadata)
	}

	// Who sees a passage is the database's answer, kept passages or not.
	bob := rag.Principal{ID: "user:bob"}
	if h := hits(s, bob, ids); len(h) != 0 {
		t.Fatalf("bob sees %d kept passages of a document not shared with him", len(h))
	}
	if _, err := other.UpdateDocument(ctx, rag.LocalPrincipal, d.ID, rag.DocumentUpdate{Readers: []string{"user:bob"}}); err != nil {
		t.Fatal(err)
	}
	if h := hits(s, bob, ids); len(h) != 2 || h[0].Text != "alpha one" {
		t.Fatalf("bob, once a reader, gets %+v", h)
	}
	if _, err := s.UpdateDocument(ctx, rag.LocalPrincipal, d.ID, rag.DocumentUpdate{Readers: []string{}}); err != nil {
		t.Fatal(err)
	}
	if h := hits(s, bob, ids); len(h) != 0 {
		t.Fatalf("bob still sees %d passages after his grant was taken back", len(h))
	}

	// A new version (by another store): the old chunks are gone, the new ones are read.
	ingest(t, ctx, other, "a", []string{"beta one"}, [][]float32{unit(2)})
	if h := hits(s, rag.LocalPrincipal, ids); len(h) != 0 {
		t.Fatalf("the old version's passages are still returned: %+v", h)
	}
	newIDs := chunkIDs(t, s, d.ID)
	if h := hits(s, rag.LocalPrincipal, newIDs); len(h) != 1 || h[0].Text != "beta one" || h[0].Version != 2 {
		t.Fatalf("new version's hits = %+v", h)
	}

	// A deleted document's passages are gone.
	if err := other.DeleteDocument(ctx, rag.LocalPrincipal, d.ID); err != nil {
		t.Fatal(err)
	}
	if h := hits(s, rag.LocalPrincipal, newIDs); len(h) != 0 {
		t.Fatalf("a deleted document's passages are still returned: %+v", h)
	}
}

// TestHitCacheOff checks that a negative budget keeps nothing and Hits still answers.
func TestHitCacheOff(t *testing.T) {
	ctx := t.Context()
	s, err := sqlite.Open(ctx, t.TempDir(), sqlite.Options{HitCacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d := ingest(t, ctx, s, "a", []string{"alpha one"}, [][]float32{unit(0)})
	h, err := s.Hits(ctx, rag.LocalPrincipal, chunkIDs(t, s, d.ID))
	if err != nil || len(h) != 1 {
		t.Fatalf("hits = %+v, %v", h, err)
	}
	if n := sqlite.KeptHits(s); n != 0 {
		t.Fatalf("kept %d passages with the cache off", n)
	}
}
