package storetest

import (
	"math"
	"slices"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

func testVectorScores(t *testing.T, open func(t *testing.T) rag.Store) {
	t.Run("OK", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		d := newDoc(t, s, c.ID, "a.txt")
		e0, e1 := basis(spaceA.Dim, 0), basis(spaceA.Dim, 1)
		mix := normalize([]float32{1, 1, 0, 0, 0, 0, 0, 0})
		commitTexts(t, s, d, spaceA, []string{"one", "two", "three"}, [][]float32{e0, e1, mix})
		chunks, err := s.ListChunks(t.Context(), alice, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		ids := []int64{chunks[0].ID, chunks[2].ID, chunks[1].ID + 1000}
		got, err := s.VectorScores(t.Context(), rag.LocalPrincipal, spaceA, e0, ids)
		if err != nil {
			t.Fatal(err)
		}
		want := map[int64]float64{chunks[0].ID: 1, chunks[2].ID: math.Sqrt2 / 2}
		if len(got) != len(want) {
			t.Fatalf("scores %v, want %v (unknown IDs absent, unasked chunks absent)", got, want)
		}
		for id, w := range want {
			if !near(got[id], w) {
				t.Errorf("chunk %d: %.5f, want %.5f", id, got[id], w)
			}
		}
	})
	t.Run("OtherSpaceAbsent", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		d := newDoc(t, s, c.ID, "a.txt")
		commitTexts(t, s, d, spaceA, []string{"one"}, nil)
		chunks, _ := s.ListChunks(t.Context(), alice, d.ID)
		got, err := s.VectorScores(t.Context(), rag.LocalPrincipal, spaceB, basis(spaceB.Dim, 0), []int64{chunks[0].ID})
		if err != nil || len(got) != 0 {
			t.Fatalf("scores in a space without vectors: %v %v", got, err)
		}
	})
	t.Run("DimensionMismatch", func(t *testing.T) {
		s := open(t)
		_, err := s.VectorScores(t.Context(), rag.LocalPrincipal, spaceA, make([]float32, spaceA.Dim-1), []int64{1})
		if !isCode(err, rag.CodeInvalid) {
			t.Fatalf("err = %v, want invalid_request", err)
		}
	})
}

func testKeywordScores(t *testing.T, open func(t *testing.T) rag.Store) {
	texts := []string{"river bank walk", "river boats at dawn", "quiet river evening", "flooded meadow grass",
		"river current speed river", "mountain trail guide", "flooded river fields"}
	var coll string // the collection of the last setup
	setup := func(t *testing.T) (rag.Store, []*rag.Chunk) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		coll = c.ID
		d := newDoc(t, s, c.ID, "a.txt")
		commitTexts(t, s, d, spaceA, texts, nil)
		chunks, err := s.ListChunks(t.Context(), alice, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		return s, chunks
	}
	scores := func(t *testing.T, s rag.Store, terms []string, weights []float64, ids []int64) map[int64]float64 {
		t.Helper()
		got, err := s.KeywordScores(t.Context(), alice, terms, weights, ids)
		if err != nil {
			t.Fatalf("KeywordScores(%q, %v): %v", terms, weights, err)
		}
		return got
	}
	t.Run("SameAsCandidates", func(t *testing.T) {
		s, chunks := setup(t)
		terms := queryTerms("river flooded")
		kc := keyword(t, s, alice, "river flooded", rag.Filter{}, 10)
		ids := []int64{chunks[5].ID, chunks[5].ID + 1000} // no query word; no such chunk
		for _, c := range kc {
			ids = append(ids, c.ChunkID)
		}
		got := scores(t, s, terms, nil, ids)
		if len(got) != len(kc) {
			t.Fatalf("scores %v, want exactly the %d candidates (chunks without the terms and unknown IDs absent)", got, len(kc))
		}
		for _, c := range kc {
			if !near(got[c.ChunkID], c.Score) {
				t.Errorf("chunk %d: %.6f, KeywordCandidates gives %.6f", c.ChunkID, got[c.ChunkID], c.Score)
			}
		}
	})
	t.Run("Weights", func(t *testing.T) {
		s, chunks := setup(t)
		ids := make([]int64, len(chunks))
		for i, c := range chunks {
			ids[i] = c.ID
		}
		river, flooded := queryTerms("river"), queryTerms("flooded")
		r1, f1 := scores(t, s, river, nil, ids), scores(t, s, flooded, nil, ids)
		both := scores(t, s, append(append([]string{}, river...), flooded...), []float64{2, 0.5}, ids)
		twice := scores(t, s, append(append([]string{}, river...), river...), []float64{1, 1}, ids)
		for _, id := range ids {
			if want := 2*r1[id] + 0.5*f1[id]; !near(both[id], want) {
				t.Errorf("chunk %d: weighted %.6f, want 2·%.6f + 0.5·%.6f", id, both[id], r1[id], f1[id])
			}
			if !near(twice[id], 2*r1[id]) {
				t.Errorf("chunk %d: a term given twice %.6f, want its weights summed (%.6f)", id, twice[id], 2*r1[id])
			}
		}
		if r1[chunks[4].ID] <= r1[chunks[0].ID] {
			t.Errorf("a chunk holding the term twice scores %.6f, once %.6f", r1[chunks[4].ID], r1[chunks[0].ID])
		}
	})
	t.Run("Empty", func(t *testing.T) {
		s, chunks := setup(t)
		for _, tc := range []struct {
			terms []string
			ids   []int64
		}{{nil, []int64{chunks[0].ID}}, {[]string{""}, []int64{chunks[0].ID}}, {queryTerms("river"), nil}, {queryTerms("zyxwvut"), []int64{chunks[0].ID}}} {
			if got := scores(t, s, tc.terms, nil, tc.ids); len(got) != 0 {
				t.Errorf("terms %q ids %v: %v, want none", tc.terms, tc.ids, got)
			}
		}
	})
	t.Run("WeightsMismatch", func(t *testing.T) {
		s, chunks := setup(t)
		_, err := s.KeywordScores(t.Context(), alice, queryTerms("river flooded"), []float64{1}, []int64{chunks[0].ID})
		if !isCode(err, rag.CodeInvalid) {
			t.Fatalf("err = %v, want invalid_request", err)
		}
	})
	t.Run("CommittedLater", func(t *testing.T) {
		// A chunk committed after the first query (past an in-memory index's snapshot) is scored alike.
		s, chunks := setup(t)
		scores(t, s, queryTerms("river"), nil, []int64{chunks[0].ID})
		d := newDoc(t, s, coll, "b.txt")
		commitTexts(t, s, d, spaceA, []string{"river delta river mouth"}, nil)
		later, _ := s.ListChunks(t.Context(), alice, d.ID)
		kc := keyword(t, s, alice, "river", rag.Filter{}, 20)
		ids := []int64{later[0].ID, chunks[0].ID}
		got := scores(t, s, queryTerms("river"), nil, ids)
		for _, c := range kc {
			if slices.Contains(ids, c.ChunkID) && !near(got[c.ChunkID], c.Score) {
				t.Errorf("chunk %d: %.6f, KeywordCandidates gives %.6f", c.ChunkID, got[c.ChunkID], c.Score)
			}
		}
		if len(got) != 2 {
			t.Errorf("scores %v, want both chunks", got)
		}
	})
}
