package vindex

import (
	"math/rand/v2"
	"testing"
)

func randCodes(rows, nw int, seed uint64) []uint64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	c := make([]uint64, rows*nw)
	for i := range c {
		c[i] = rng.Uint64()
	}
	return c
}

// TestPlaneSums checks the kernel in use (AVX-512 where the CPU has it) against the plain Go loop.
func TestPlaneSums(t *testing.T) {
	for _, nw := range []int{4, 12, 16, 48} {
		codes, planes := randCodes(1000, nw, 1), randCodes(4, nw, 2)
		want, got := make([]uint32, 1000), make([]uint32, 1000)
		planeSumsGo(codes, nw, planes, want)
		planeSums(codes, nw, planes, got)
		for j := range want {
			if got[j] != want[j] {
				t.Fatalf("nw %d row %d: %d, want %d (asm %v)", nw, j, got[j], want[j], useAsm)
			}
		}
	}
}

func BenchmarkPlaneSums(b *testing.B) {
	const rows, nw = 1000, 12
	codes, planes := randCodes(rows, nw, 1), randCodes(4, nw, 2)
	out := make([]uint32, rows)
	b.Run("go", func(b *testing.B) {
		for range b.N {
			planeSumsGo(codes, nw, planes, out)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
	})
	b.Run("kernel", func(b *testing.B) {
		for range b.N {
			planeSums(codes, nw, planes, out)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
	})
}
