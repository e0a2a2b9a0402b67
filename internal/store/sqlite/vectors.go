package sqlite

import (
	"container/heap"
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"os"
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
//
// Where the vectors are: a space that wants an approximate index (annindex.go: at least
// Options.VectorIndexMin live vectors, within Options.VectorMemory) keeps them in its vector file
// (vecfile.go) when this store owns the space's lock file, and in memory too while they take at most
// Options.VectorHeap bytes; past that, memory holds only the per-row arrays and the index's codes, and a
// search reads the vectors it rescores from the file. A smaller space, or one whose files another store
// owns, holds its vectors in memory only. A space moves to its file when it grows past VectorIndexMin (the
// rows in memory are written out once), drops its copy in memory when it grows past VectorHeap, and takes
// one again only at a full load that finds it below.
type vectorCache struct {
	s *Store
	// spaces is replaced, never changed, so that searches find their space without a lock.
	spaces atomic.Pointer[map[string]*spaceVectors]
	mu     sync.Mutex // serialises adding a space
	// builds counts the index builds running in the background (annindex.go); closing stops new ones.
	builds    sync.WaitGroup
	closing   atomic.Bool
	restored  atomic.Int64    // indexes read back from their files
	fromFiles atomic.Int64    // full loads answered from a space's index and vector files (vecpersist.go)
	loaded    atomic.Int64    // vector rows read from the database
	ctx       context.Context // cancelled when the store closes, to stop index builds
	cancel    context.CancelFunc
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
	dim  int
	ids  []int64 // chunk ID per row
	seqs []int64 // chunk_vectors.seq per row
	docs []int64 // document seq per row, -1 for a removed row
	// vecs holds the vectors in memory (see inMemory): row i is vecs[i*dim:(i+1)*dim]. It is nil when they
	// are only in file, and not nil (maybe empty) when they are in both.
	vecs []float32
	// file is the space's vector file, when this store keeps one: row i is its slot slots[i] (-1: none, a
	// removed row after the file was written again). fileSlots is the file's record count when the
	// snapshot was published: what an index file saved from this snapshot may refer to.
	file      *vecFile
	slots     []int32
	fileSlots int
	live      int
	gen       uint64 // how many snapshots of the space were published before this one
	lastVec   int64  // highest chunk_vectors.seq of the state
	lastTom   int64  // highest vector_tombstones.seq of the state
	// base numbers the row layout: it changes on a full load and on compaction, when rows are renumbered
	// (spaceVectors.newLayout).
	base uint64
	ann  *vindex.Index // approximate index over the rows, nil to search exactly (annindex.go)
	err  error         // apply could not write the vector file: the snapshot is not to be published
}

// inMemory reports whether the snapshot holds its vectors in memory (with or without a vector file).
func (v *vecSnapshot) inMemory() bool { return v.file == nil || v.vecs != nil }

// rows is the snapshot's vectors as a vindex.Matrix: in memory when they are there, else read from its file.
func (v *vecSnapshot) rows() vindex.Matrix {
	if v.inMemory() {
		return vindex.Mem{Vecs: v.vecs, Dim: v.dim}
	}
	return fileRows{vf: v.file, slots: v.slots}
}

// heapBytes is what the snapshot holds in memory: the per-row arrays, the vectors when they are not in a
// file, and the index.
func (v *vecSnapshot) heapBytes() int64 {
	b := int64(cap(v.ids)+cap(v.seqs)+cap(v.docs))*8 + int64(cap(v.vecs))*4 + int64(cap(v.slots))*4
	if v.ann != nil {
		b += v.ann.Bytes()
	}
	return b
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
	pos     map[int64]int
	layouts uint64 // row layouts made (see vecSnapshot.base)
	// lockTried says that the space's lock file was asked for since the last full load (it is not asked
	// again before the next).
	lockTried bool

	// lock is the space's lock file while this store owns the space's vector and index files
	// (vecpersist.go).
	lock     atomic.Pointer[os.File]
	building atomic.Bool // an index build is running
	// cols is the column copy of the space's vectors for sparse queries (columns.go), nil until one is
	// made; colBuilding says that one is being made.
	cols        atomic.Pointer[colBlocks]
	colBuilding atomic.Bool
	saving      atomic.Bool // a save (or vacuum) of the space's files is running
	// persist serialises saves and vacuums of the space's files.
	persist sync.Mutex
	savedMu sync.Mutex
	saved   savedState // guarded by savedMu
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
	var next *vecSnapshot
	switch {
	case full:
		if next, err = c.loadFull(ctx, tx, sv, pruned); err != nil {
			return nil, err
		}
		next.base = sv.newLayout()
	case sv.spaceID == 0:
		next = sv.apply(cur, nil, vecBatch{})
	default:
		tombs, err := loadTombstones(ctx, tx, sv.spaceID, cur.lastTom)
		if err != nil {
			return nil, err
		}
		rows, err := c.loadVectors(ctx, tx, sv.spaceID, sv.dim, cur.lastVec)
		if err != nil {
			return nil, err
		}
		next = sv.apply(cur, tombs, rows)
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	if next.err != nil {
		// sv.pos was changed for a snapshot that is not published: drop the snapshot, so that the next
		// search loads the space in full.
		sv.snap.Store(nil)
		return nil, next.err
	}
	if dead := len(next.ids) - next.live; dead > 0 && dead*4 > len(next.ids) {
		next = sv.compact(next)
	}
	if next.file == nil && c.wantsIndex(next.live, next.dim) && c.own(sv) {
		if err := c.toFile(sv, next); err != nil {
			c.s.log().Warn("cannot write the vector file, keeping the vectors in memory only", slog.String("space", sv.key), slog.Any("err", err))
		}
	}
	if next.file != nil && next.vecs != nil && !c.heapHolds(len(next.ids), next.dim) {
		next.vecs = nil // grown past Options.VectorHeap: the vectors are read from the file from now on
	}
	next.lastVec, next.lastTom = vecSeq, tomSeq
	if next.file != nil {
		next.fileSlots = int(next.file.n.Load())
	}
	if cur != nil {
		next.gen = cur.gen + 1
	}
	sv.snap.Store(next)
	c.maybeBuild(sv, next)
	c.maybePersist(sv, next)
	return next, nil
}

// loadFull loads every vector of the space in tx: from the space's files when they are valid, else from
// the database (into the space's vector file when the space wants an index and this store owns its files).
// The caller holds sv.refresh.
func (c *vectorCache) loadFull(ctx context.Context, tx *sql.Tx, sv *spaceVectors, pruned int64) (*vecSnapshot, error) {
	sv.pos = map[int64]int{}
	sv.lockTried = false
	if sv.spaceID == 0 {
		return &vecSnapshot{dim: sv.dim}, nil
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM chunk_vectors WHERE space_id = ?`, sv.spaceID).Scan(&n); err != nil {
		return nil, err
	}
	if c.wantsIndex(n, sv.dim) && c.own(sv) {
		saved, next, err := c.restoreFiles(ctx, tx, sv, pruned)
		if next != nil {
			c.restored.Add(1)
			c.fromFiles.Add(1)
			return next, nil
		}
		if err != nil {
			c.s.log().Warn("vector files not used, loading the vectors from the database", slog.String("space", sv.key), slog.Any("err", err))
		}
		if next, err = c.loadToFile(ctx, tx, sv, n, saved); err == nil {
			return next, nil
		}
		c.s.log().Warn("cannot write the vector file, keeping the vectors in memory", slog.String("space", sv.key), slog.Any("err", err))
	} else if _, err := os.Stat(c.vecFilePath(sv.key)); err == nil && c.own(sv) {
		os.Remove(c.vecFilePath(sv.key)) // a space now too small for an index: its vector file is stale
	}
	rows, err := c.loadVectors(ctx, tx, sv.spaceID, sv.dim, 0)
	if err != nil {
		return nil, err
	}
	next := &vecSnapshot{dim: sv.dim, ids: rows.ids, seqs: rows.seqs, docs: rows.docs, vecs: rows.vecs, live: len(rows.ids)}
	sv.index(next)
	c.restoreIndex(sv, next)
	return next, nil
}

// newLayout numbers a new row layout, never the same twice. The caller holds sv.refresh.
func (sv *spaceVectors) newLayout() uint64 {
	sv.layouts++
	return sv.layouts
}

// index sets sv.pos from v's rows.
func (sv *spaceVectors) index(v *vecSnapshot) {
	sv.pos = make(map[int64]int, len(v.ids))
	for i, id := range v.ids {
		if v.docs[i] >= 0 {
			sv.pos[id] = i
		}
	}
}

// apply returns cur with the tombstones and new rows applied. The arrays of cur are shared: new rows are
// appended after its end, which no reader of cur looks at (in its vector file too, when it has one);
// removals are marked in a copy of docs. A failure to write the vector file is in the result's err.
func (sv *spaceVectors) apply(cur *vecSnapshot, tombs []tombstone, rows vecBatch) *vecSnapshot {
	var kill []int
	for _, t := range tombs {
		if i, ok := sv.pos[t.chunk]; ok && cur.seqs[i] == t.vecSeq {
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
	next := &vecSnapshot{dim: cur.dim, live: cur.live - len(kill) + len(rows.ids), base: cur.base, file: cur.file,
		slots: cur.slots, vecs: cur.vecs, ann: cur.ann}
	if len(rows.ids) > 0 && cur.file != nil {
		first, err := cur.file.appendRows(rows.vecs)
		if err != nil {
			return &vecSnapshot{err: err}
		}
		for j := range rows.ids {
			next.slots = append(next.slots, int32(first+j))
		}
	}
	if len(rows.ids) > 0 && cur.inMemory() {
		next.vecs = append(cur.vecs, rows.vecs...)
	}
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
	next.seqs = append(cur.seqs, rows.seqs...)
	next.docs = append(docs, rows.docs...)
	if cur.ann != nil && len(rows.ids) > 0 {
		var err error
		// The new rows are in memory (rows.vecs) whichever way the snapshot keeps them.
		if next.ann, err = cur.ann.Add(tail{base: len(cur.ids), vecs: rows.vecs, dim: cur.dim}, len(next.ids)); err != nil {
			return &vecSnapshot{err: err}
		}
	}
	return next
}

// tail is a vindex.Matrix of rows [base, base+len(vecs)/dim) held in vecs.
type tail struct {
	base int
	vecs []float32
	dim  int
}

func (t tail) Rows(lo, hi int, _ []float32) ([]float32, error) {
	return t.vecs[(lo-t.base)*t.dim : (hi-t.base)*t.dim], nil
}

// compact returns v without its removed rows, in new arrays (readers of v may still be scanning it). The
// vectors of a snapshot in its file stay where they are: only their slots are kept.
func (sv *spaceVectors) compact(v *vecSnapshot) *vecSnapshot {
	dim := v.dim
	out := &vecSnapshot{dim: dim, live: v.live, ids: make([]int64, 0, v.live), seqs: make([]int64, 0, v.live),
		docs: make([]int64, 0, v.live), base: sv.newLayout(), file: v.file}
	if v.file != nil {
		out.slots = make([]int32, 0, v.live)
	}
	if v.inMemory() {
		out.vecs = make([]float32, 0, v.live*dim)
	}
	newRow := make([]int32, len(v.docs))
	for i, doc := range v.docs {
		newRow[i] = int32(len(out.ids))
		if doc < 0 {
			newRow[i] = -1
			continue
		}
		sv.pos[v.ids[i]] = len(out.ids)
		out.ids, out.docs, out.seqs = append(out.ids, v.ids[i]), append(out.docs, doc), append(out.seqs, v.seqs[i])
		if v.file != nil {
			out.slots = append(out.slots, v.slots[i])
		}
		if v.inMemory() {
			out.vecs = append(out.vecs, v.vecs[i*dim:(i+1)*dim]...)
		}
	}
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

// loadVectors reads the space's vectors with a sequence number past after, in order.
func (c *vectorCache) loadVectors(ctx context.Context, tx *sql.Tx, spaceID int64, dim int, after int64) (vecBatch, error) {
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
	c.loaded.Add(int64(len(b.ids)))
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
	// A sparse query is searched exactly when the column copy covers the space (columns.go): it costs
	// less than the index's search, and the index's lists were made for dense neighbours.
	sv := s.vecs.get(q.Space)
	if v.ann != nil && !sv.sparseCovered(v, q.Vector, s.opts.VectorColumns) {
		if err := s.turn(ctx); err != nil {
			return nil, err
		}
		out, ok, err := v.annSearch(q.Vector, allowed, q.K)
		s.endTurn()
		if err != nil {
			return nil, dbError(err, "vector candidates")
		}
		if ok {
			return out, nil
		}
	}
	out, err := s.scan(ctx, sv, &scanReq{q: q.Vector, allowed: allowed, k: q.K, snap: v, done: make(chan struct{})})
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
	err     error         // the vectors could not be read (from the space's vector file)
	done    chan struct{} // closed when out or err is set
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
		return req.out, req.err
	case <-ctx.Done():
		s.waiting.Add(-1)
		return nil, ctx.Err()
	case s.turns <- struct{}{}:
		s.waiting.Add(-1)
		s.scorePending(sv, req)
	}
	select {
	case <-req.done:
		return req.out, req.err
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
		var cols *colBlocks
		if anySparse(batch) {
			cols = sv.columns(v, s.opts.VectorColumns)
		}
		v.searchBatch(batch, cols, workers)
	}
}

// search scores one query (for tests and benchmarks).
func (v *vecSnapshot) search(q []float32, allowed docSet, k, workers int) []rag.Candidate {
	return v.searchWith(nil, q, allowed, k, workers)
}

// searchWith scores one query with the column copy cols (for tests and benchmarks).
func (v *vecSnapshot) searchWith(cols *colBlocks, q []float32, allowed docSet, k, workers int) []rag.Candidate {
	r := &scanReq{q: q, allowed: allowed, k: k, snap: v, done: make(chan struct{})}
	v.searchBatch([]*scanReq{r}, cols, workers)
	return r.out
}

// searchBatch scores every query of reqs against v in one pass and sets their results.
func (v *vecSnapshot) searchBatch(reqs []*scanReq, cols *colBlocks, workers int) {
	n := len(v.ids)
	if workers < 1 || n < minParallelRows {
		workers = 1
	}
	parts := make([][]topK, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := n*w/workers, n*(w+1)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			parts[w], errs[w] = v.scan(reqs, cols, lo, hi)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			for _, r := range reqs {
				r.err = err
				close(r.done)
			}
			return
		}
	}
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

// scan scores rows [lo, hi) against each query of reqs and returns the best k of each. Only the rows some
// query may return are read: removed rows and, when every query has a filter, rows of documents none of
// them allows are skipped before their vector is read (from memory, or from the space's vector file).
// A sparse query is scored over the blocks of cols inside [lo, hi) by its columns (columns.go), and over
// the other rows as the dense ones are.
func (v *vecSnapshot) scan(reqs []*scanReq, cols *colBlocks, lo, hi int) ([]topK, error) {
	hs := make([]topK, len(reqs))
	filtered := true
	for j, r := range reqs {
		hs[j] = make(topK, 0, r.k)
		filtered = filtered && r.allowed != nil
	}
	score := func(i int, row []float32, which []int) {
		doc := v.docs[i]
		for _, j := range which {
			r := reqs[j]
			if r.allowed != nil && !r.allowed.has(doc) {
				continue
			}
			hs[j].add(r.k, scored{vek32.Dot(r.q, row), v.ids[i]})
		}
	}
	wanted := func(i int) bool {
		doc := v.docs[i]
		if doc < 0 {
			return false
		}
		if !filtered {
			return true
		}
		for _, r := range reqs {
			if r.allowed.has(doc) {
				return true
			}
		}
		return false
	}
	all := make([]int, len(reqs))
	for j := range reqs {
		all[j] = j
	}
	if v.inMemory() {
		dim := v.dim
		var dense, sparse []int
		var sq []sparseQuery
		bLo, bHi := (lo+colBlockRows-1)/colBlockRows, min(hi, cols.rows(), len(v.ids))/colBlockRows
		if bHi > bLo {
			for j, r := range reqs {
				if q, ok := sparseOf(r.q); ok {
					sparse, sq = append(sparse, j), append(sq, q)
				} else {
					dense = append(dense, j)
				}
			}
		} else {
			dense = all
		}
		inBlocks := func(i int) bool { return i >= bLo*colBlockRows && i < bHi*colBlockRows }
		for i := lo; i < hi; i++ {
			if len(dense) == 0 && i == bLo*colBlockRows {
				i = bHi*colBlockRows - 1 // the blocks' rows are the sparse queries' alone
				continue
			}
			if v.docs[i] < 0 {
				continue
			}
			row := v.vecs[i*dim : (i+1)*dim]
			if len(sparse) == 0 || inBlocks(i) {
				score(i, row, dense)
			} else {
				score(i, row, all)
			}
		}
		if len(sparse) > 0 {
			acc, tmp := make([]float32, colBlockRows), make([]float32, colBlockRows)
			for x, j := range sparse {
				r, h := reqs[j], &hs[j]
				for b := bLo; b < bHi; b++ {
					cols.columnSums(b, sq[x], acc, tmp)
					for t, sum := range acc {
						i := b*colBlockRows + t
						doc := v.docs[i]
						if doc < 0 || r.allowed != nil && !r.allowed.has(doc) {
							continue
						}
						if len(*h) == r.k && sum < (*h)[0].score-colMargin {
							continue
						}
						h.add(r.k, scored{vek32.Dot(r.q, v.vecs[i*dim:(i+1)*dim]), v.ids[i]})
					}
				}
			}
		}
		return hs, nil
	}
	rows := make([]int, 0, scanBlock)
	for b := lo; b < hi; b += scanBlock {
		rows = rows[:0]
		for i := b; i < min(hi, b+scanBlock); i++ {
			if wanted(i) {
				rows = append(rows, i)
			}
		}
		if err := vindex.ForRows(v.rows(), rows, v.dim, func(x int, row []float32) { score(rows[x], row, all) }); err != nil {
			return nil, err
		}
	}
	return hs, nil
}

// add puts x into h, the best k so far, if it is among them.
func (h *topK) add(k int, x scored) {
	if len(*h) < k {
		heap.Push(h, x)
	} else if (*h)[0].worse(x) {
		(*h)[0] = x
		heap.Fix(h, 0)
	}
}

// scanBlock is how many rows an exact scan of a vector file looks at between reads.
const scanBlock = 4096

// cachedSpace is for tests: the live vector count of sp in this Store's cache (-1 when not loaded).
func (s *Store) cachedSpace(sp rag.Space) int {
	sv := (*s.vecs.spaces.Load())[sp.ID()]
	if sv == nil || sv.snap.Load() == nil {
		return -1
	}
	return sv.Len()
}
