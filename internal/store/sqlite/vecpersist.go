package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/ragd/ragd/internal/vindex"
)

// The files of a space whose vectors are not in memory, beside the database:
//
//   - ragd.db.vlock-<space>: the lock file. The store that holds it (flock, taken at the space's first full
//     load when the space wants an index) owns the two files below; any other store of the same database,
//     in this process or another, keeps that space's vectors in memory and writes neither.
//   - ragd.db.vectors-<space>: the vector file (vecfile.go), appended as rows are loaded.
//   - ragd.db.vindex-<space>: the index file (internal/vindex's format), the snapshot to start from: every
//     live row's chunk ID, vector sequence number, document, slot in the vector file, list and code, with a
//     header naming the counters it is of (chunk_vectors.seq and vector_tombstones.seq), the vector file's
//     identity and how many of its records the entries may refer to.
//
// The index file is written after an index build, when the rows added or removed since the last write
// pass max(persistMin, an eighth of the live rows), and when the store closes; the vector file is synced to
// disk before, so that the records an index file refers to are there after a crash. A start-up (a full
// load) takes the index file's rows as they are when every check passes:
//
//   - the index file is whole (its CRC), of this format, dimension and header, and names the vector file
//     there (identity), which holds at least the records it refers to (records written after it are cut
//     off: their rows are loaded from the database again);
//   - no tombstone it has not seen was pruned since (else rows removed meanwhile could not be known);
//   - the database holds the rows it says: the count and the sum of the sequence numbers of the space's
//     vectors up to its chunk_vectors.seq equal those of its rows less those removed since (tombstones),
//     and for a sample of restoreChecks rows and the restoreNewest rows of the highest sequence numbers the
//     database's chunk, document and vector bytes equal the file's; the codes of a sample of rows equal
//     those of their vectors in the vector file.
//
// Then the tombstones and vectors committed since are applied as any refresh does. When a check fails the
// vectors are loaded from the database into a new vector file (its rows matched to the index file's by
// key when that file is readable, else the index is built again), and a warning says why. A database
// replaced under the same name or a backup of it restored beneath the files (also when written to again),
// a vector file of another index, a torn or truncated file, rows deleted or re-embedded while the store
// was down: each fails a check or is applied as a tombstone, never served. What the checks cannot see is
// a database edited outside ragd that keeps every count and sequence number and changes only vector bytes
// of rows neither sampled nor newest.
//
// Rows removed leave their records unused; once the file holds more than twice the live rows (and
// vacuumMin more), it is written again with the live rows only, in the background (vacuum).

// restoreChecks is about how many evenly spaced rows of an index file restoreFiles compares with the
// database, restoreNewest how many of its newest rows besides.
const (
	restoreChecks = 64
	restoreNewest = 64
)

// persistMin is the fewest rows added or removed since the last write of the index file that make a write
// (a variable for tests).
var persistMin = 16384

// vacuumMin is how many unused records a vector file may hold beyond the live rows before it is written
// again (with the live rows only) once it is also twice their count (a variable for tests).
var vacuumMin = 65536

// indexHeader is the store's header in an index file: the state its rows are of.
type indexHeader struct {
	lastVec, lastTom int64    // the counters of the snapshot it was written from
	file             [16]byte // the identity of the vector file the rows' slots are in; zero: none
	slots            int64    // how many records of that file the rows may refer to
}

const indexHeaderVersion = 1

func (h indexHeader) encode() []byte {
	b := make([]byte, 44)
	binary.LittleEndian.PutUint32(b, indexHeaderVersion)
	binary.LittleEndian.PutUint64(b[4:], uint64(h.lastVec))
	binary.LittleEndian.PutUint64(b[12:], uint64(h.lastTom))
	copy(b[20:36], h.file[:])
	binary.LittleEndian.PutUint64(b[36:], uint64(h.slots))
	return b
}

func parseIndexHeader(b []byte) (indexHeader, error) {
	if len(b) != 44 || binary.LittleEndian.Uint32(b) != indexHeaderVersion {
		return indexHeader{}, fmt.Errorf("%w: not a header of this store", vindex.ErrBadFile)
	}
	h := indexHeader{lastVec: int64(binary.LittleEndian.Uint64(b[4:])), lastTom: int64(binary.LittleEndian.Uint64(b[12:])),
		slots: int64(binary.LittleEndian.Uint64(b[36:]))}
	copy(h.file[:], b[20:36])
	return h, nil
}

