// Package vindex is an approximate nearest-neighbour index for L2-normalised vectors held by the caller in
// one row-major []float32 (the embedded store's vector cache): an inverted file (IVF). Spherical k-means
// splits the rows into about sqrt(N) lists around centroids; a search scores the query against the
// centroids, scans the rows of the nprobe nearest lists with SIMD float32 dot products (vek32) and keeps the
// best k. The scores of the rows it returns are exact; what is approximate is only which rows it looks at.
//
// Why float32 rows rather than int8 codes with a float32 rescoring pass: the rows are already in memory for
// exact search, an int8 copy would add a quarter of their size, and Go has no SIMD int8 dot product, so
// scoring an int8 code costs more than scoring the float32 row with vek32 (BenchmarkDot). The index itself
// is small: the centroids and one int32 per row.
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

// Index is an IVF index over rows [0, Rows()) of a caller's matrix.
type Index struct {
	dim       int
	centroids []float32 // len(lists) × dim, L2-normalised
	lists     [][]int32 // row numbers per list
	codes     [][]byte  // per list, each row's sign bits (codeBytes per row), in the order of lists
	rows      int       // rows [0, rows) are assigned
	trained   int       // rows the centroids were trained on
}

// ListsFor is the number of lists Build uses for n rows: about sqrt(n), so that the centroid pass and one
// list scan cost about the same.
func ListsFor(n int) int {
	return max(1, int(math.Sqrt(float64(n))))
}

// codeBytes is the size of one row's code: one sign bit per dimension.
func codeBytes(dim int) int { return (dim + 7) / 8 }

// encode appends v's sign bits to code.
func encode(code []byte, v []float32) []byte {
	for d := 0; d < len(v); d += 8 {
		var b byte
		for j := 0; j < 8 && d+j < len(v); j++ {
			if v[d+j] > 0 {
				b |= 1 << j
			}
		}
		code = append(code, b)
	}
	return code
}

// Dim is the vectors' dimension.
func (ix *Index) Dim() int { return ix.dim }

// Rows is the number of rows assigned to lists.
func (ix *Index) Rows() int { return ix.rows }

// Lists is the number of lists.
func (ix *Index) Lists() int { return len(ix.lists) }

// Trained is the number of rows the centroids were trained on.
func (ix *Index) Trained() int { return ix.trained }

// Stale reports whether the rows have grown to twice what the centroids were trained on: the lists are then
// about twice as long as planned and the centroids may no longer follow the data, so the index should be
// built again.
func (ix *Index) Stale() bool { return ix.rows >= 2*max(ix.trained, 1) }

// Bytes is the memory the index holds (centroids and row numbers), not counting the rows themselves.
func (ix *Index) Bytes() int64 {
	b := int64(len(ix.centroids)) * 4
	for c, l := range ix.lists {
		b += int64(cap(l))*4 + int64(cap(ix.codes[c])) + 48
	}
	return b
}

// BytesFor estimates Bytes of an index over n rows of dim dimensions, before building it.
func BytesFor(n, dim int) int64 {
	lists := ListsFor(n)
	return int64(lists)*int64(dim)*4 + int64(n)*int64(4+codeBytes(dim))*5/4 + int64(lists)*48
}

// kmeansRounds is how many Lloyd iterations training runs: enough for the lists to settle on clustered data;
// more moves few rows.
const kmeansRounds = 8

// sampleFactor is how many training rows per list k-means uses at most.
const sampleFactor = 48

// Build trains centroids on rows [0, n) of vecs (seed fixes the sample and the initial centroids) and
// assigns every row to its nearest list. It stops with ctx's error between k-means rounds and between
// batches of assigned rows, so that a store closing does not wait for a long build.
func Build(ctx context.Context, vecs []float32, dim, n int, seed uint64) (*Index, error) {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	k := min(ListsFor(n), n)
	sample := rng.Perm(n)
	if len(sample) > k*sampleFactor {
		sample = sample[:k*sampleFactor]
	}
	cents := make([]float32, k*dim)
	for c := range k {
		copy(cents[c*dim:(c+1)*dim], vecs[sample[c]*dim:(sample[c]+1)*dim])
	}
	assign := make([]int32, len(sample))
	for range kmeansRounds {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		parallel(len(sample), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				assign[i] = nearest(cents, dim, vecs[sample[i]*dim:(sample[i]+1)*dim])
			}
		})
		sums := make([]float32, k*dim)
		counts := make([]int, k)
		for i, r := range sample {
			c := int(assign[i])
			vek32.Add_Inplace(sums[c*dim:(c+1)*dim], vecs[r*dim:(r+1)*dim])
			counts[c]++
		}
		for c := range k {
			cent := cents[c*dim : (c+1)*dim]
			if counts[c] == 0 { // an empty list takes a random training row as its new centre
				r := sample[rng.IntN(len(sample))]
				copy(cent, vecs[r*dim:(r+1)*dim])
				continue
			}
			copy(cent, sums[c*dim:(c+1)*dim])
			normalize(cent)
		}
	}
	ix := &Index{dim: dim, centroids: cents, lists: make([][]int32, k), codes: make([][]byte, k), trained: n}
	for ix.rows < n {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ix = ix.Add(vecs, min(n, ix.rows+buildBatch))
	}
	return ix, nil
}

// buildBatch is how many rows Build assigns between checks of its context.
const buildBatch = 16384

// Add returns an index with rows [ix.Rows(), n) of vecs assigned to their nearest lists. ix stays valid.
func (ix *Index) Add(vecs []float32, n int) *Index {
	if n <= ix.rows {
		return ix
	}
	assign := make([]int32, n-ix.rows)
	dim := ix.dim
	parallel(len(assign), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			r := ix.rows + i
			assign[i] = nearest(ix.centroids, dim, vecs[r*dim:(r+1)*dim])
		}
	})
	return ix.place(vecs, n, func(i int) int32 { return assign[i-ix.rows] })
}

