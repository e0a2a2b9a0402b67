// Package vindex is an approximate nearest-neighbour index for L2-normalised vectors: an inverted file
// (IVF) with one-bit codes. Spherical k-means splits the rows into about sqrt(N) lists around centroids;
// each list keeps its rows' numbers and their sign codes (one bit per dimension). A search scores the query
// against the centroids, ranks the rows of the nprobe nearest lists by their codes, and scores the best
// shortlist of them exactly with their float32 rows, which the caller keeps (a Matrix: in memory, or in a
// file read row by row). The scores of the rows it returns are exact; what is approximate is only which
// rows it looks at.
//
// A code is ranked by the query's components summed over the row's positive dimensions. The query is
// quantised to 4 bits per dimension (15 steps between its lowest and highest component), split into four
// bit planes, and the sum is Σ_p 2^p · popcount(code AND plane_p), times the step, plus the lowest
// component times the row's count of set bits: 4 AND and popcount operations per 64 dimensions, done by an
// AVX-512 kernel (VPOPCNTQ) where the CPU has one (planes_amd64.s), by a Go loop elsewhere.
//
// An Index is immutable once made. Add and Remap return a new Index that shares the list arrays of the old
// one: rows are only appended after the end of a list (where no reader of the old Index looks), the same
// copy-on-write scheme as the store's snapshots. Rows that were removed stay in their lists until Remap;
// a search skips them through its accept function.
package vindex

import (
	"container/heap"
	"context"
	"math"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"

	"github.com/viterin/vek/vek32"
)

// Matrix is read access to the float32 rows an index is built over and rescores from (row-major, Dim
// values a row, L2-normalised).
type Matrix interface {
	// Rows returns rows [lo, hi) as one row-major slice: memory it holds (which the caller must not
	// change) or buf, which has room for hi-lo rows, filled.
	Rows(lo, hi int, buf []float32) ([]float32, error)
}

// Mem is a Matrix held in memory.
type Mem struct {
	Vecs []float32
	Dim  int
}

// Rows returns a sub-slice of m.Vecs.
func (m Mem) Rows(lo, hi int, _ []float32) ([]float32, error) {
	return m.Vecs[lo*m.Dim : hi*m.Dim], nil
}

// Index is an IVF index over rows [0, Rows()) of a caller's matrix.
type Index struct {
	dim       int
	nw        int       // code words a row: the dimensions in 64-bit words, rounded up to a multiple of 4
	centroids []float32 // len(lists) × dim, L2-normalised
	lists     [][]int32 // row numbers per list
	codes     [][]uint64
	pcs       [][]uint16 // per list, each row's count of set code bits
	rows      int        // rows [0, rows) are assigned
	trained   int        // rows the centroids were trained on
	added     int        // rows assigned since training (new rows, replaced or not)
}

// ListsFor is the number of lists Build uses for n rows: about sqrt(n), so that the centroid pass and one
// list scan cost about the same.
func ListsFor(n int) int {
	return max(1, int(math.Sqrt(float64(n))))
}

// codeWords is the size of one row's code in 64-bit words: one bit per dimension, padded with zero words to
// a multiple of 4 (256 bits) for the kernel.
func codeWords(dim int) int { return (dim + 255) / 256 * 4 }

// encode appends v's sign bits (nw words) to code and returns the count of set bits.
func encode(code []uint64, v []float32, nw int) ([]uint64, uint16) {
	pc := 0
	for w := range nw {
		var x uint64
		for j := 0; j < 64 && w*64+j < len(v); j++ {
			if v[w*64+j] > 0 {
				x |= 1 << j
			}
		}
		pc += bits.OnesCount64(x)
		code = append(code, x)
	}
	return code, uint16(pc)
}

// Dim is the vectors' dimension.
func (ix *Index) Dim() int { return ix.dim }

// Rows is the number of rows assigned to lists.
func (ix *Index) Rows() int { return ix.rows }

// Lists is the number of lists.
func (ix *Index) Lists() int { return len(ix.lists) }

// Trained is the number of rows the centroids were trained on.
func (ix *Index) Trained() int { return ix.trained }

