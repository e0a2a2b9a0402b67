package sqlite_test

import (
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/store/sqlite"
	"github.com/ragd/ragd/internal/vindex"
)

var annSpace = rag.Space{Provider: "test", Model: "ann", Dim: 32}

func openWith(t *testing.T, dir string, opts sqlite.Options) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// annCorpus writes docs documents of 10 chunks with clustered vectors and returns the document IDs and
// the query vectors.
func annCorpus(t *testing.T, s *sqlite.Store, docs int) ([]string, [][]float32) {
	t.Helper()
	return annCorpusOf(t, s, docs, 3)
}

// annCorpusOf is annCorpus with the vectors drawn with seed.
func annCorpusOf(t *testing.T, s *sqlite.Store, docs int, seed uint64) ([]string, [][]float32) {
	t.Helper()
	ctx := t.Context()
	vecs, queries := vindex.Clustered(docs*10, 30, annSpace.Dim, 1, seed)
	coll, err := s.EnsureCollection(ctx, rag.DefaultCollection, "local")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for d := range docs {
		doc := &rag.Document{CollectionID: coll.ID, Title: "t", Owner: "local", Tags: []string{fmt.Sprint("tag", d%20)}}
		if err := s.CreateDocument(ctx, doc); err != nil {
			t.Fatal(err)
		}
		chunks := make([]rag.Chunk, 10)
		for i := range chunks {
			r := d*10 + i
			chunks[i] = rag.Chunk{Index: i, Kind: rag.KindText, Text: fmt.Sprint("chunk ", r), Vector: vecs[r*annSpace.Dim : (r+1)*annSpace.Dim]}
		}
		if _, err := s.CommitVersion(ctx, &rag.VersionCommit{DocumentID: doc.ID, ContentHash: hashOf(fmt.Sprint("doc", d)),
			Title: "t", MediaType: "text/plain", Space: annSpace, Chunks: chunks}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, doc.ID)
	}
	var qs [][]float32
	for i := range 30 {
		qs = append(qs, queries[i*annSpace.Dim:(i+1)*annSpace.Dim])
	}
	return ids, qs
}

