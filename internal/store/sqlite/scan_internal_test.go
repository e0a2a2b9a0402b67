package sqlite

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/viterin/vek/vek32"
)

func syntheticSpace(n, dim int) *vecSnapshot {
	r := rand.New(rand.NewPCG(1, 1))
	v := &vecSnapshot{dim: dim, live: n}
	v.vecs = make([]float32, n*dim)
	for i := range n {
		var norm float64
		row := v.vecs[i*dim : (i+1)*dim]
		for j := range row {
			row[j] = float32(r.NormFloat64())
			norm += float64(row[j]) * float64(row[j])
		}
		for j := range row {
			row[j] = float32(float64(row[j]) / math.Sqrt(norm))
		}
		v.ids = append(v.ids, int64(i+1))
		v.docs = append(v.docs, int64(i/100+1))
	}
	return v
}

// BenchmarkScan measures the in-memory exact search alone (100k × 768, k=50).
func BenchmarkScan(b *testing.B) {
	sv := syntheticSpace(100_000, 768)
	q := sv.vecs[:768]
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			for b.Loop() {
				if c := sv.search(q, nil, 50, w); len(c) != 50 || c[0].ChunkID != 1 {
					b.Fatalf("%v", c[:1])
				}
			}
		})
	}
}

// BenchmarkScanBaseline reads the same memory without scoring: the floor set by memory bandwidth.
func BenchmarkScanBaseline(b *testing.B) {
	sv := syntheticSpace(100_000, 768)
	b.Run("vek32.Sum", func(b *testing.B) {
		for b.Loop() {
			_ = vek32.Sum(sv.vecs)
		}
	})
}
