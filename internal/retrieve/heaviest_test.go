package retrieve

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"
)

// TestHeaviest: the n heaviest terms, heaviest first and ties by term, as a sort of the whole model gives
// them, for models smaller and larger than n and with many equal weights.
func TestHeaviest(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for trial := range 200 {
		m := map[string]float64{}
		for i := range r.IntN(60) {
			m[fmt.Sprintf("t%03d", i)] = float64(r.IntN(8)) / 4 // few distinct weights: ties
		}
		n := r.IntN(20)
		want := make([]string, 0, len(m))
		for k := range m {
			want = append(want, k)
		}
		sort.Slice(want, func(i, j int) bool {
			if m[want[i]] != m[want[j]] {
				return m[want[i]] > m[want[j]]
			}
			return want[i] < want[j]
		})
		want = want[:min(n, len(want))]
		if got := heaviest(m, n); !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d (n=%d, %d terms): got %v, want %v", trial, n, len(m), got, want)
		}
	}
}
