package storetest

import (
	"math"
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
