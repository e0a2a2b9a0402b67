// Package topk holds the top-k selection both stores' in-memory keyword indexes share: the k best of the
// rows a query touched, by score and then chunk ID, as the stores' SQL orders them.
package topk

import (
	"sort"

	"github.com/ragd/ragd/internal/rag"
)

// Rows returns the k best of the touched rows that pass ok, by score (acc[row]) and then the lower row,
// as candidates with the rows' chunk IDs (ids[row]), best first. Rows are numbered in chunk-ID order, so
// the lower row is the lower chunk ID. ok is asked only of rows that would enter the top k.
func Rows(touched []int32, acc []float64, ids []int64, ok func(int32) bool, k int) []rag.Candidate {
	// h is a min-heap of the best rows so far (its root the worst of them): worse is a lower score, or the
	// same score and a higher row (= higher chunk ID).
	h := make([]int32, 0, k)
	worse := func(a, b int32) bool { return acc[a] < acc[b] || acc[a] == acc[b] && a > b }
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			if r := l + 1; r < len(h) && worse(h[r], h[l]) {
				l = r
			}
			if !worse(h[l], h[i]) {
				return
			}
			h[i], h[l] = h[l], h[i]
			i = l
		}
	}
	for _, r := range touched {
		if len(h) == k && !worse(h[0], r) {
			continue
		}
		if !ok(r) {
			continue
		}
		if len(h) < k {
			h = append(h, r)
			for i := len(h) - 1; i > 0; {
				p := (i - 1) / 2
				if !worse(h[i], h[p]) {
					break
				}
				h[i], h[p] = h[p], h[i]
				i = p
			}
			continue
		}
		h[0] = r
		down(0)
	}
	out := make([]rag.Candidate, len(h))
	for i, r := range h {
		out[i] = rag.Candidate{ChunkID: ids[r], Score: acc[r]}
	}
	Sort(out)
	return out
}

// Sort orders candidates by score, best first, ties to the lower chunk ID.
func Sort(out []rag.Candidate) {
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].ChunkID < out[j].ChunkID
	})
}