// place returns ix with rows [ix.rows, n) of vecs appended to the lists list(row) names.
func (ix *Index) place(vecs []float32, n int, list func(row int) int32) *Index {
	next := &Index{dim: ix.dim, centroids: ix.centroids, lists: make([][]int32, len(ix.lists)),
		codes: make([][]byte, len(ix.lists)), rows: n, trained: ix.trained}
	copy(next.lists, ix.lists)
	copy(next.codes, ix.codes)
	dim := ix.dim
	for r := ix.rows; r < n; r++ {
		c := list(r)
		next.lists[c] = append(next.lists[c], int32(r))
		next.codes[c] = encode(next.codes[c], vecs[r*dim:(r+1)*dim])
	}
	return next
}

// Remap returns an index over a compacted matrix: row r of the old matrix is row newRow[r] of the new one,
// or gone when newRow[r] < 0; the new matrix has n rows. Rows of the old matrix at or past len(newRow) are
// not in the index. The lists are written anew, so ix stays valid for its readers.
func (ix *Index) Remap(newRow []int32, n int) *Index {
	next := &Index{dim: ix.dim, centroids: ix.centroids, lists: make([][]int32, len(ix.lists)),
		codes: make([][]byte, len(ix.lists)), trained: ix.trained}
	nb := codeBytes(ix.dim)
	for c, l := range ix.lists {
		out := make([]int32, 0, len(l))
		codes := make([]byte, 0, len(l)*nb)
		for j, r := range l {
			if int(r) < len(newRow) && newRow[r] >= 0 {
				out = append(out, newRow[r])
				codes = append(codes, ix.codes[c][j*nb:(j+1)*nb]...)
			}
		}
		next.lists[c], next.codes[c] = out, codes
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
// with q. vecs is the matrix the index was built over (it may have grown since: rows past Rows() are not
// looked at). accept, when not nil, says which rows may be returned (removed rows, filters). ids gives each
// row's tie-break key: of two rows with the same score the one with the lower key ranks first, as in the
// store's exact search.
//
// The rows of the probed lists are first ranked by their sign codes (the query's components summed over the
// row's positive dimensions, through one 256-entry table per code byte: a row costs one lookup per 8
// dimensions, read in list order), and the best shortlist of them are scored exactly with their float32
// rows. shortlist ≤ k means ShortlistFor(k).
func (ix *Index) Search(q, vecs []float32, ids []int64, k, nprobe, shortlist int, accept func(row int32) bool) []Hit {
	if k <= 0 || len(ix.lists) == 0 {
		return nil
	}
	dim := ix.dim
	if shortlist < k {
		shortlist = ShortlistFor(k)
	}
	nprobe = min(max(nprobe, 1), len(ix.lists))
	probe := make(hitHeap, 0, nprobe)
	for c := range ix.lists {
		x := Hit{Row: int32(c), Score: vek32.Dot(q, ix.centroids[c*dim:(c+1)*dim])}
		if len(probe) < nprobe {
			heap.Push(&probe, x)
		} else if x.Score > probe[0].Score {
			probe[0] = x
			heap.Fix(&probe, 0)
		}
	}
	lut := queryTables(q)
	short := make(hitHeap, 0, shortlist)
	nb := codeBytes(dim)
	for _, p := range probe {
		codes := ix.codes[p.Row]
		for j, r := range ix.lists[p.Row] {
			code := codes[j*nb : (j+1)*nb]
			t := lut[:len(code)]
			var s float32
			for b, c := range code {
				s += t[b][c]
			}
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
	best := topK{ids: ids, h: make([]Hit, 0, k)}
	for _, c := range short {
		r := c.Row
		best.offer(Hit{Row: r, Score: vek32.Dot(q, vecs[int(r)*dim:(int(r)+1)*dim])}, k)
	}
	return best.sorted()
}

// ShortlistFor is the default number of rows Search rescores exactly for a top k: 400 up to k = 20 (what
// recall@10 needs on the hard corpus), 20 per row beyond. BenchmarkSearch at k = 100 (a hybrid search's
// list): recall@100 1.0000 on spread 2 at 1,000 to 4,000 rows; on spread 4 0.7443 at 1,000, 0.7640 at
// 2,000 and 0.7679 at 4,000 — past 20·k the probed lists, not the shortlist, bound recall.
func ShortlistFor(k int) int { return max(20*k, 400) }

// queryTables returns, for each byte of a code, the sum of q's components over the bits set in each of the
// 256 values the byte can take.
func queryTables(q []float32) [][256]float32 {
	t := make([][256]float32, codeBytes(len(q)))
	for b := range t {
		tb := &t[b]
		for v := 1; v < 256; v++ {
			low := v & -v
			d := b*8 + bits.TrailingZeros(uint(low))
			var x float32
			if d < len(q) {
				x = q[d]
			}
			tb[v] = tb[v&^low] + x
		}
	}
	return t
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

// parallel runs f over [0, n) split across the cores.
func parallel(n int, f func(lo, hi int)) {
	w := min(runtime.GOMAXPROCS(0), max(1, n/256))
	var wg sync.WaitGroup
	for i := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(n*i/w, n*(i+1)/w)
		}()
	}
	wg.Wait()
}

// hitHeap keeps the lowest score on top.
type hitHeap []Hit

func (h hitHeap) Len() int           { return len(h) }
func (h hitHeap) Less(i, j int) bool { return h[i].Score < h[j].Score }
func (h hitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)        { *h = append(*h, x.(Hit)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

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