// Stale reports whether as many rows were added since training as the centroids were trained on, whether
// the rows grew (the lists are then about twice as long as planned) or replaced others (documents
// committed again): the centroids may no longer follow the data, so the index should be built again.
func (ix *Index) Stale() bool { return ix.added >= max(ix.trained, 1) }

// Bytes is the memory the index holds (centroids, row numbers, codes), not counting the rows themselves.
func (ix *Index) Bytes() int64 {
	b := int64(len(ix.centroids)) * 4
	for c, l := range ix.lists {
		b += int64(cap(l))*4 + int64(cap(ix.codes[c]))*8 + int64(cap(ix.pcs[c]))*2 + 72
	}
	return b
}

// BytesFor estimates Bytes of an index over n rows of dim dimensions, before building it.
func BytesFor(n, dim int) int64 {
	lists := ListsFor(n)
	return int64(lists)*int64(dim)*4 + int64(n)*int64(4+2+8*codeWords(dim))*5/4 + int64(lists)*72
}

// kmeansRounds is how many Lloyd iterations training runs: enough for the lists to settle on clustered data;
// more moves few rows.
const kmeansRounds = 8

// sampleFactor is how many training rows per list k-means uses at most.
const sampleFactor = 48

// Build trains centroids on rows [0, n) of src (seed fixes the sample and the initial centroids) and
// assigns every row to its nearest list. It stops with ctx's error between k-means rounds and between
// batches of assigned rows, so that a store closing does not wait for a long build. The training sample is
// read from src once per round, in row order, so a file-backed src is not held in memory.
func Build(ctx context.Context, src Matrix, dim, n int, seed uint64) (*Index, error) {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	k := min(ListsFor(n), n)
	sample := rng.Perm(n)
	if len(sample) > k*sampleFactor {
		sample = sample[:k*sampleFactor]
	}
	cents := make([]float32, k*dim)
	buf := make([]float32, dim)
	for c := range k {
		row, err := src.Rows(sample[c], sample[c]+1, buf)
		if err != nil {
			return nil, err
		}
		copy(cents[c*dim:(c+1)*dim], row)
	}
	order := append([]int(nil), sample...) // the sample in row order, for reading
	sort.Ints(order)
	for range kmeansRounds {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Each worker assigns its part of the sample and sums its rows per list.
		w := workers(len(order))
		sums, counts, errs := make([][]float32, w), make([][]int, w), make([]error, w)
		parts(len(order), w, func(p, lo, hi int) {
			sums[p], counts[p] = make([]float32, k*dim), make([]int, k)
			errs[p] = ForRows(src, order[lo:hi], dim, func(_ int, row []float32) {
				c := int(nearest(cents, dim, row))
				vek32.Add_Inplace(sums[p][c*dim:(c+1)*dim], row)
				counts[p][c]++
			})
		})
		for p := range w {
			if errs[p] != nil {
				return nil, errs[p]
			}
			if p > 0 {
				vek32.Add_Inplace(sums[0], sums[p])
				for c := range k {
					counts[0][c] += counts[p][c]
				}
			}
		}
		for c := range k {
			cent := cents[c*dim : (c+1)*dim]
			if counts[0][c] == 0 { // an empty list takes a random training row as its new centre
				r := order[rng.IntN(len(order))]
				row, err := src.Rows(r, r+1, buf)
				if err != nil {
					return nil, err
				}
				copy(cent, row)
				continue
			}
			copy(cent, sums[0][c*dim:(c+1)*dim])
			normalize(cent)
		}
	}
	ix := &Index{dim: dim, nw: codeWords(dim), centroids: cents, lists: make([][]int32, k), codes: make([][]uint64, k),
		pcs: make([][]uint16, k), trained: n}
	for ix.rows < n {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var err error
		if ix, err = ix.Add(src, min(n, ix.rows+buildBatch)); err != nil {
			return nil, err
		}
	}
	ix.added = 0
	return ix, nil
}

// buildBatch is how many rows Build assigns between checks of its context.
const buildBatch = 16384

// readBlock is how many consecutive rows are read from a Matrix at once.
const readBlock = 256

