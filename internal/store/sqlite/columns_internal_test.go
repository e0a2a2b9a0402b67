package sqlite

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// sparseQueryOf is a unit query with nnz non-zero components at random places.
func sparseQueryOf(r *rand.Rand, dim, nnz int) []float32 {
	q := make([]float32, dim)
	for _, j := range r.Perm(dim)[:nnz] {
		q[j] = float32(r.NormFloat64())
	}
	return q
}

// TestColumnScan: sparse queries scored by the column copy get exactly the dense scan's results (the same
// rows, scores and ties) with filters, removed rows, a last block not yet copied, several workers and
// dense queries in the same batch.
func TestColumnScan(t *testing.T) {
	const dim = 64
	v := syntheticSpace(5*colBlockRows+300, dim)
	v.base = 7
	for i := 0; i < len(v.docs); i += 11 {
		v.docs[i] = -1
		v.live--
	}
	cols := (*colBlocks)(nil).extended(v, 1<<30)
	if cols.rows() != 5*colBlockRows {
		t.Fatalf("copy covers %d rows, want %d", cols.rows(), 5*colBlockRows)
	}
	r := rand.New(rand.NewPCG(3, 3))
	var reqs []*scanReq
	for j := range maxBatch {
		var allowed docSet
		if j%3 == 1 {
			allowed = make(docSet, 1)
			allowed[0] = 1<<3 | 1<<17 | 1<<40
		}
		q := sparseQueryOf(r, dim, 1+j%(dim/maxSparseShare))
		if j%4 == 3 {
			q = v.vecs[r.IntN(len(v.ids))*dim:][:dim] // dense
		}
		reqs = append(reqs, &scanReq{q: q, allowed: allowed, k: 1 + j*13, snap: v, done: make(chan struct{})})
	}
	for _, workers := range []int{1, 2, 3} {
		for j := range reqs {
			reqs[j].done = make(chan struct{})
		}
		v.searchBatch(reqs, cols, workers)
		for j, req := range reqs {
			want := v.search(req.q, req.allowed, req.k, 1)
			if !reflect.DeepEqual(req.out, want) {
				t.Fatalf("workers %d, query %d: columns gave %v, dense %v", workers, j, req.out, want)
			}
		}
	}
}

// TestSparseOf: a query is sparse up to dim/maxSparseShare non-zero components, and not past it.
func TestSparseOf(t *testing.T) {
	const dim = 768
	r := rand.New(rand.NewPCG(5, 5))
	if s, ok := sparseOf(sparseQueryOf(r, dim, dim/maxSparseShare)); !ok || len(s.idx) != dim/maxSparseShare {
		t.Fatalf("a query of %d components is not sparse", dim/maxSparseShare)
	}
	if _, ok := sparseOf(sparseQueryOf(r, dim, dim/maxSparseShare+1)); ok {
		t.Fatalf("a query of %d components is sparse", dim/maxSparseShare+1)
	}
	if _, ok := sparseOf(make([]float32, dim)); ok {
		t.Fatal("the zero query is sparse")
	}
}

// TestColumnsBudget: the copy is made in the background when it fits the budget (at its boundary), not
// when one byte is missing, shares its blocks with the copy of an older snapshot of the same layout, and
// starts again for a new layout.
func TestColumnsBudget(t *testing.T) {
	const dim = 16
	v := syntheticSpace(3*colBlockRows+5, dim)
	v.base = 1
	need := int64(3 * colBlockRows * dim * 4)
	wait := func(sv *spaceVectors) {
		for sv.colBuilding.Load() {
			time.Sleep(time.Millisecond)
		}
	}
	sv := &spaceVectors{dim: dim}
	sv.columns(v, need-1)
	wait(sv)
	if c := sv.cols.Load(); c != nil {
		t.Fatalf("a copy of %d bytes was made within %d", c.bytes(), need-1)
	}
	sv.columns(v, need)
	wait(sv)
	c := sv.cols.Load()
	if c.rows() != 3*colBlockRows || c.bytes() != need {
		t.Fatalf("copy of %d rows, %d bytes; want %d rows, %d bytes", c.rows(), c.bytes(), 3*colBlockRows, need)
	}
	// A later snapshot of the same layout with one more full block keeps the blocks made.
	w := syntheticSpace(4*colBlockRows, dim)
	w.base = 1
	sv.columns(w, 1<<30)
	wait(sv)
	d := sv.cols.Load()
	if d.rows() != 4*colBlockRows || &d.blocks[0][0] != &c.blocks[0][0] {
		t.Fatalf("extended copy: %d rows, first block shared %v", d.rows(), &d.blocks[0][0] == &c.blocks[0][0])
	}
	// A new layout is not served the old copy.
	w2 := syntheticSpace(2*colBlockRows, dim)
	w2.base = 2
	if got := sv.columns(w2, 1<<30); got != nil {
		t.Fatalf("a new layout was given the copy of layout %d", got.base)
	}
	wait(sv)
	if e := sv.cols.Load(); e.base != 2 || e.rows() != 2*colBlockRows {
		t.Fatalf("copy of layout %d, %d rows after a new layout", e.base, e.rows())
	}
}

// BenchmarkColumnScan compares the dense scan with the column copy for sparse queries (14,779 × 768, the
// load test's corpus size; k=100 as a hybrid search's vector list).
func BenchmarkColumnScan(b *testing.B) {
	v := syntheticSpace(14_779, 768)
	cols := (*colBlocks)(nil).extended(v, 1<<30)
	r := rand.New(rand.NewPCG(1, 2))
	for _, nnz := range []int{24, 80} {
		q := sparseQueryOf(r, 768, nnz)
		b.Run(fmt.Sprintf("dense/nnz=%d", nnz), func(b *testing.B) {
			for b.Loop() {
				v.search(q, nil, 100, 1)
			}
		})
		b.Run(fmt.Sprintf("columns/nnz=%d", nnz), func(b *testing.B) {
			for b.Loop() {
				v.searchWith(cols, q, nil, 100, 1)
			}
		})
	}
}

// TestColumnsOnlyForSparse: passes of dense queries make no column copy (a neural embedder's space keeps
// one copy of its vectors); the first sparse query's pass starts it.
func TestColumnsOnlyForSparse(t *testing.T) {
	const dim = 16
	s := &Store{opts: Options{SearchWorkers: 1, VectorColumns: 1 << 30}, turns: make(chan struct{}, 1)}
	v := syntheticSpace(2*colBlockRows, dim)
	sv := &spaceVectors{dim: dim, pending: make(chan *scanReq, 4)}
	run := func(q []float32) {
		r := &scanReq{q: q, k: 3, snap: v, done: make(chan struct{})}
		sv.pending <- r
		s.turns <- struct{}{}
		s.scorePending(sv, r)
		<-r.done
		for sv.colBuilding.Load() {
			time.Sleep(time.Millisecond)
		}
	}
	for i := range 3 {
		run(v.vecs[i*dim : (i+1)*dim])
	}
	if c := sv.cols.Load(); c != nil {
		t.Fatalf("dense queries made a copy of %d rows", c.rows())
	}
	run(sparseQueryOf(rand.New(rand.NewPCG(7, 7)), dim, 2))
	if c := sv.cols.Load(); c.rows() != 2*colBlockRows {
		t.Fatalf("a sparse query's pass made a copy of %d rows, want %d", c.rows(), 2*colBlockRows)
	}
}
