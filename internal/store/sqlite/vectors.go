package sqlite

import (
	"container/heap"
	"context"
	"database/sql"
	"errors"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/viterin/vek/vek32"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/vindex"
)

// The vector cache keeps, per embedding space, every vector of the space in one contiguous []float32 with
// the chunk ID and document seq of each row, and scores a query against all rows of allowed documents
// (exact cosine: vectors are L2-normalised, so a SIMD dot product).
//
// Freshness, also across processes: chunk_vectors.seq and vector_tombstones.seq only grow (AUTOINCREMENT),
// and every removal of a vector (replaced version, deleted document, re-embedded chunk) leaves a tombstone
// through a trigger. Each search reads the two sequence counters from sqlite_sequence (one prepared
// statement on the point-lookup pool, so it never queues behind keyword queries) after it
// started, so every commit that finished before it, in this process or another, is counted. When the
// counters are those of the published snapshot, the search scans that snapshot without taking any lock.
// When they moved, the search takes the space's refresh lock (one loader at a time; whoever got there first
// may already have loaded what it needs), loads in one read snapshot the tombstones and the vector rows
// above what the cache has seen, and publishes a new snapshot. Tombstones older than
// Options.TombstoneRetention are pruned; a cache that is older than the pruned point (store_meta
// tombstones_pruned_through) reloads its space in full.
//
// Snapshots are immutable once published, so searches that loaded one keep scanning it while a refresh
// builds the next: rows are only ever appended after the end of the latest snapshot (where none of its
// readers look), a removal marks its row in a fresh copy of the per-row document array (8 bytes a row,
// not the vectors), and compaction, once a quarter of the rows are removed, writes new arrays.
//
// Scoring is bound by reading the vectors from memory, so queries of a space that wait at the same time
// are scored in one pass (Store.scan), which takes a search turn like a read transaction does.
type vectorCache struct {
	s *Store
	// spaces is replaced, never changed, so that searches find their space without a lock.
	spaces atomic.Pointer[map[string]*spaceVectors]
	mu     sync.Mutex // serialises adding a space
	// builds counts the index builds running in the background (annindex.go); closing stops new ones.
	builds   sync.WaitGroup
	closing  atomic.Bool
	restored atomic.Int64    // indexes read back from their files
	ctx      context.Context // cancelled when the store closes, to stop index builds
	cancel   context.CancelFunc
}

const countersSQL = `SELECT
	coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'chunk_vectors'), 0),
	coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'vector_tombstones'), 0)`

func newVectorCache(s *Store) *vectorCache {
	c := &vectorCache{s: s}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.drop()
	return c
}

func (c *vectorCache) drop() {
	c.spaces.Store(&map[string]*spaceVectors{})
}

// vecSnapshot is the vectors of a space in one committed state. Nothing in it changes once published.
type vecSnapshot struct {
	dim     int
	ids     []int64   // chunk ID per row
	docs    []int64   // document seq per row, -1 for a removed row
	vecs    []float32 // row i is vecs[i*dim:(i+1)*dim]
	live    int
	gen     uint64 // how many snapshots of the space were published before this one
	lastVec int64  // highest chunk_vectors.seq of the state
	lastTom int64  // highest vector_tombstones.seq of the state
	// base numbers the row layout: it changes on a full load and on compaction, when rows are renumbered.
	base uint64
	ann  *vindex.Index // approximate index over the rows, nil to search exactly (annindex.go)
}

// covers reports whether the snapshot is of the state with those counters or a later one: the counters
// only grow and every change of a space's vectors moves one of them.
func (v *vecSnapshot) covers(vecSeq, tomSeq int64) bool {
	return v != nil && v.lastVec >= vecSeq && v.lastTom >= tomSeq
}

type spaceVectors struct {
	key  string
	dim  int
	snap atomic.Pointer[vecSnapshot] // nil until the first load
	// pending holds the queries waiting to be scored (see Store.scan).
	pending chan *scanReq

	refresh sync.Mutex // one loader at a time; guards the fields below
	spaceID int64      // 0 while the space has no row
	seqs    []int64    // chunk_vectors.seq per row of the latest snapshot
	pos     map[int64]int
	// savedRows is the row count of the index when it was last written to its file.
	savedRows int
	building  atomic.Bool // an index build is running
}

// Len returns the number of live vectors (for tests and stats).
func (sv *spaceVectors) Len() int {
	if v := sv.snap.Load(); v != nil {
		return v.live
	}
	return 0
}