// own reports whether this store owns the space's files, taking its lock file when it has not asked
// since the last full load. The caller holds sv.refresh.
func (c *vectorCache) own(sv *spaceVectors) bool {
	if sv.lock.Load() != nil {
		return true
	}
	if sv.lockTried || c.closing.Load() {
		return false
	}
	sv.lockTried = true
	f, ok, err := lockSpace(c.spaceFile("vlock", sv.key))
	if err != nil {
		c.s.log().Warn("cannot take the vector files' lock, keeping the vectors in memory", slog.String("space", sv.key), slog.Any("err", err))
		return false
	}
	if ok {
		sv.lock.Store(f)
	}
	return ok
}

// mayWrite reports whether this store may write the space's index file: it owns the space's files, or
// this system has no file locks (then every store writes it, the last one wins).
func (c *vectorCache) mayWrite(sv *spaceVectors) bool {
	return sv.lock.Load() != nil || !canLockFiles
}

// restoreFiles makes the space's snapshot from its index and vector files, checked against the database
// in tx (see above), with what was committed since applied. It returns the index file when it could read
// one (for loadToFile to match its rows by key) and nil with the reason when the files are not used.
func (c *vectorCache) restoreFiles(ctx context.Context, tx *sql.Tx, sv *spaceVectors, pruned int64) (*vindex.Saved, *vecSnapshot, error) {
	saved, err := c.readIndexFile(sv)
	if saved == nil {
		return nil, nil, err
	}
	h, err := parseIndexHeader(saved.Header)
	if err != nil {
		return nil, nil, err
	}
	if h.file == ([16]byte{}) {
		return saved, nil, errors.New("the index file names no vector file")
	}
	if pruned > h.lastTom {
		return saved, nil, errors.New("tombstones were pruned since the index file was written")
	}
	vf, err := openVecFile(c.vecFilePath(sv.key), sv.dim)
	if err != nil {
		return saved, nil, err
	}
	fail := func(err error) (*vindex.Saved, *vecSnapshot, error) {
		vf.close()
		return saved, nil, err
	}
	if vf.id != h.file {
		return fail(errors.New("the vector file is not the one the index file names"))
	}
	if vf.n.Load() < h.slots {
		return fail(fmt.Errorf("the vector file holds %d records, the index file refers to %d", vf.n.Load(), h.slots))
	}
	n := len(saved.Entries)
	next := &vecSnapshot{dim: sv.dim, ids: make([]int64, n), seqs: make([]int64, n), docs: make([]int64, n),
		slots: make([]int32, n), file: vf, live: n}
	var seqSum int64
	for i, e := range saved.Entries {
		if int64(e.Slot) >= h.slots {
			return fail(fmt.Errorf("a row's slot %d is past the %d records", e.Slot, h.slots))
		}
		next.ids[i], next.seqs[i], next.docs[i], next.slots[i] = e.Key[0], e.Key[1], e.Doc, int32(e.Slot)
		seqSum += e.Key[1]
	}
	next.ann = saved.Index()
	sv.index(next)

	tombs, err := loadTombstones(ctx, tx, sv.spaceID, h.lastTom)
	if err != nil {
		return fail(err)
	}
	count := int64(n)
	removed := map[int]bool{}
	for _, t := range tombs {
		if i, ok := sv.pos[t.chunk]; ok && next.seqs[i] == t.vecSeq && !removed[i] {
			removed[i] = true
			count--
			seqSum -= t.vecSeq
		}
	}
	var dbCount, dbSum int64
	if err := tx.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(seq), 0) FROM chunk_vectors WHERE space_id = ? AND seq <= ?`,
		sv.spaceID, h.lastVec).Scan(&dbCount, &dbSum); err != nil {
		return fail(err)
	}
	if dbCount != count || dbSum != seqSum {
		return fail(fmt.Errorf("the database holds %d vectors up to seq %d, the index file %d", dbCount, h.lastVec, count))
	}
	if err := c.checkSample(ctx, tx, sv, next, removed); err != nil {
		return fail(err)
	}
	if err := next.ann.Check(next.rows()); err != nil {
		return fail(err)
	}
	if err := vf.truncate(int(h.slots)); err != nil {
		return fail(err)
	}
	if c.heapHolds(n, sv.dim) {
		if next.vecs, err = vf.readRows(next.slots); err != nil {
			return fail(err)
		}
	}
	rows, err := c.loadVectors(ctx, tx, sv.spaceID, sv.dim, h.lastVec)
	if err != nil {
		return fail(err)
	}
	out := sv.apply(next, tombs, rows)
	if out.err != nil {
		return fail(out.err)
	}
	c.savedNow(sv, savedState{rows: next.ann.Rows(), file: vf, slots: int(h.slots), vec: h.lastVec, tom: h.lastTom})
	return saved, out, nil
}

// checkSample compares about restoreChecks evenly spaced rows of next (not removed) and its restoreNewest
// rows of the highest sequence numbers with the database: the vector of the row's sequence number must be
// of the row's chunk, whose document is the row's, and hold the bytes of the row's record in the vector
// file. The newest rows are where a database that diverged from the files differs first (a backup restored
// beneath them and written to again reuses the sequence numbers and chunk IDs past the backup's).
func (c *vectorCache) checkSample(ctx context.Context, tx *sql.Tx, sv *spaceVectors, next *vecSnapshot, removed map[int]bool) error {
	n := len(next.ids)
	var sample []int
	for i := 0; i < n; i += max(1, n/restoreChecks) {
		sample = append(sample, i)
	}
	sample = append(sample, newestRows(next.seqs, removed, restoreNewest)...)
	buf := make([]float32, sv.dim)
	for _, i := range sample {
		if removed[i] {
			continue
		}
		var chunk, doc int64
		var raw []byte
		err := tx.QueryRowContext(ctx, `SELECT v.chunk_id, c.doc_seq, v.vec FROM chunk_vectors v JOIN chunks c ON c.id = v.chunk_id
			WHERE v.seq = ? AND v.space_id = ?`, next.seqs[i], sv.spaceID).Scan(&chunk, &doc, &raw)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("the database has no vector %d of chunk %d", next.seqs[i], next.ids[i])
		} else if err != nil {
			return err
		}
		if chunk != next.ids[i] || doc != next.docs[i] {
			return fmt.Errorf("vector %d is of chunk %d in document %d in the database, of chunk %d in document %d in the index file",
				next.seqs[i], chunk, doc, next.ids[i], next.docs[i])
		}
		row, err := next.rows().Rows(i, i+1, buf)
		if err != nil {
			return err
		}
		if len(raw) != 4*len(row) {
			return fmt.Errorf("vector %d has %d bytes in the database", next.seqs[i], len(raw))
		}
		for d, x := range row {
			if math.Float32bits(x) != binary.LittleEndian.Uint32(raw[4*d:]) {
				return fmt.Errorf("vector %d differs between the database and the vector file", next.seqs[i])
			}
		}
	}
	return nil
}

// newestRows returns the positions of the k highest of seqs not removed (fewer when there are fewer).
func newestRows(seqs []int64, removed map[int]bool, k int) []int {
	top := make([]int, 0, k+1) // ascending by sequence number
	for i, q := range seqs {
		if removed[i] || len(top) == k && q <= seqs[top[0]] {
			continue
		}
		j, _ := slices.BinarySearchFunc(top, q, func(p int, q int64) int { return cmp.Compare(seqs[p], q) })
		top = slices.Insert(top, j, i)
		if len(top) > k {
			top = top[1:]
		}
	}
	return top
}

// loadToFile loads every vector of the space in tx from the database into a new vector file, n rows
// expected, and restores the index from saved by key when there is one. Rows are copied as the database
// stores them (little-endian float32, the file's layout), a block at a time, so that the load does not
// hold the vectors in memory.
func (c *vectorCache) loadToFile(ctx context.Context, tx *sql.Tx, sv *spaceVectors, n int, saved *vindex.Saved) (*vecSnapshot, error) {
	path := c.vecFilePath(sv.key)
	vf, err := createVecFile(path, sv.dim)
	if err != nil {
		return nil, err
	}
	next := &vecSnapshot{dim: sv.dim, ids: make([]int64, 0, n), seqs: make([]int64, 0, n), docs: make([]int64, 0, n), file: vf}
	if c.heapHolds(n, sv.dim) {
		next.vecs = make([]float32, 0, n*sv.dim)
	}
	err = func() error {
		rows, err := tx.QueryContext(ctx, `SELECT v.seq, v.chunk_id, c.doc_seq, v.vec FROM chunk_vectors v
			JOIN chunks c ON c.id = v.chunk_id WHERE v.space_id = ? ORDER BY v.seq`, sv.spaceID)
		if err != nil {
			return err
		}
		defer rows.Close()
		const block = 1024
		buf := make([]byte, 0, block*4*sv.dim)
		flush := func() error {
			if len(buf) == 0 {
				return nil
			}
			_, err := vf.appendRaw(buf)
			buf = buf[:0]
			return err
		}
		var raw sql.RawBytes
		for rows.Next() {
			var seq, chunk, doc int64
			if err := rows.Scan(&seq, &chunk, &doc, &raw); err != nil {
				return err
			}
			if len(raw) != 4*sv.dim {
				continue // cannot happen: writes check the dimension of the space
			}
			next.ids, next.seqs, next.docs = append(next.ids, chunk), append(next.seqs, seq), append(next.docs, doc)
			if next.vecs != nil {
				next.vecs = decodeVector(next.vecs, raw)
			}
			if buf = append(buf, raw...); len(buf) == cap(buf) {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if err := flush(); err != nil {
			return err
		}
		return vf.publish(path)
	}()
	if err != nil {
		vf.discard()
		return nil, err
	}
	c.loaded.Add(int64(len(next.ids)))
	next.slots = make([]int32, len(next.ids))
	for i := range next.slots {
		next.slots[i] = int32(i)
	}
	next.live = len(next.ids)
	sv.index(next)
	if saved != nil {
		c.restoreByKey(sv, saved, next)
	}
	return next, nil
}

// toFile writes v's vectors (in memory, v not yet published) to a new vector file, every row in order, and
// keeps them in memory too while Options.VectorHeap holds them.
func (c *vectorCache) toFile(sv *spaceVectors, v *vecSnapshot) error {
	path := c.vecFilePath(sv.key)
	vf, err := createVecFile(path, v.dim)
	if err != nil {
		return err
	}
	if _, err := vf.appendRows(v.vecs); err != nil {
		vf.discard()
		return err
	}
	if err := vf.publish(path); err != nil {
		vf.discard()
		return err
	}
	v.file = vf
	if !c.heapHolds(len(v.ids), v.dim) {
		v.vecs = nil
	}
	v.slots = make([]int32, len(v.ids))
	for i := range v.slots {
		v.slots[i] = int32(i)
	}
	return nil
}

// savedState is what the space's index file was last written from.
type savedState struct {
	rows     int
	file     *vecFile
	slots    int
	vec, tom int64
}

func (c *vectorCache) savedNow(sv *spaceVectors, st savedState) {
	sv.savedMu.Lock()
	sv.saved = st
	sv.savedMu.Unlock()
}

func (sv *spaceVectors) lastSaved() savedState {
	sv.savedMu.Lock()
	defer sv.savedMu.Unlock()
	return sv.saved
}

// vacuumDue reports whether v's vector file holds so many unused records that it should be written again.
func vacuumDue(v *vecSnapshot) bool {
	return v != nil && v.file != nil && int(v.file.n.Load()) > 2*v.live+vacuumMin
}

// maybePersist starts writing the space's files in the background when v, just published, has changed
// enough since they were written (see persistMin and vacuumMin). The caller holds sv.refresh.
func (c *vectorCache) maybePersist(sv *spaceVectors, v *vecSnapshot) {
	if v.file == nil || v.ann == nil || c.closing.Load() || !c.mayWrite(sv) {
		return
	}
	st := sv.lastSaved()
	changes := v.fileSlots - st.slots + int(v.lastTom-st.tom)
	if st.file == v.file && changes < max(persistMin, v.live/8) && !vacuumDue(v) {
		return
	}
	if !sv.saving.CompareAndSwap(false, true) {
		return
	}
	c.builds.Add(1)
	go func() {
		defer c.builds.Done()
		defer sv.saving.Store(false)
		sv.persist.Lock()
		defer sv.persist.Unlock()
		if vacuumDue(sv.snap.Load()) {
			if err := c.vacuum(sv); err != nil {
				c.s.log().Warn("cannot write the vector file again", slog.String("space", sv.key), slog.Any("err", err))
			}
		}
		if err := c.saveLatest(sv); err != nil {
			c.s.log().Warn("cannot write the vector index", slog.String("space", sv.key), slog.Any("err", err))
		}
	}()
}

// saveLatest writes the index file from the newest snapshot when it has an index. The caller holds
// sv.persist.
func (c *vectorCache) saveLatest(sv *spaceVectors) error {
	v := sv.snap.Load()
	if v == nil || v.ann == nil || !c.mayWrite(sv) {
		return nil
	}
	return c.save(sv, v)
}

// save writes v's index file (a temporary file renamed over the old one), after syncing v's vector file
// to disk. The caller holds sv.persist.
func (c *vectorCache) save(sv *spaceVectors, v *vecSnapshot) error {
	h := indexHeader{lastVec: v.lastVec, lastTom: v.lastTom}
	if v.file != nil {
		if err := v.file.f.Sync(); err != nil {
			return err
		}
		h.file, h.slots = v.file.id, int64(v.fileSlots)
	}
	path := c.indexFile(sv.key)
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	err = v.ann.Write(tmp, h.encode(), func(r int32) (vindex.Entry, bool) {
		e := vindex.Entry{Key: vindex.Key{v.ids[r], v.seqs[r]}, Doc: v.docs[r]}
		if v.file != nil {
			if v.slots[r] < 0 {
				return e, false
			}
			e.Slot = uint32(v.slots[r])
		}
		return e, v.docs[r] >= 0
	})
	if err == nil {
		err = tmp.Sync()
	}
	if err2 := tmp.Close(); err == nil {
		err = err2
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	c.savedNow(sv, savedState{rows: v.ann.Rows(), file: v.file, slots: v.fileSlots, vec: v.lastVec, tom: v.lastTom})
	return nil
}

// vacuum writes the space's vector file again with the live rows of the newest snapshot only, and
// publishes the snapshot with their new slots, unless its rows were renumbered meanwhile (then the next
// refresh tries again). The copy is made without the refresh lock; the rows appended during it are copied
// under the lock, before the new file replaces the old one (whose readers keep it open). The caller holds
// sv.persist.
func (c *vectorCache) vacuum(sv *spaceVectors) error {
	v := sv.snap.Load()
	if v == nil || v.file == nil {
		return nil
	}
	path := c.vecFilePath(sv.key)
	vf, err := createVecFile(path, v.dim)
	if err != nil {
		return err
	}
	slots := make([]int32, 0, len(v.ids))
	copyRows := func(src *vecSnapshot, lo, hi int) error {
		var live []int
		for i := lo; i < hi; i++ {
			slots = append(slots, -1)
			if src.docs[i] >= 0 && src.slots[i] >= 0 {
				live = append(live, i)
			}
		}
		buf := make([]float32, 0, 256*v.dim)
		var rows []int
		flush := func() error {
			first, err := vf.appendRows(buf)
			for j, i := range rows {
				slots[i] = int32(first + j)
			}
			buf, rows = buf[:0], rows[:0]
			return err
		}
		var werr error
		err := vindex.ForRows(src.rows(), live, v.dim, func(x int, row []float32) {
			buf, rows = append(buf, row...), append(rows, live[x])
			if len(rows) == 256 && werr == nil {
				werr = flush()
			}
		})
		if err == nil {
			err = werr
		}
		if err == nil {
			err = flush()
		}
		return err
	}
	if err := copyRows(v, 0, len(v.ids)); err != nil {
		vf.discard()
		return err
	}
	sv.refresh.Lock()
	defer sv.refresh.Unlock()
	cur := sv.snap.Load()
	if cur == nil || cur.base != v.base || cur.file != v.file {
		vf.discard()
		return nil
	}
	if err := copyRows(cur, len(v.ids), len(cur.ids)); err != nil {
		vf.discard()
		return err
	}
	if err := vf.publish(path); err != nil {
		vf.discard()
		return err
	}
	next := *cur
	next.file, next.slots, next.fileSlots, next.gen = vf, slots, int(vf.n.Load()), cur.gen+1
	sv.snap.Store(&next)
	return nil
}

// close stops index builds and the writing of files, writes the index files that changed since they were
// written (so that the next start does not load those rows again), and closes the vector files and lock
// files.
func (c *vectorCache) close() {
	c.closing.Store(true)
	c.cancel()
	c.builds.Wait()
	for _, sv := range *c.spaces.Load() {
		sv.persist.Lock()
		sv.refresh.Lock()
		if v := sv.snap.Load(); v != nil {
			st := sv.lastSaved()
			if v.ann != nil && c.mayWrite(sv) && (st.rows != v.ann.Rows() || st.file != v.file || st.vec != v.lastVec || st.tom != v.lastTom) {
				if err := c.save(sv, v); err != nil {
					c.s.log().Warn("cannot write the vector index", slog.String("space", sv.key), slog.Any("err", err))
				}
			}
			if v.file != nil {
				v.file.close()
			}
		}
		if l := sv.lock.Swap(nil); l != nil {
			l.Close()
		}
		sv.refresh.Unlock()
		sv.persist.Unlock()
	}
}
