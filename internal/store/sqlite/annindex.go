package sqlite

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/vindex"
)

// The approximate vector index (internal/vindex, an IVF index) of a space's snapshot. A space of fewer
// than Options.VectorIndexMin live vectors is searched exactly. Past it, a background goroutine builds the
// index over the snapshot it started from and installs it on the newest snapshot (adding the rows
// appended meanwhile); from then on every refresh adds its new rows to their nearest lists as they are
// loaded, compaction renumbers them, and once the rows have doubled since training the index is built
// again, in the background, while the old one keeps serving. The index is written next to the database
// (ragd.db.vindex-<space>) after each build, as rows are added, and when the store closes (vecpersist.go);
// a full load restores it from there, and a file that is unreadable, of another format version or
// dimension, or whose entries do not match the vectors, is ignored and the index built again.
//
// Filters and permissions are applied inside the search: a row is only taken when its document is in the
// allowed set. When the allowed set holds less than annMinSelectivity of the rows (estimated from a
// sample of rows, see selectivity), the search is exact over the allowed rows instead — the lists would
// hold too few of them — and otherwise the index scans 1/selectivity times as many lists.

// annMinSelectivity is the estimated fraction of rows a filter must keep for a search to use the index.
const annMinSelectivity = 0.1

// selectivitySample is how many rows the selectivity estimate looks at.
const selectivitySample = 1024

// annSeed fixes k-means's sample, so that the same vectors give the same index.
const annSeed = 1

// selectivity estimates the fraction of v's live rows whose document is in allowed from evenly spaced rows.
func (v *vecSnapshot) selectivity(allowed docSet) float64 {
	if allowed == nil {
		return 1
	}
	n := len(v.ids)
	step := max(1, n/selectivitySample)
	live, in := 0, 0
	for i := 0; i < n; i += step {
		if d := v.docs[i]; d >= 0 {
			live++
			if allowed.has(d) {
				in++
			}
		}
	}
	if live == 0 {
		return 0
	}
	return float64(in) / float64(live)
}

// annSearch answers a query from v's index, or reports false when it should be exact (no index, a
// selective filter, or fewer than k allowed rows in the probed lists). Its error is a failure to read the
// shortlist's vectors from the space's vector file.
func (v *vecSnapshot) annSearch(q []float32, allowed docSet, k int) ([]rag.Candidate, bool, error) {
	if v.ann == nil {
		return nil, false, nil
	}
	sel := v.selectivity(allowed)
	if sel < annMinSelectivity {
		return nil, false, nil
	}
	probes := min(v.ann.Lists(), int(float64(vindex.ProbesFor(v.ann.Lists()))/sel+0.5))
	var accept func(r int32) bool
	if allowed != nil || v.live < len(v.ids) {
		// Without a filter or a removed row every row is accepted: the lookup of each shortlisted row's
		// document (a cache miss in an array of 8 bytes a row) was a fifth of a search at 1,000,000 rows.
		accept = func(r int32) bool {
			d := v.docs[r]
			return d >= 0 && (allowed == nil || allowed.has(d))
		}
	}
	hits, err := v.ann.Search(q, v.rows(), v.ids, k, probes, 0, accept)
	if err != nil {
		return nil, false, err
	}
	if len(hits) < k {
		return nil, false, nil // the probed lists held fewer than k allowed rows: the exact scan finds all there are
	}
	out := make([]rag.Candidate, len(hits))
	for i, h := range hits {
		out[i] = rag.Candidate{ChunkID: v.ids[h.Row], Score: float64(h.Score), Rank: i + 1}
	}
	return out, true, nil
}

// spaceFile is the path of one of a space's files beside the database: kind is "vindex" (the index),
// "vectors" (the vector file) or "vlock" (the lock file).
func (c *vectorCache) spaceFile(kind, key string) string {
	safe := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '_'
	}, key)
	return c.s.path + "." + kind + "-" + safe
}

// indexFile is where the index of a space is kept.
func (c *vectorCache) indexFile(key string) string { return c.spaceFile("vindex", key) }

// vecFilePath is where the vectors of a space are kept when they are not in memory.
func (c *vectorCache) vecFilePath(key string) string { return c.spaceFile("vectors", key) }

// wantsIndex reports whether a snapshot of n rows should have an index within the memory budget.
func (c *vectorCache) wantsIndex(n, dim int) bool {
	o := c.s.opts
	if o.VectorIndexMin < 0 || n < o.VectorIndexMin {
		return false
	}
	return o.VectorMemory <= 0 || vindex.BytesFor(n, dim) <= o.VectorMemory
}

// heapHolds reports whether Options.VectorHeap lets a space with an index hold n vectors of dim
// dimensions in memory beside its vector file.
func (c *vectorCache) heapHolds(n, dim int) bool {
	h := c.s.opts.VectorHeap
	return h >= 0 && int64(n)*int64(dim)*4 <= h
}

// restoreIndex sets next.ann (vectors in memory) from the space's index file when there is a valid one: the
// file's rows are matched by chunk ID and vector sequence number, rows the file lacks go to their nearest
// lists. The caller holds sv.refresh.
func (c *vectorCache) restoreIndex(sv *spaceVectors, next *vecSnapshot) {
	if !c.wantsIndex(next.live, next.dim) {
		return
	}
	saved, err := c.readIndexFile(sv)
	if err != nil {
		c.s.log().Warn("vector index file unreadable, building again", slog.String("space", sv.key), slog.Any("err", err))
	}
	if saved != nil {
		c.restoreByKey(sv, saved, next)
	}
}

