package sqlite

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
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
// (ragd.db.vindex-<space>) after each build and when the store closes, keyed by chunk ID and vector
// sequence number; a full load restores it from there (rows added since go to their nearest lists), and a
// file that is unreadable, of another format version or dimension, or whose lists do not match the
// vectors, is ignored and the index built again.
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
// selective filter, or fewer than k allowed rows in the probed lists).
func (v *vecSnapshot) annSearch(q []float32, allowed docSet, k int) ([]rag.Candidate, bool) {
	if v.ann == nil {
		return nil, false
	}
	sel := v.selectivity(allowed)
	if sel < annMinSelectivity {
		return nil, false
	}
	probes := min(v.ann.Lists(), int(float64(vindex.ProbesFor(v.ann.Lists()))/sel+0.5))
	hits, err := v.ann.Search(q, vindex.Mem{Vecs: v.vecs, Dim: v.dim}, v.ids, k, probes, 0, func(r int32) bool {
		d := v.docs[r]
		return d >= 0 && (allowed == nil || allowed.has(d))
	})
	if err != nil || len(hits) < k {
		return nil, false // the probed lists held fewer than k allowed rows: the exact scan finds all there are
	}
	out := make([]rag.Candidate, len(hits))
	for i, h := range hits {
		out[i] = rag.Candidate{ChunkID: v.ids[h.Row], Score: float64(h.Score), Rank: i + 1}
	}
	return out, true
}

// indexFile is where the index of a space is kept.
func (c *vectorCache) indexFile(key string) string {
	safe := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '_'
	}, key)
	return c.s.path + ".vindex-" + safe
}

// wantsIndex reports whether a snapshot of n rows should have an index within the memory budget.
func (c *vectorCache) wantsIndex(n, dim int) bool {
	o := c.s.opts
	if o.VectorIndexMin < 0 || n < o.VectorIndexMin {
		return false
	}
	return o.VectorMemory <= 0 || vindex.BytesFor(n, dim) <= o.VectorMemory
}

// restoreIndex sets next.ann from the space's file when there is a valid one. The caller holds sv.refresh.
func (c *vectorCache) restoreIndex(sv *spaceVectors, next *vecSnapshot) {
	if !c.wantsIndex(next.live, next.dim) {
		return
	}
	f, err := os.Open(c.indexFile(sv.key))
	if errors.Is(err, os.ErrNotExist) {
		return
	} else if err != nil {
		c.s.log().Warn("vector index file unreadable, building again", slog.String("space", sv.key), slog.Any("err", err))
		return
	}
	defer f.Close()
	saved, err := vindex.Read(f, next.dim)
	if err == nil {
		var ix *vindex.Index
		ix, _, err = saved.Restore(vindex.Mem{Vecs: next.vecs, Dim: next.dim}, len(next.ids), func(r int32) vindex.Key { return vindex.Key{next.ids[r], sv.seqs[r]} })
		if err == nil {
			next.ann = ix
			sv.savedRows = ix.Rows()
			c.restored.Add(1)
			return
		}
	}
	c.s.log().Warn("vector index file not used, building again", slog.String("space", sv.key), slog.Any("err", err))
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
		ix, err := vindex.Build(c.ctx, vindex.Mem{Vecs: v.vecs, Dim: v.dim}, v.dim, len(v.ids), annSeed)
		if err != nil {
			return // the store is closing
		}
		sv.refresh.Lock()
		defer sv.refresh.Unlock()
		cur := sv.snap.Load()
		if cur == nil || cur.base != v.base {
			return // compacted or reloaded meanwhile: the rows are numbered differently; the next refresh starts again
		}
		next := *cur
		if next.ann, err = ix.Add(vindex.Mem{Vecs: cur.vecs, Dim: cur.dim}, len(cur.ids)); err != nil {
			return
		}
		next.gen = cur.gen + 1
		sv.snap.Store(&next)
		if err := c.save(sv, &next); err != nil {
			c.s.log().Warn("cannot write the vector index", slog.String("space", sv.key), slog.Any("err", err))
		}
	}()
}

// save writes v's index to the space's file (a temporary file renamed over it). The caller holds
// sv.refresh, so that sv.seqs are v's.
func (c *vectorCache) save(sv *spaceVectors, v *vecSnapshot) error {
	path := c.indexFile(sv.key)
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	err = v.ann.Write(tmp, nil, func(r int32) (vindex.Entry, bool) {
		return vindex.Entry{Key: vindex.Key{v.ids[r], sv.seqs[r]}, Doc: v.docs[r]}, v.docs[r] >= 0
	})
	if err2 := tmp.Close(); err == nil {
		err = err2
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	sv.savedRows = v.ann.Rows()
	return nil
}

// close stops index builds and writes the indexes that grew since they were written, so that the next
// start does not assign those rows again.
func (c *vectorCache) close() {
	c.closing.Store(true)
	c.cancel()
	c.builds.Wait()
	for _, sv := range *c.spaces.Load() {
		sv.refresh.Lock()
		if v := sv.snap.Load(); v != nil && v.ann != nil && v.ann.Rows() != sv.savedRows {
			if err := c.save(sv, v); err != nil {
				c.s.log().Warn("cannot write the vector index", slog.String("space", sv.key), slog.Any("err", err))
			}
		}
		sv.refresh.Unlock()
	}
}

// log is where the store reports what it does about the vector index; the store has no logger of its own.
func (s *Store) log() *slog.Logger { return slog.Default() }

// WaitVectorIndex loads the vectors of space, waits for index builds to finish, and returns the rows and
// bytes of the space's approximate index (0, 0 when the space is searched exactly), e.g. for benchmarks.
func (s *Store) WaitVectorIndex(ctx context.Context, space rag.Space) (rows int, bytes int64, err error) {
	if err := s.WarmVectors(ctx, space); err != nil {
		return 0, 0, err
	}
	s.vecs.builds.Wait()
	if v := s.vecs.get(space).snap.Load(); v != nil && v.ann != nil {
		return v.ann.Rows(), v.ann.Bytes(), nil
	}
	return 0, 0, nil
}