// ForRows calls f(i, row) for each row rows[i] of src in turn (rows ascending); runs of consecutive rows
// are read together, up to 256 at a time.
func ForRows(src Matrix, rows []int, dim int, f func(i int, row []float32)) error {
	buf := make([]float32, min(len(rows), readBlock)*dim)
	for i := 0; i < len(rows); {
		j := i + 1
		for j < len(rows) && j-i < readBlock && rows[j] == rows[j-1]+1 {
			j++
		}
		block, err := src.Rows(rows[i], rows[j-1]+1, buf)
		if err != nil {
			return err
		}
		for x := i; x < j; x++ {
			f(x, block[(x-i)*dim:(x-i+1)*dim])
		}
		i = j
	}
	return nil
}

// Add returns an index with rows [ix.Rows(), n) of src assigned to their nearest lists. ix stays valid.
func (ix *Index) Add(src Matrix, n int) (*Index, error) {
	if n <= ix.rows {
		return ix, nil
	}
	rows := make([]int, n-ix.rows)
	for i := range rows {
		rows[i] = ix.rows + i
	}
	assign, codes, pcs, err := ix.assign(src, rows)
	if err != nil {
		return nil, err
	}
	return ix.place(n, func(r int) (int32, []uint64, uint16) {
		i := r - ix.rows
		return assign[i], codes[i*ix.nw : (i+1)*ix.nw], pcs[i]
	}), nil
}

// assign returns the nearest list, code and set-bit count of each of rows (ascending), across the cores.
func (ix *Index) assign(src Matrix, rows []int) ([]int32, []uint64, []uint16, error) {
	assign := make([]int32, len(rows))
	codes := make([]uint64, len(rows)*ix.nw)
	pcs := make([]uint16, len(rows))
	w := workers(len(rows))
	errs := make([]error, w)
	parts(len(rows), w, func(p, lo, hi int) {
		errs[p] = ForRows(src, rows[lo:hi], ix.dim, func(i int, row []float32) {
			i += lo
			assign[i] = nearest(ix.centroids, ix.dim, row)
			_, pcs[i] = encode(codes[i*ix.nw:i*ix.nw:(i+1)*ix.nw], row, ix.nw)
		})
	})
	for _, err := range errs {
		if err != nil {
			return nil, nil, nil, err
		}
	}
	return assign, codes, pcs, nil
}

// place returns ix with rows [ix.rows, n) appended to the lists entry(row) names, with their codes.
func (ix *Index) place(n int, entry func(row int) (int32, []uint64, uint16)) *Index {
	next := ix.derive()
	copy(next.lists, ix.lists)
	copy(next.codes, ix.codes)
	copy(next.pcs, ix.pcs)
	for r := ix.rows; r < n; r++ {
		c, code, pc := entry(r)
		next.lists[c] = append(next.lists[c], int32(r))
		next.codes[c] = append(next.codes[c], code...)
		next.pcs[c] = append(next.pcs[c], pc)
	}
	next.rows = max(n, ix.rows)
	next.added += max(0, n-ix.rows)
	return next
}

// derive is an index with ix's centroids and empty lists.
func (ix *Index) derive() *Index {
	k := len(ix.lists)
	return &Index{dim: ix.dim, nw: ix.nw, centroids: ix.centroids, lists: make([][]int32, k), codes: make([][]uint64, k),
		pcs: make([][]uint16, k), rows: ix.rows, trained: ix.trained, added: ix.added}
}

// Remap returns an index over a compacted matrix: row r of the old matrix is row newRow[r] of the new one,
// or gone when newRow[r] < 0; the new matrix has n rows. Rows of the old matrix at or past len(newRow) are
// not in the index. The lists are written anew, so ix stays valid for its readers.
func (ix *Index) Remap(newRow []int32, n int) *Index {
	next := ix.derive()
	nw := ix.nw
	for c, l := range ix.lists {
		out := make([]int32, 0, len(l))
		codes := make([]uint64, 0, len(l)*nw)
		pcs := make([]uint16, 0, len(l))
		for j, r := range l {
			if int(r) < len(newRow) && newRow[r] >= 0 {
				out = append(out, newRow[r])
				codes = append(codes, ix.codes[c][j*nw:(j+1)*nw]...)
				pcs = append(pcs, ix.pcs[c][j])
			}
		}
		next.lists[c], next.codes[c], next.pcs[c] = out, codes, pcs
	}
	next.rows = n
	return next
}

