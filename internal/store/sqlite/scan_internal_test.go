package sqlite

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
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
	v.searchBatch(reqs, nil, 2)
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

// TestSearchBatchFromFile: the exact scan of a snapshot whose vectors are in a vector file (slots out of
// row order, so that reads split into runs; rows removed) gives what the scan of the same rows in memory
// gives, with and without filters — a batch of filtered queries reads only the allowed rows.
func TestSearchBatchFromFile(t *testing.T) {
	const dim = 16
	mem := syntheticSpace(scanBlock+900, dim)
	for i := 0; i < len(mem.docs); i += 5 {
		mem.docs[i] = -1
		mem.live--
	}
	vf, err := createVecFile(filepath.Join(t.TempDir(), "vectors"), dim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { vf.discard() })
	// Slots: pairs of rows swapped, so runs of consecutive slots are short.
	n := len(mem.ids)
	order := make([]int, n)
	for i := range order {
		order[i] = i ^ 1
		if order[i] >= n {
			order[i] = i
		}
	}
	file := &vecSnapshot{dim: dim, ids: mem.ids, docs: mem.docs, live: mem.live, file: vf, slots: make([]int32, n)}
	for slot, i := range order {
		if _, err := vf.appendRows(mem.vecs[i*dim : (i+1)*dim]); err != nil {
			t.Fatal(err)
		}
		file.slots[i] = int32(slot)
	}
	r := rand.New(rand.NewPCG(3, 3))
	for _, filtered := range []bool{false, true} {
		var memReqs, fileReqs []*scanReq
		for j := range maxBatch {
			var allowed docSet
			if filtered || j%3 == 1 {
				allowed = make(docSet, 1)
				allowed[0] = 1<<3 | 1<<17 | 1<<40
			}
			q := mem.vecs[r.IntN(n)*dim:][:dim]
			memReqs = append(memReqs, &scanReq{q: q, allowed: allowed, k: 1 + j*5, snap: mem, done: make(chan struct{})})
			fileReqs = append(fileReqs, &scanReq{q: q, allowed: allowed, k: 1 + j*5, snap: file, done: make(chan struct{})})
		}
		mem.searchBatch(memReqs, nil, 2)
		file.searchBatch(fileReqs, nil, 2)
		for j := range memReqs {
			if fileReqs[j].err != nil || !reflect.DeepEqual(fileReqs[j].out, memReqs[j].out) || len(memReqs[j].out) == 0 {
				t.Fatalf("filtered %v, query %d: from the file %v (%v), in memory %v", filtered, j, fileReqs[j].out, fileReqs[j].err, memReqs[j].out)
			}
		}
	}
	// A read failure is the queries' error, not a wrong result.
	vf.close()
	req := &scanReq{q: mem.vecs[:dim], k: 3, snap: file, done: make(chan struct{})}
	file.searchBatch([]*scanReq{req}, nil, 1)
	if req.err == nil {
		t.Fatalf("scan of a closed vector file: %v, no error", req.out)
	}
}
