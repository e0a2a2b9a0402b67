package sqlite

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync/atomic"
	"unsafe"
)

// A vector file keeps the float32 vectors of one embedding space beside the database
// (ragd.db.vectors-<space>), so that a large space's vectors are not held in the Go heap: the index keeps
// only its codes in memory and reads the few rows it rescores with positional reads (pread), which go
// through the operating system's page cache, not the process's resident memory (a memory map's pages
// would count there). It is a cache of the chunk_vectors table: the database stays the source of truth,
// and the file is only trusted through the index file that names it (annindex.go), after checks against
// the database.
//
// Layout: a 64-byte header — magic "RAGDVEC\x00", format version (uint32), dimension (uint32), a random
// identity of 16 bytes (a new file has a new one; the index file records the identity of the vector file
// it refers to) — then one record per slot: the vector's dim float32 values, little-endian, slot j at
// 64 + j·4·dim. Slots are appended in the order the cache loads rows and never rewritten; a row the cache
// drops leaves its slot unused until the file is written again without them (vacuum). Only the process
// that holds the space's lock file writes it.

const (
	vecFileMagic   = "RAGDVEC\x00"
	vecFileVersion = 1
	vecFileHeader  = 64
)

type vecFile struct {
	path string
	f    *os.File
	dim  int
	id   [16]byte
	// n is the number of records written. Appends and truncation happen under the space's refresh lock;
	// readers read only the slots of the snapshot they hold, all below n.
	n atomic.Int64
}

// recBytes is the size of one record.
func (vf *vecFile) recBytes() int64 { return int64(vf.dim) * 4 }

// createVecFile creates a new vector file with a fresh identity under a temporary name beside path, for
// publish to rename to path once written.
func createVecFile(path string, dim int) (*vecFile, error) {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, err
	}
	vf := &vecFile{path: f.Name(), f: f, dim: dim}
	if _, err := rand.Read(vf.id[:]); err != nil {
		f.Close()
		return nil, err
	}
	var h [vecFileHeader]byte
	copy(h[:], vecFileMagic)
	binary.LittleEndian.PutUint32(h[8:], vecFileVersion)
	binary.LittleEndian.PutUint32(h[12:], uint32(dim))
	copy(h[16:32], vf.id[:])
	if _, err := f.WriteAt(h[:], 0); err != nil {
		vf.discard()
		return nil, err
	}
	return vf, nil
}

// publish renames a file made by createVecFile to path (replacing the file there, which readers that have
// it open keep reading).
func (vf *vecFile) publish(path string) error {
	if err := os.Rename(vf.path, path); err != nil {
		return err
	}
	vf.path = path
	return nil
}

// discard closes and removes a file that is not to be published.
func (vf *vecFile) discard() {
	vf.f.Close()
	os.Remove(vf.path)
}

// errBadVecFile is a vector file that cannot be used: another format, dimension or identity.
var errBadVecFile = errors.New("not a usable vector file")

// openVecFile opens the vector file at path for vectors of dim dimensions. A partial record at its end (a
// write cut short) is not counted.
func openVecFile(path string, dim int) (*vecFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	var h [vecFileHeader]byte
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, vecFileHeader), h[:]); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %v", errBadVecFile, err)
	}
	if !bytes.Equal(h[:8], []byte(vecFileMagic)) || binary.LittleEndian.Uint32(h[8:]) != vecFileVersion ||
		int(binary.LittleEndian.Uint32(h[12:])) != dim {
		f.Close()
		return nil, fmt.Errorf("%w: header of another format or dimension", errBadVecFile)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	vf := &vecFile{path: path, f: f, dim: dim}
	copy(vf.id[:], h[16:32])
	vf.n.Store((st.Size() - vecFileHeader) / vf.recBytes())
	return vf, nil
}

// asBytes is the memory of v as bytes: the file's records are little-endian float32, the layout of
// float32 in memory on the little-endian machines ragd runs on (littleEndian below; others convert).
func asBytes(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
}

