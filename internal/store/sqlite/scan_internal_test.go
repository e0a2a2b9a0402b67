package sqlite

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
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

// TestSearchBatch: scoring queries together in one pass gives each the result it gets alone, whatever its
// filter and k, with removed rows skipped.
func TestSearchBatch(t *testing.T) {
	v := syntheticSpace(minParallelRows+500, 16)
	for i := 0; i < len(v.docs); i += 7 {
		v.docs[i] = -1
		v.live--
	}
	r := rand.New(rand.NewPCG(9, 9))
	var reqs []*scanReq
	for j := range maxBatch {
		var allowed docSet
		if j%3 == 1 {
			allowed = make(docSet, 1)
			allowed[0] = 1<<3 | 1<<17 | 1<<40 // documents 3, 17 and 40
		}
		q := v.vecs[r.IntN(len(v.ids))*16:][:16]
		reqs = append(reqs, &scanReq{q: q, allowed: allowed, k: 1 + j*7, snap: v, done: make(chan struct{})})
	}
	v.searchBatch(reqs, 2)
	for j, req := range reqs {
		want := v.search(req.q, req.allowed, req.k, 1)
		if !reflect.DeepEqual(req.out, want) {
			t.Fatalf("query %d: batch gave %v, alone %v", j, req.out, want)
		}
		if len(want) != req.k && req.allowed == nil {
			t.Fatalf("query %d: %d results, want %d", j, len(want), req.k)
		}
		for _, c := range want {
			if i := int(c.ChunkID - 1); v.docs[i] < 0 {
				t.Fatalf("query %d returned removed row %d", j, c.ChunkID)
			}
		}
	}
}

// TestScorePending: whoever holds a turn scores the queries that wait, oldest first, in passes of
// maxBatch, until its own is done; queries of later passes are left for their owners.
func TestScorePending(t *testing.T) {
	s := &Store{opts: Options{SearchWorkers: 2}, turns: make(chan struct{}, 1)}
	v := syntheticSpace(1000, 8)
	sv := &spaceVectors{dim: 8, pending: make(chan *scanReq, 100)}
	var reqs []*scanReq
	for j := range 2*maxBatch + 3 {
		r := &scanReq{q: v.vecs[j*8 : (j+1)*8], k: 3, snap: v, done: make(chan struct{})}
		reqs = append(reqs, r)
	}
	for _, r := range reqs {
		sv.pending <- r
	}
	s.turns <- struct{}{}
	s.scorePending(sv, reqs[maxBatch+1]) // in the second pass
	if len(s.turns) != 0 {
		t.Fatal("the turn was not ended")
	}
	for j, r := range reqs {
		select {
		case <-r.done:
			if j >= 2*maxBatch {
				t.Fatalf("query %d, after the pass of the caller's, was scored too", j)
			}
			if want := v.search(r.q, nil, 3, 1); !reflect.DeepEqual(r.out, want) {
				t.Fatalf("query %d: %v, want %v", j, r.out, want)
			}
		default:
			if j < 2*maxBatch {
				t.Fatalf("query %d was not scored", j)
			}
		}
	}
}