// Hit is one row found by Search.
type Hit struct {
	Row   int32
	Score float32
}

// Search returns up to k rows among the nprobe lists nearest to q, best first, scored by their dot product
// with q. src is the matrix the index was built over (it may have grown since: rows past Rows() are not
// looked at). accept, when not nil, says which rows may be returned (removed rows, filters). ids gives each
// row's tie-break key: of two rows with the same score the one with the lower key ranks first, as in the
// store's exact search.
//
// The rows of the probed lists are first ranked by their codes against the query's bit planes, and the
// best shortlist of them are scored exactly with their float32 rows from src. shortlist ≤ k means
// ShortlistFor(k).
func (ix *Index) Search(q []float32, src Matrix, ids []int64, k, nprobe, shortlist int, accept func(row int32) bool) ([]Hit, error) {
	if k <= 0 || len(ix.lists) == 0 {
		return nil, nil
	}
	if shortlist < k {
		shortlist = ShortlistFor(k)
	}
	short := make(hitHeap, 0, shortlist)
	qp := newQueryPlanes(q, ix.nw)
	var sums []uint32
	for _, c := range ix.probes(q, nprobe) {
		list := ix.lists[c]
		if cap(sums) < len(list) {
			sums = make([]uint32, len(list)+len(list)/4)
		}
		sums = sums[:len(list)]
		planeSums(ix.codes[c], ix.nw, qp.planes, sums)
		pcs := ix.pcs[c][:len(list)]
		for j, r := range list {
			s := qp.step*float32(sums[j]) + qp.lo*float32(pcs[j])
			// accept is asked only of the rows that would enter the shortlist: the same rows enter it as
			// when every row is asked first, and most rows are below its lowest score.
			full := len(short) == shortlist
			if full && s <= short[0].Score || accept != nil && !accept(r) {
				continue
			}
			if full {
				short.replaceRoot(Hit{Row: r, Score: s})
			} else {
				short.push(Hit{Row: r, Score: s})
			}
		}
	}
	// Rescore in row order: a file-backed matrix then reads forward.
	sort.Slice(short, func(a, b int) bool { return short[a].Row < short[b].Row })
	best := topK{ids: ids, h: make([]Hit, 0, k)}
	buf := make([]float32, ix.dim)
	for _, c := range short {
		row, err := src.Rows(int(c.Row), int(c.Row)+1, buf)
		if err != nil {
			return nil, err
		}
		best.offer(Hit{Row: c.Row, Score: vek32.Dot(q, row)}, k)
	}
	return best.sorted(), nil
}

// probes returns the nprobe lists whose centroids are nearest to q.
func (ix *Index) probes(q []float32, nprobe int) []int32 {
	dim := ix.dim
	nprobe = min(max(nprobe, 1), len(ix.lists))
	probe := make(hitHeap, 0, nprobe)
	for c := range ix.lists {
		x := Hit{Row: int32(c), Score: vek32.Dot(q, ix.centroids[c*dim:(c+1)*dim])}
		if len(probe) < nprobe {
			probe.push(x)
		} else if x.Score > probe[0].Score {
			probe.replaceRoot(x)
		}
	}
	out := make([]int32, len(probe))
	for i, p := range probe {
		out[i] = p.Row
	}
	return out
}

// ShortlistFor is the default number of rows Search rescores exactly for a top k: 400 up to k = 20 (what
// recall@10 needs on the hard corpus), 20 per row beyond. BenchmarkSearch at k = 100 (a hybrid search's
// list): recall@100 1.0000 on spread 2 at 1,000 to 4,000 rows; on spread 4 0.7443 at 1,000, 0.7640 at
// 2,000 and 0.7679 at 4,000 — past 20·k the probed lists, not the shortlist, bound recall.
func ShortlistFor(k int) int { return max(20*k, 400) }

// queryPlanes is a query quantised for ranking codes: component d is lo + step·u_d with u_d in [0, 15],
// and planes holds bit p of every u_d (nw words per plane).
type queryPlanes struct {
	lo, step float32
	planes   []uint64
}

