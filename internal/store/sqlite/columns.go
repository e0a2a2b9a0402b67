package sqlite

import (
	"github.com/viterin/vek/vek32"
)

// A query vector with few non-zero components — the hash embedder's (the offline default) has ~25 of 768
// for a Korean question, ~80 for an English one: one bucket per word, bigram and character n-gram — needs
// only those components of each row. Read from the row-major vectors they cost more than the whole dot
// product (a cache line per component); read from the same vectors stored column by column a top 100 of
// 14,779 × 768 rows costs 0.25–0.35 ms for 24 components against 1.4–2.1 ms for the dense scan
// (`go test ./internal/store/sqlite -run '^$' -bench ColumnScan`). So the store keeps, for a space searched exactly
// in memory that sparse queries reach, a second copy of its vectors in blocks of colBlockRows rows, each
// block column-major, within Options.VectorColumns bytes. A block is made once its rows are all there and
// never changes: rows are only appended to a layout (removed rows stay, marked in the snapshot's docs);
// a new layout (a full load, a compaction) starts a new copy. The copy is made in the background, from
// the first sparse query on; until a block exists its rows are scored by the dense scan.
//
// Scores stay exact: a row whose column sum could enter the top k (it is at least the k-th best minus
// colMargin, far above float32's rounding of such a sum) is scored again with the dense dot product,
// and that is the score kept — the same scores, ties and results as the dense scan.

// colBlockRows is the rows of one column-major block.
const colBlockRows = 1024

// colMargin is how far below the k-th best score a row's column sum may be and still be scored exactly.
const colMargin = 1e-4

// maxSparseShare: a query is scored by columns when at most this share of its components is non-zero
// (at 80 of 768 the columns cost a quarter of the dense scan, at 160 half).
const maxSparseShare = 8

// colBlocks is a column-major copy of the first len(blocks)·colBlockRows rows of one row layout.
type colBlocks struct {
	base   uint64 // the layout (vecSnapshot.base)
	dim    int
	blocks [][]float32 // block b holds rows [b·colBlockRows, (b+1)·colBlockRows); component j of its rows at [j·colBlockRows, (j+1)·colBlockRows)
}

// rows is how many rows the copy covers.
func (c *colBlocks) rows() int {
	if c == nil {
		return 0
	}
	return len(c.blocks) * colBlockRows
}

// colBytes is the memory of a copy of all of v's full blocks.
func colBytes(v *vecSnapshot) int64 {
	return int64(len(v.ids)/colBlockRows) * colBlockRows * int64(v.dim) * 4
}

// anySparse reports whether a query of reqs is sparse enough to be scored by columns.
func anySparse(reqs []*scanReq) bool {
	for _, r := range reqs {
		if _, ok := sparseOf(r.q); ok {
			return true
		}
	}
	return false
}

// bytes is the copy's memory.
func (c *colBlocks) bytes() int64 { return int64(c.rows()) * int64(c.dim) * 4 }

// sparseQuery is a query's non-zero components.
type sparseQuery struct {
	idx []int
	val []float32
}

// sparseOf returns q's non-zero components when they are few enough to score by columns.
func sparseOf(q []float32) (sparseQuery, bool) {
	limit := len(q) / maxSparseShare
	var s sparseQuery
	for j, x := range q {
		if x != 0 {
			if len(s.idx) == limit {
				return sparseQuery{}, false
			}
			s.idx, s.val = append(s.idx, j), append(s.val, x)
		}
	}
	return s, len(s.idx) > 0
}

// extended returns a copy of the full blocks of v's rows, sharing c's blocks when c is of v's layout,
// or nil when v's vectors are not in memory or the copy would take more than budget bytes.
func (c *colBlocks) extended(v *vecSnapshot, budget int64) *colBlocks {
	if !v.inMemory() || v.vecs == nil {
		return nil
	}
	full := len(v.ids) / colBlockRows
	if colBytes(v) > budget {
		return nil
	}
	out := &colBlocks{base: v.base, dim: v.dim}
	if c != nil && c.base == v.base && c.dim == v.dim {
		out.blocks = append(out.blocks, c.blocks[:min(len(c.blocks), full)]...)
	}
	for b := len(out.blocks); b < full; b++ {
		blk := make([]float32, colBlockRows*v.dim)
		for t := range colBlockRows {
			row := v.vecs[(b*colBlockRows+t)*v.dim : (b*colBlockRows+t+1)*v.dim]
			for j, x := range row {
				blk[j*colBlockRows+t] = x
			}
		}
		out.blocks = append(out.blocks, blk)
	}
	return out
}

// columnSums sets acc[t] to the dot product of q with row b·colBlockRows+t, summed over q's non-zero
// components; tmp is scratch of colBlockRows.
func (c *colBlocks) columnSums(b int, q sparseQuery, acc, tmp []float32) {
	blk := c.blocks[b]
	clear(acc)
	for k, j := range q.idx {
		vek32.MulNumber_Into(tmp, blk[j*colBlockRows:(j+1)*colBlockRows], q.val[k])
		vek32.Add_Inplace(acc, tmp)
	}
}

// columns returns the column copy of sv that is of v's layout (nil if none), and starts making the
// blocks it lacks in the background when budget allows and no other build runs. Only a sparse query may
// call it: a space whose queries are dense (a neural embedder's) gets no copy.
func (sv *spaceVectors) columns(v *vecSnapshot, budget int64) *colBlocks {
	c := sv.cols.Load()
	if c != nil && c.base != v.base {
		c = nil
	}
	if budget > 0 && v.vecs != nil && c.rows() < len(v.ids)/colBlockRows*colBlockRows &&
		colBytes(v) <= budget && sv.colBuilding.CompareAndSwap(false, true) {
		go func() {
			defer sv.colBuilding.Store(false)
			if next := sv.cols.Load().extended(v, budget); next != nil {
				if cur := sv.cols.Load(); cur == nil || next.base > cur.base || next.base == cur.base && next.rows() > cur.rows() {
					sv.cols.Store(next)
				}
			}
		}()
	}
	return c
}

// sparseCovered reports whether q is sparse and the column copy of v's layout covers all of v's full
// blocks (the rows after them are few: fewer than colBlockRows). It starts the copy when q is sparse.
func (sv *spaceVectors) sparseCovered(v *vecSnapshot, q []float32, budget int64) bool {
	if budget <= 0 || v.vecs == nil {
		return false
	}
	if _, ok := sparseOf(q); !ok {
		return false
	}
	return sv.columns(v, budget).rows() >= len(v.ids)/colBlockRows*colBlockRows
}