// readIndexFile reads the space's index file; it returns nil and no error when there is none.
func (c *vectorCache) readIndexFile(sv *spaceVectors) (*vindex.Saved, error) {
	f, err := os.Open(c.indexFile(sv.key))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	defer f.Close()
	return vindex.Read(f, sv.dim)
}

// restoreByKey sets next.ann from saved, its rows matched by key; a file whose rows do not match the
// vectors is not used (logged).
func (c *vectorCache) restoreByKey(sv *spaceVectors, saved *vindex.Saved, next *vecSnapshot) {
	ix, _, err := saved.Restore(next.rows(), len(next.ids), func(r int32) vindex.Key { return vindex.Key{next.ids[r], next.seqs[r]} })
	if err != nil {
		c.s.log().Warn("vector index file not used, building again", slog.String("space", sv.key), slog.Any("err", err))
		return
	}
	next.ann = ix
	c.restored.Add(1)
}

// maybeBuild starts building an index for v in the background when it needs one (none yet, or the rows
// have doubled since training) and none is being built.
func (c *vectorCache) maybeBuild(sv *spaceVectors, v *vecSnapshot) {
	if !c.wantsIndex(v.live, v.dim) || (v.ann != nil && !v.ann.Stale()) || c.closing.Load() || !sv.building.CompareAndSwap(false, true) {
		return
	}
	c.builds.Add(1)
	go func() {
		defer c.builds.Done()
		defer sv.building.Store(false)
		ix, err := vindex.Build(c.ctx, v.rows(), v.dim, len(v.ids), annSeed)
		if err != nil {
			if c.ctx.Err() == nil {
				c.s.log().Warn("cannot build the vector index", slog.String("space", sv.key), slog.Any("err", err))
			}
			return // or the store is closing
		}
		if !c.install(sv, v, ix) {
			return
		}
		sv.persist.Lock()
		defer sv.persist.Unlock()
		if err := c.saveLatest(sv); err != nil {
			c.s.log().Warn("cannot write the vector index", slog.String("space", sv.key), slog.Any("err", err))
		}
	}()
}

// install puts ix, built over v, on the newest snapshot with the rows appended since, and reports whether
// it could: not when the newest snapshot was loaded again in full meanwhile (the next refresh starts a
// build again). When it was compacted meanwhile, ix is renumbered as the compaction renumbered the rows.
func (c *vectorCache) install(sv *spaceVectors, v *vecSnapshot, ix *vindex.Index) bool {
	sv.refresh.Lock()
	defer sv.refresh.Unlock()
	cur := sv.snap.Load()
	if cur == nil {
		return false
	}
	if cur.base != v.base {
		newRow, m, ok := sv.carried(v, cur)
		if !ok {
			return false
		}
		ix = ix.Remap(newRow, m)
	}
	next := *cur
	var err error
	if next.ann, err = ix.Add(cur.rows(), len(cur.ids)); err != nil {
		c.s.log().Warn("cannot build the vector index", slog.String("space", sv.key), slog.Any("err", err))
		return false
	}
	next.gen = cur.gen + 1
	sv.snap.Store(&next)
	return true
}

// carried maps the rows of v to those of cur, a later snapshot: newRow[r] is the row of cur holding v's
// row r, -1 when it was removed since. It reports false unless the rows of cur that come from v are its
// first m rows in v's order, which compaction keeps (it drops removed rows and renumbers the others in
// order; rows loaded later come after them) and a full load does not. The caller holds sv.refresh.
func (sv *spaceVectors) carried(v, cur *vecSnapshot) (newRow []int32, m int, ok bool) {
	newRow = make([]int32, len(v.ids))
	for r, id := range v.ids {
		newRow[r] = -1
		if i, found := sv.pos[id]; found && i < len(cur.ids) && cur.seqs[i] == v.seqs[r] && v.docs[r] >= 0 {
			if i != m {
				return nil, 0, false
			}
			newRow[r] = int32(i)
			m++
		}
	}
	return newRow, m, true
}

// log is where the store reports what it does about the vector index; the store has no logger of its own.
func (s *Store) log() *slog.Logger { return slog.Default() }

// WaitVectorIndex loads the vectors of space, waits for index builds (and the writing of the space's
// files) to finish, and returns the rows of the space's approximate index (0 when the space is searched
// exactly) and the bytes the space's vectors take in memory (the index, the per-row arrays, and the
// vectors themselves unless they are in the space's vector file), e.g. for benchmarks.
func (s *Store) WaitVectorIndex(ctx context.Context, space rag.Space) (rows int, heap int64, err error) {
	if err := s.WarmVectors(ctx, space); err != nil {
		return 0, 0, err
	}
	s.vecs.builds.Wait()
	if v := s.vecs.get(space).snap.Load(); v != nil {
		if v.ann != nil {
			rows = v.ann.Rows()
		}
		return rows, v.heapBytes(), nil
	}
	return 0, 0, nil
}

// VectorFilesRestored is how many spaces this store loaded from their index and vector files rather than
// from the database (e.g. for benchmarks of a restart).
func (s *Store) VectorFilesRestored() int64 { return s.vecs.fromFiles.Load() }