func newQueryPlanes(q []float32, nw int) queryPlanes {
	lo, hi := vek32.Min(q), vek32.Max(q)
	step := (hi - lo) / 15
	if !(step > 0) {
		step = 1 // a constant query: every u_d is 0
	}
	qp := queryPlanes{lo: lo, step: step, planes: make([]uint64, 4*nw)}
	for d, x := range q {
		u := min(15, max(0, int(math.Round(float64((x-lo)/step)))))
		for p := range 4 {
			if u>>p&1 != 0 {
				qp.planes[p*nw+d/64] |= 1 << (d % 64)
			}
		}
	}
	return qp
}

// nearest returns the centroid with the highest dot product with v.
func nearest(cents []float32, dim int, v []float32) int32 {
	best, bestScore := int32(0), float32(math.Inf(-1))
	for c := 0; c*dim < len(cents); c++ {
		if s := vek32.Dot(v, cents[c*dim:(c+1)*dim]); s > bestScore {
			best, bestScore = int32(c), s
		}
	}
	return best
}

func normalize(v []float32) {
	if n := vek32.Norm(v); n > 0 {
		vek32.MulNumber_Inplace(v, 1/n)
	}
}

// workers is how many goroutines share n rows of work: one per core, at least 256 rows each.
func workers(n int) int { return min(runtime.GOMAXPROCS(0), max(1, n/256)) }

// parts runs f(p, lo, hi) for w parts of [0, n) at once.
func parts(n, w int, f func(p, lo, hi int)) {
	var wg sync.WaitGroup
	for p := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(p, n*p/w, n*(p+1)/w)
		}()
	}
	wg.Wait()
}

// hitHeap keeps the lowest score on top.
type hitHeap []Hit

// push and replaceRoot are heap.Push and (setting the root then) heap.Fix(h, 0), step for step, without
// boxing each Hit in an interface value.
func (h *hitHeap) push(x Hit) {
	*h = append(*h, x)
	s := *h
	for j := len(s) - 1; j > 0; {
		i := (j - 1) / 2
		if !(s[j].Score < s[i].Score) {
			break
		}
		s[i], s[j] = s[j], s[i]
		j = i
	}
}

func (h hitHeap) replaceRoot(x Hit) {
	h[0] = x
	for i := 0; ; {
		j := 2*i + 1
		if j >= len(h) {
			return
		}
		if j2 := j + 1; j2 < len(h) && h[j2].Score < h[j].Score {
			j = j2
		}
		if !(h[j].Score < h[i].Score) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

// topK keeps the worst of the best k on top, ties broken by ids.
type topK struct {
	ids []int64
	h   []Hit
}

func (t *topK) worse(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	if t.ids == nil {
		return a.Row > b.Row
	}
	return t.ids[a.Row] > t.ids[b.Row]
}

// offer keeps x when it is among the best k seen.
func (t *topK) offer(x Hit, k int) {
	if len(t.h) < k {
		heap.Push(t, x)
	} else if t.worse(t.h[0], x) {
		t.h[0] = x
		heap.Fix(t, 0)
	}
}

// sorted returns the kept hits, best first.
func (t *topK) sorted() []Hit {
	out := t.h
	sort.Slice(out, func(a, b int) bool { return t.worse(out[b], out[a]) })
	return out
}

func (t *topK) Len() int           { return len(t.h) }
func (t *topK) Less(i, j int) bool { return t.worse(t.h[i], t.h[j]) }
func (t *topK) Swap(i, j int)      { t.h[i], t.h[j] = t.h[j], t.h[i] }
func (t *topK) Push(x any)         { t.h = append(t.h, x.(Hit)) }
func (t *topK) Pop() any {
	x := t.h[len(t.h)-1]
	t.h = t.h[:len(t.h)-1]
	return x
}

// ProbesFor is the default number of lists a search scans for an index of lists lists: an eighth of them,
// at least 8 (BenchmarkSearch: recall@10 against exact search on clustered data).
func ProbesFor(lists int) int {
	return min(lists, max(8, lists/8))
}

// Added is the number of rows assigned since training.
func (ix *Index) Added() int { return ix.added }