var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// appendRows writes vecs (whole records) after the last record and returns the slot of the first.
func (vf *vecFile) appendRows(vecs []float32) (int, error) {
	first := vf.n.Load()
	if len(vecs) == 0 {
		return int(first), nil
	}
	b := asBytes(vecs)
	if !littleEndian {
		b = make([]byte, 4*len(vecs))
		for i, x := range vecs {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
	}
	if _, err := vf.f.WriteAt(b, vecFileHeader+first*vf.recBytes()); err != nil {
		return 0, fmt.Errorf("write %s: %w", vf.path, err)
	}
	vf.n.Add(int64(len(vecs) / vf.dim))
	return int(first), nil
}

// appendRaw is appendRows of records already in the file's layout (little-endian float32).
func (vf *vecFile) appendRaw(b []byte) (int, error) {
	first := vf.n.Load()
	if _, err := vf.f.WriteAt(b, vecFileHeader+first*vf.recBytes()); err != nil {
		return 0, fmt.Errorf("write %s: %w", vf.path, err)
	}
	vf.n.Add(int64(len(b)) / vf.recBytes())
	return int(first), nil
}

// truncate drops the records from slot n on.
func (vf *vecFile) truncate(n int) error {
	if err := vf.f.Truncate(vecFileHeader + int64(n)*vf.recBytes()); err != nil {
		return err
	}
	vf.n.Store(int64(n))
	return nil
}

// read fills dst (a whole number of records) from slot on.
func (vf *vecFile) read(slot int, dst []float32) error {
	if _, err := vf.f.ReadAt(asBytes(dst), vecFileHeader+int64(slot)*vf.recBytes()); err != nil {
		return fmt.Errorf("read %s: %w", vf.path, err)
	}
	if !littleEndian {
		b := asBytes(dst)
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	}
	return nil
}

func (vf *vecFile) close() error { return vf.f.Close() }

// readRows returns the vectors of slots (row i of the result is slot slots[i]; -1 reads as zeros) in one
// pass over the file in large reads, whatever the order of the slots.
func (vf *vecFile) readRows(slots []int32) ([]float32, error) {
	dim := vf.dim
	out := make([]float32, len(slots)*dim)
	n := int(vf.n.Load())
	rowOf := make([]int32, n) // the row of each slot, -1 for none
	for i := range rowOf {
		rowOf[i] = -1
	}
	for i, s := range slots {
		if s >= 0 {
			rowOf[s] = int32(i)
		}
	}
	const block = 1024
	buf := make([]float32, block*dim)
	for first := 0; first < n; first += block {
		k := min(block, n-first)
		if err := vf.read(first, buf[:k*dim]); err != nil {
			return nil, err
		}
		for j := range k {
			if r := rowOf[first+j]; r >= 0 {
				copy(out[int(r)*dim:(int(r)+1)*dim], buf[j*dim:(j+1)*dim])
			}
		}
	}
	return out, nil
}

// fileRows is the rows of a snapshot whose vectors are in a vector file: row i is slot slots[i].
type fileRows struct {
	vf    *vecFile
	slots []int32
}

// Rows reads rows [lo, hi) into buf, one read per run of consecutive slots. A row without a slot (removed
// before the file was last written) reads as zeros.
func (m fileRows) Rows(lo, hi int, buf []float32) ([]float32, error) {
	dim := m.vf.dim
	out := buf[:(hi-lo)*dim]
	for i := lo; i < hi; {
		if m.slots[i] < 0 {
			clear(out[(i-lo)*dim : (i-lo+1)*dim])
			i++
			continue
		}
		j := i + 1
		for j < hi && m.slots[j] == m.slots[j-1]+1 {
			j++
		}
		if err := m.vf.read(int(m.slots[i]), out[(i-lo)*dim:(j-lo)*dim]); err != nil {
			return nil, err
		}
		i = j
	}
	return out, nil
}