func vectorSearch(t *testing.T, s *sqlite.Store, q []float32, f rag.Filter) []rag.Candidate {
	t.Helper()
	c, err := s.VectorCandidates(t.Context(), rag.LocalPrincipal, rag.VectorQuery{Space: annSpace, Vector: q, K: 10, Filter: f})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func candidateIDs(cs []rag.Candidate) []int64 {
	out := make([]int64, len(cs))
	for i, c := range cs {
		out[i] = c.ChunkID
	}
	return out
}

// TestVectorIndex: past VectorIndexMin a space is searched through the approximate index, which finds
// nearly every result of the exact search (same scores), applies filters and removals inside the search,
// falls back to exact search for a selective filter, is written to its file on close and read back on
// the next start, and is built again when the file is corrupt.
func TestVectorIndex(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := openWith(t, dir, sqlite.Options{VectorIndexMin: 500})
	docs, queries := annCorpus(t, s, 200)
	exactStore := openWith(t, dir, sqlite.Options{VectorIndexMin: -1}) // the reference, on the same file

	vectorSearch(t, s, queries[0], rag.Filter{}) // loads the space, which starts the build
	if got := sqlite.IndexedRows(s, annSpace); got != 2000 {
		t.Fatalf("indexed rows %d, want 2000", got)
	}
	if got := sqlite.IndexedRows(exactStore, annSpace); got != -1 {
		t.Fatalf("the store with VectorIndexMin -1 has an index of %d rows", got)
	}

	recall := func(f rag.Filter) float64 {
		t.Helper()
		var sum float64
		for _, q := range queries {
			got, want := vectorSearch(t, s, q, f), vectorSearch(t, exactStore, q, f)
			scores := map[int64]float64{}
			for _, c := range want {
				scores[c.ChunkID] = c.Score
			}
			found := 0
			for i, c := range got {
				if sc, ok := scores[c.ChunkID]; ok {
					found++
					if sc != c.Score {
						t.Fatalf("chunk %d: score %v, exact %v", c.ChunkID, c.Score, sc)
					}
				}
				if c.Rank != i+1 || (i > 0 && c.Score > got[i-1].Score) {
					t.Fatalf("results out of order: %v", got)
				}
			}
			sum += float64(found) / float64(max(1, len(want)))
		}
		return sum / float64(len(queries))
	}
	t.Run("Recall", func(t *testing.T) {
		if r := recall(rag.Filter{}); r < 0.95 {
			t.Fatalf("recall@10 %.3f", r)
		}
	})
	t.Run("Filter", func(t *testing.T) {
		f := rag.Filter{Tags: []string{"tag1", "tag2", "tag3", "tag4"}} // a fifth of the documents: through the index
		if r := recall(f); r < 0.9 {
			t.Fatalf("recall@10 %.3f with a filter", r)
		}
		allowed := map[int64]bool{}
		for i, d := range docs {
			if i%20 >= 1 && i%20 <= 4 {
				for _, id := range chunkIDs(t, s, d) {
					allowed[id] = true
				}
			}
		}
		for _, q := range queries {
			for _, c := range vectorSearch(t, s, q, f) {
				if !allowed[c.ChunkID] {
					t.Fatalf("chunk %d outside the filter returned", c.ChunkID)
				}
			}
		}
	})
	t.Run("SelectiveFilterIsExact", func(t *testing.T) {
		f := rag.Filter{DocumentIDs: docs[:3]} // 1.5 % of the rows
		for _, q := range queries {
			if got, want := vectorSearch(t, s, q, f), vectorSearch(t, exactStore, q, f); !slices.Equal(candidateIDs(got), candidateIDs(want)) {
				t.Fatalf("got %v, want %v", candidateIDs(got), candidateIDs(want))
			}
		}
	})
	t.Run("MoreThanTheProbedListsHold", func(t *testing.T) {
		// k beyond the rows of the probed lists: answered exactly, k rows.
		q := rag.VectorQuery{Space: annSpace, Vector: queries[0], K: 1500}
		got, err := s.VectorCandidates(ctx, rag.LocalPrincipal, q)
		if err != nil {
			t.Fatal(err)
		}
		want, err := exactStore.VectorCandidates(ctx, rag.LocalPrincipal, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1500 || !slices.Equal(candidateIDs(got), candidateIDs(want)) {
			t.Fatalf("%d results, differing from exact search", len(got))
		}
	})
	t.Run("Removal", func(t *testing.T) {
		top := vectorSearch(t, s, queries[1], rag.Filter{})
		victim := ""
		removed := map[int64]bool{}
		for _, d := range docs {
			ids := chunkIDs(t, s, d)
			if slices.Contains(ids, top[0].ChunkID) {
				victim = d
				for _, id := range ids {
					removed[id] = true
				}
			}
		}
		if err := s.DeleteDocument(ctx, rag.LocalPrincipal, victim); err != nil {
			t.Fatal(err)
		}
		for _, c := range vectorSearch(t, s, queries[1], rag.Filter{}) {
			if removed[c.ChunkID] {
				t.Fatalf("chunk %d of the deleted document returned", c.ChunkID)
			}
		}
		if got := sqlite.IndexedRows(s, annSpace); got != 2000 { // removed rows stay in the lists until compaction
			t.Fatalf("indexed rows %d", got)
		}
	})
	t.Run("Added", func(t *testing.T) {
		more, _ := annCorpus(t, s, 5) // 50 more rows, assigned to their lists as they are loaded
		vectorSearch(t, s, queries[2], rag.Filter{})
		if got := sqlite.IndexedRows(s, annSpace); got != 2050 {
			t.Fatalf("indexed rows %d, want 2050", got)
		}
		docs = append(docs, more...)
		if r := recall(rag.Filter{}); r < 0.95 {
			t.Fatalf("recall@10 %.3f after adding rows", r)
		}
	})

	// Restart: the index is read back from its file, not built again.
	file := sqlite.IndexFile(s, annSpace)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("no index file after close: %v", err)
	}
	s2 := openWith(t, dir, sqlite.Options{VectorIndexMin: 500})
	want := vectorSearch(t, exactStore, queries[3], rag.Filter{})
	got := vectorSearch(t, s2, queries[3], rag.Filter{})
	if sqlite.IndexesRestored(s2) != 1 {
		t.Fatal("the index was not read back from its file")
	}
	if r := vindexRecall(got, want); r < 0.8 {
		t.Fatalf("after restart: %v, exact %v", candidateIDs(got), candidateIDs(want))
	}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}

	// A corrupt file is not used: the index is built again.
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	s3 := openWith(t, dir, sqlite.Options{VectorIndexMin: 500})
	vectorSearch(t, s3, queries[3], rag.Filter{})
	if sqlite.IndexesRestored(s3) != 0 {
		t.Fatal("a corrupt index file was used")
	}
	if got := sqlite.IndexedRows(s3, annSpace); got < 2000 {
		t.Fatalf("indexed rows %d after a corrupt file", got)
	}
}

// vindexRecall is vindex.Recall of candidate lists.
func vindexRecall(got, want []rag.Candidate) float64 {
	hits := func(cs []rag.Candidate) []vindex.Hit {
		out := make([]vindex.Hit, len(cs))
		for i, c := range cs {
			out[i] = vindex.Hit{Row: int32(c.ChunkID)}
		}
		return out
	}
	return vindex.Recall(hits(got), hits(want))
}