func (c *vectorCache) get(sp rag.Space) *spaceVectors {
	key := sp.ID()
	if sv := (*c.spaces.Load())[key]; sv != nil {
		return sv
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := *c.spaces.Load()
	if sv := old[key]; sv != nil {
		return sv
	}
	sv := &spaceVectors{key: key, dim: sp.Dim, pos: map[int64]int{}, pending: make(chan *scanReq, 1024)}
	next := make(map[string]*spaceVectors, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	next[key] = sv
	c.spaces.Store(&next)
	return sv
}

// space returns a snapshot of the vectors of sp that includes every commit that finished before the call.
func (c *vectorCache) space(ctx context.Context, sp rag.Space) (*vecSnapshot, error) {
	sv := c.get(sp)
	counters, err := c.s.qstmts.get(ctx, countersSQL)
	if err != nil {
		return nil, err
	}
	var vecSeq, tomSeq int64
	if err := counters.QueryRowContext(ctx).Scan(&vecSeq, &tomSeq); err != nil {
		return nil, err
	}
	if v := sv.snap.Load(); v.covers(vecSeq, tomSeq) {
		return v, nil
	}
	sv.refresh.Lock()
	defer sv.refresh.Unlock()
	if v := sv.snap.Load(); v.covers(vecSeq, tomSeq) {
		return v, nil // loaded by the search that held the lock before us
	}
	return c.sync(ctx, sv)
}

// vecBatch is vector rows as loaded: decoded straight into their final layout, so that a full load of a
// large space does not hold the raw bytes and the floats at once.
type vecBatch struct {
	ids, docs, seqs []int64
	vecs            []float32
}

type tombstone struct{ chunk, vecSeq int64 }

// sync loads what changed since the latest snapshot and publishes the next one. The caller holds
// sv.refresh.
func (c *vectorCache) sync(ctx context.Context, sv *spaceVectors) (*vecSnapshot, error) {
	db := c.s.q
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var vecSeq, tomSeq, pruned int64
	if err := tx.QueryRowContext(ctx, countersSQL).Scan(&vecSeq, &tomSeq); err != nil {
		return nil, err
	}
	if err := tx.QueryRowContext(ctx, `SELECT value FROM store_meta WHERE key = 'tombstones_pruned_through'`).Scan(&pruned); err != nil {
		return nil, err
	}
	cur := sv.snap.Load()
	full := cur == nil || pruned > cur.lastTom
	if sv.spaceID == 0 || full {
		err := tx.QueryRowContext(ctx, `SELECT id FROM spaces WHERE key = ?`, sv.key).Scan(&sv.spaceID)
		if errors.Is(err, sql.ErrNoRows) {
			sv.spaceID = 0
		} else if err != nil {
			return nil, err
		}
	}
	var tombs []tombstone
	var rows vecBatch
	var after int64
	if !full {
		after = cur.lastVec
	}
	if sv.spaceID != 0 {
		if !full {
			if tombs, err = loadTombstones(ctx, tx, sv.spaceID, cur.lastTom); err != nil {
				return nil, err
			}
		}
		if rows, err = loadVectors(ctx, tx, sv.spaceID, sv.dim, after); err != nil {
			return nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}

	var next *vecSnapshot
	if full {
		next = &vecSnapshot{dim: sv.dim, ids: rows.ids, docs: rows.docs, vecs: rows.vecs, live: len(rows.ids)}
		sv.seqs = rows.seqs
		sv.pos = make(map[int64]int, len(rows.ids))
		for i, id := range rows.ids {
			sv.pos[id] = i
		}
		if cur != nil {
			next.base = cur.base + 1
		}
		c.restoreIndex(sv, next)
	} else {
		next = sv.apply(cur, tombs, rows)
	}
	if dead := len(next.ids) - next.live; dead > 0 && dead*4 > len(next.ids) {
		next = sv.compact(next)
	}
	next.lastVec, next.lastTom = vecSeq, tomSeq
	if cur != nil {
		next.gen = cur.gen + 1
	}
	sv.snap.Store(next)
	c.maybeBuild(sv, next)
	return next, nil
}

// apply returns cur with the tombstones and new rows applied. The arrays of cur are shared: new rows are
// appended after its end, which no reader of cur looks at; removals are marked in a copy of docs.
func (sv *spaceVectors) apply(cur *vecSnapshot, tombs []tombstone, rows vecBatch) *vecSnapshot {
	var kill []int
	for _, t := range tombs {
		if i, ok := sv.pos[t.chunk]; ok && sv.seqs[i] == t.vecSeq {
			kill = append(kill, i)
			delete(sv.pos, t.chunk)
		}
	}
	for _, id := range rows.ids {
		if i, ok := sv.pos[id]; ok { // a newer vector of the same chunk replaces its row
			kill = append(kill, i)
			delete(sv.pos, id)
		}
	}
	next := &vecSnapshot{dim: cur.dim, live: cur.live - len(kill) + len(rows.ids), base: cur.base}
	docs := cur.docs
	if len(kill) > 0 {
		docs = make([]int64, len(cur.docs), len(cur.docs)+len(rows.docs))
		copy(docs, cur.docs)
		for _, i := range kill {
			docs[i] = -1
		}
	}
	for j, id := range rows.ids {
		sv.pos[id] = len(cur.ids) + j
	}
	next.ids = append(cur.ids, rows.ids...)
	next.docs = append(docs, rows.docs...)
	next.vecs = append(cur.vecs, rows.vecs...)
	sv.seqs = append(sv.seqs, rows.seqs...)
	if cur.ann != nil {
		next.ann, _ = cur.ann.Add(vindex.Mem{Vecs: next.vecs, Dim: next.dim}, len(next.ids)) // rows in memory: no error
	}
	return next
}

// compact returns v without its removed rows, in new arrays (readers of v may still be scanning it).
func (sv *spaceVectors) compact(v *vecSnapshot) *vecSnapshot {
	dim := v.dim
	out := &vecSnapshot{dim: dim, live: v.live, ids: make([]int64, 0, v.live), docs: make([]int64, 0, v.live),
		vecs: make([]float32, 0, v.live*dim), base: v.base + 1}
	seqs := make([]int64, 0, v.live)
	newRow := make([]int32, len(v.docs))
	for i, doc := range v.docs {
		newRow[i] = int32(len(out.ids))
		if doc < 0 {
			newRow[i] = -1
			continue
		}
		sv.pos[v.ids[i]] = len(out.ids)
		out.ids, out.docs, seqs = append(out.ids, v.ids[i]), append(out.docs, doc), append(seqs, sv.seqs[i])
		out.vecs = append(out.vecs, v.vecs[i*dim:(i+1)*dim]...)
	}
	sv.seqs = seqs
	if v.ann != nil {
		out.ann = v.ann.Remap(newRow, len(out.ids))
	}
	return out
}

func loadTombstones(ctx context.Context, tx *sql.Tx, spaceID, after int64) ([]tombstone, error) {
	rows, err := tx.QueryContext(ctx, `SELECT chunk_id, vec_seq FROM vector_tombstones WHERE seq > ? AND space_id = ?`, after, spaceID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []tombstone
	for rows.Next() {
		var t tombstone
		if err := rows.Scan(&t.chunk, &t.vecSeq); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func loadVectors(ctx context.Context, tx *sql.Tx, spaceID int64, dim int, after int64) (vecBatch, error) {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM chunk_vectors WHERE space_id = ? AND seq > ?`, spaceID, after).Scan(&n); err != nil {
		return vecBatch{}, err
	}
	b := vecBatch{ids: make([]int64, 0, n), docs: make([]int64, 0, n), seqs: make([]int64, 0, n), vecs: make([]float32, 0, n*dim)}
	rows, err := tx.QueryContext(ctx, `SELECT v.seq, v.chunk_id, c.doc_seq, v.vec FROM chunk_vectors v
		JOIN chunks c ON c.id = v.chunk_id WHERE v.space_id = ? AND v.seq > ? ORDER BY v.seq`, spaceID, after)
	if err != nil {
		return vecBatch{}, err
	}
	defer rows.Close()
	var raw sql.RawBytes
	for rows.Next() {
		var seq, chunk, doc int64
		if err := rows.Scan(&seq, &chunk, &doc, &raw); err != nil {
			return vecBatch{}, err
		}
		if len(raw) != 4*dim {
			continue // cannot happen: writes check the dimension of the space
		}
		b.ids, b.docs, b.seqs = append(b.ids, chunk), append(b.docs, doc), append(b.seqs, seq)
		b.vecs = decodeVector(b.vecs, raw)
	}
	return b, rows.Err()
}

// WarmVectors loads the vectors of space into memory now rather than at the first search (about 2 s per
// 100,000 768-d vectors), e.g. when a server starts.
func (s *Store) WarmVectors(ctx context.Context, space rag.Space) error {
	if err := checkSpace(space); err != nil {
		return err
	}
	if _, err := s.vecs.space(ctx, space); err != nil {
		return dbError(err, "load vectors of %s", space.ID())
	}
	return nil
}

// docSet is a bitset of document seqs; nil means every document.
type docSet []uint64

func (b docSet) has(seq int64) bool {
	i := uint64(seq) >> 6
	return i < uint64(len(b)) && b[i]&(1<<(uint64(seq)&63)) != 0
}

// allowedDocs resolves the documents p may see that match f, or nil when that is every document.
func (s *Store) allowedDocs(ctx context.Context, p rag.Principal, f rag.Filter) (docSet, bool, error) {
	var w where
	w.visible(p)
	if err := w.filter(f); err != nil {
		return nil, false, err
	}
	if len(w.conds) == 0 {
		return nil, true, nil
	}
	rows, err := s.r.QueryContext(ctx, `SELECT d.seq FROM documents d WHERE `+w.sql()+` ORDER BY d.seq DESC`, w.args...)
	if err != nil {
		return nil, false, dbError(err, "resolve allowed documents")
	}
	defer rows.Close()
	var set docSet
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			return nil, false, dbError(err, "resolve allowed documents")
		}
		if set == nil {
			set = make(docSet, seq/64+1)
		}
		set[seq>>6] |= 1 << (uint64(seq) & 63)
	}
	if err := rows.Err(); err != nil {
		return nil, false, dbError(err, "resolve allowed documents")
	}
	return set, set != nil, nil
}

// VectorCandidates returns up to q.K chunks of visible documents matching q.Filter nearest to q.Vector
// among the vectors of q.Space. The filter and visibility are resolved to a document set first, and only
// rows of those documents are scored, so a selective filter still yields K candidates.
func (s *Store) VectorCandidates(ctx context.Context, p rag.Principal, q rag.VectorQuery) ([]rag.Candidate, error) {
	if q.Space.Dim <= 0 || len(q.Vector) != q.Space.Dim {
		return nil, rag.Errorf(rag.CodeInvalid, "query vector has %d dimensions, space %s has %d", len(q.Vector), q.Space.ID(), q.Space.Dim)
	}
	allowed, some, err := s.allowedDocs(ctx, p, q.Filter)
	if err != nil {
		return nil, err
	}
	if q.K <= 0 || !some {
		return []rag.Candidate{}, nil
	}
	v, err := s.vecs.space(ctx, q.Space)
	if err != nil {
		return nil, dbError(err, "load vectors of %s", q.Space.ID())
	}
	if v.ann != nil {
		if err := s.turn(ctx); err != nil {
			return nil, err
		}
		out, ok := v.annSearch(q.Vector, allowed, q.K)
		s.endTurn()
		if ok {
			return out, nil
		}
	}
	out, err := s.scan(ctx, s.vecs.get(q.Space), &scanReq{q: q.Vector, allowed: allowed, k: q.K, snap: v, done: make(chan struct{})})
	if err != nil {
		return nil, dbError(err, "vector candidates")
	}
	return out, nil
}

// scored is one row's score; the heap keeps the worst of the current top k on top.
type scored struct {
	score float32
	id    int64
}

// worse orders by score, then prefers the lower chunk ID, so results are deterministic.
func (a scored) worse(b scored) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.id > b.id
}

type topK []scored

func (h topK) Len() int           { return len(h) }
func (h topK) Less(i, j int) bool { return h[i].worse(h[j]) }
func (h topK) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *topK) Push(x any)        { *h = append(*h, x.(scored)) }
func (h *topK) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// minParallelRows is the row count below which one goroutine scores faster than several.
const minParallelRows = 4096

// maxBatch is how many queries one pass over the vectors scores at most. A pass is bound by reading the
// vectors from memory (3 KB a row at 768-d), not by the dot products, so while a row is in the cache
// several queries are scored against it for little more than the cost of one.
const maxBatch = 16

// scanReq is one vector query waiting to be scored.
type scanReq struct {
	q       []float32
	allowed docSet
	k       int
	snap    *vecSnapshot // fresh enough for this query; a batch uses the newest of its queries' snapshots
	out     []rag.Candidate
	done    chan struct{} // closed when out is set
}

// scan scores req against sv. Queries of the same space that wait at the same time are scored together
// (see maxBatch): each takes its place in sv.pending, then waits for a turn; whoever gets a turn scores
// every query waiting, in arrival order, until its own has been scored, and a query scored by someone
// else's pass returns without a turn.
func (s *Store) scan(ctx context.Context, sv *spaceVectors, req *scanReq) ([]rag.Candidate, error) {
	select {
	case sv.pending <- req:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	s.waiting.Add(1)
	select {
	case <-req.done:
		s.waiting.Add(-1)
		return req.out, nil
	case <-ctx.Done():
		s.waiting.Add(-1)
		return nil, ctx.Err()
	case s.turns <- struct{}{}:
		s.waiting.Add(-1)
		s.scorePending(sv, req)
	}
	select {
	case <-req.done:
		return req.out, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// scorePending scores the waiting queries of sv in passes of up to maxBatch, oldest first, until req has
// been scored or taken by another pass. It ends the caller's turn.
func (s *Store) scorePending(sv *spaceVectors, req *scanReq) {
	defer s.endTurn()
	for {
		select {
		case <-req.done:
			return
		default:
		}
		batch := make([]*scanReq, 0, maxBatch)
	drain:
		for len(batch) < maxBatch {
			select {
			case r := <-sv.pending:
				batch = append(batch, r)
			default:
				break drain
			}
		}
		if len(batch) == 0 {
			return // another pass has taken req and is scoring it
		}
		v := batch[0].snap
		for _, r := range batch[1:] {
			if r.snap.gen > v.gen {
				v = r.snap
			}
		}
		workers := s.opts.SearchWorkers
		if s.waiting.Load() > 0 || len(sv.pending) > 0 {
			workers = 1 // searches are queueing for the cores: splitting this pass would only add switches
		}
		v.searchBatch(batch, workers)
	}
}

// search scores one query (for tests and benchmarks).
func (v *vecSnapshot) search(q []float32, allowed docSet, k, workers int) []rag.Candidate {
	r := &scanReq{q: q, allowed: allowed, k: k, snap: v, done: make(chan struct{})}
	v.searchBatch([]*scanReq{r}, workers)
	return r.out
}

// searchBatch scores every query of reqs against v in one pass and sets their results.
func (v *vecSnapshot) searchBatch(reqs []*scanReq, workers int) {
	n := len(v.ids)
	if workers < 1 || n < minParallelRows {
		workers = 1
	}
	parts := make([][]topK, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := n*w/workers, n*(w+1)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			parts[w] = v.scan(reqs, lo, hi)
		}()
	}
	wg.Wait()
	for j, r := range reqs {
		var all []scored
		for _, p := range parts {
			all = append(all, p[j]...)
		}
		sort.Slice(all, func(a, b int) bool { return all[b].worse(all[a]) })
		if len(all) > r.k {
			all = all[:r.k]
		}
		out := make([]rag.Candidate, len(all))
		for i, x := range all {
			out[i] = rag.Candidate{ChunkID: x.id, Score: float64(x.score), Rank: i + 1}
		}
		r.out = out
		close(r.done)
	}
}

// scan scores rows [lo, hi) against each query of reqs and returns the best k of each.
func (v *vecSnapshot) scan(reqs []*scanReq, lo, hi int) []topK {
	hs := make([]topK, len(reqs))
	for j, r := range reqs {
		hs[j] = make(topK, 0, r.k)
	}
	dim := v.dim
	for i := lo; i < hi; i++ {
		doc := v.docs[i]
		if doc < 0 {
			continue
		}
		row := v.vecs[i*dim : (i+1)*dim]
		for j, r := range reqs {
			if r.allowed != nil && !r.allowed.has(doc) {
				continue
			}
			x := scored{vek32.Dot(r.q, row), v.ids[i]}
			h := &hs[j]
			if len(*h) < r.k {
				heap.Push(h, x)
			} else if (*h)[0].worse(x) {
				(*h)[0] = x
				heap.Fix(h, 0)
			}
		}
	}
	return hs
}

// cachedSpace is for tests: the live vector count of sp in this Store's cache (-1 when not loaded).
func (s *Store) cachedSpace(sp rag.Space) int {
	sv := (*s.vecs.spaces.Load())[sp.ID()]
	if sv == nil || sv.snap.Load() == nil {
		return -1
	}
	return sv.Len()
}
