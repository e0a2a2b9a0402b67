package topk

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

// TestRows compares Rows with sorting every passing row, on scores with many ties, for k from 1 past the
// number of rows, with a filter that refuses a third of them.
func TestRows(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 200
	acc := make([]float64, n)
	ids := make([]int64, n)
	for i := range acc {
		acc[i] = float64(r.IntN(12)) // ties everywhere
		ids[i] = int64(1000 + 3*i)   // row order is chunk-ID order
	}
	touched := r.Perm(n)[:150]
	rows := make([]int32, len(touched))
	for i, v := range touched {
		rows[i] = int32(v)
	}
	ok := func(row int32) bool { return row%3 != 0 }
	var want []rag.Candidate
	for _, row := range rows {
		if ok(row) {
			want = append(want, rag.Candidate{ChunkID: ids[row], Score: acc[row]})
		}
	}
	Sort(want)
	for k := 1; k <= len(want)+5; k++ {
		got := Rows(rows, acc, ids, ok, k)
		w := want[:min(k, len(want))]
		if !slices.Equal(got, w) {
			t.Fatalf("k=%d: got %v, want %v", k, got, w)
		}
	}
}
