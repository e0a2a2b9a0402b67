package vindex

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
)

// The file format (little-endian): magic "RAGDVIX", format version byte, then dim, lists, trained and the
// number of entries (uint32 each), the centroids (float32), one entry per live row — its key (two int64,
// e.g. chunk ID and the vector's sequence number) and its list (uint32) — and a CRC-32 (IEEE) of everything
// before it. A file of another version, a wrong dimension, a bad checksum or a short read is refused, and
// the caller builds the index again: a file is a cache, never trusted over the data.

const (
	magic = "RAGDVIX"
	// FormatVersion is the version of the file format Write writes and Read accepts.
	FormatVersion = 1
)

// ErrBadFile is returned by Read for a file that is not a valid index file of this version.
var ErrBadFile = errors.New("not a valid vector index file")

// Key identifies a row in a file independently of its position (e.g. chunk ID and vector sequence number,
// so that a re-embedded chunk is not taken for its old vector).
type Key [2]int64

// Write writes the centroids and the list of every row for which key returns ok.
func (ix *Index) Write(w io.Writer, key func(row int32) (Key, bool)) error {
	type entry struct {
		k    Key
		list uint32
	}
	var entries []entry
	for c, l := range ix.lists {
		for _, r := range l {
			if k, ok := key(r); ok {
				entries = append(entries, entry{k, uint32(c)})
			}
		}
	}
	crc := crc32.NewIEEE()
	bw := bufio.NewWriter(io.MultiWriter(w, crc))
	bw.WriteString(magic)
	bw.WriteByte(FormatVersion)
	var b [8]byte
	u32 := func(v uint32) {
		binary.LittleEndian.PutUint32(b[:4], v)
		bw.Write(b[:4])
	}
	u32(uint32(ix.dim))
	u32(uint32(len(ix.lists)))
	u32(uint32(ix.trained))
	u32(uint32(len(entries)))
	for _, f := range ix.centroids {
		u32(math.Float32bits(f))
	}
	for _, e := range entries {
		binary.LittleEndian.PutUint64(b[:], uint64(e.k[0]))
		bw.Write(b[:])
		binary.LittleEndian.PutUint64(b[:], uint64(e.k[1]))
		bw.Write(b[:])
		u32(e.list)
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(b[:4], crc.Sum32())
	_, err := w.Write(b[:4])
	return err
}

// Saved is an index file as read: centroids and the list of each row key, not yet tied to a matrix.
type Saved struct {
	dim       int
	centroids []float32
	trained   int
	lists     map[Key]int32
}

// maxFileLists bounds the list count a file may claim, so that a corrupt header cannot make Read allocate
// without limit.
const maxFileLists = 1 << 20

// Read reads an index file written by Write for vectors of dim dimensions.
func Read(r io.Reader, dim int) (*Saved, error) {
	crc := crc32.NewIEEE()
	br := bufio.NewReader(r)
	tr := io.TeeReader(br, crc)
	head := make([]byte, len(magic)+1+16)
	if _, err := io.ReadFull(tr, head); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadFile, err)
	}
	if string(head[:len(magic)]) != magic {
		return nil, fmt.Errorf("%w: no magic", ErrBadFile)
	}
	if v := head[len(magic)]; v != FormatVersion {
		return nil, fmt.Errorf("%w: format version %d, want %d", ErrBadFile, v, FormatVersion)
	}
	h := head[len(magic)+1:]
	fdim := int(binary.LittleEndian.Uint32(h[0:]))
	lists := int(binary.LittleEndian.Uint32(h[4:]))
	trained := int(binary.LittleEndian.Uint32(h[8:]))
	n := int(binary.LittleEndian.Uint32(h[12:]))
	if fdim != dim || lists == 0 || lists > maxFileLists {
		return nil, fmt.Errorf("%w: %d dimensions and %d lists (want %d dimensions)", ErrBadFile, fdim, lists, dim)
	}
	s := &Saved{dim: dim, trained: trained, centroids: make([]float32, lists*dim), lists: make(map[Key]int32, min(n, 1<<24))}
	buf := make([]byte, 20)
	for i := range s.centroids {
		if _, err := io.ReadFull(tr, buf[:4]); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadFile, err)
		}
		s.centroids[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf))
	}
	for range n {
		if _, err := io.ReadFull(tr, buf); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadFile, err)
		}
		k := Key{int64(binary.LittleEndian.Uint64(buf)), int64(binary.LittleEndian.Uint64(buf[8:]))}
		l := binary.LittleEndian.Uint32(buf[16:])
		if int(l) >= lists {
			return nil, fmt.Errorf("%w: list %d of %d", ErrBadFile, l, lists)
		}
		s.lists[k] = int32(l)
	}
	sum := crc.Sum32()
	if _, err := io.ReadFull(br, buf[:4]); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadFile, err)
	}
	if binary.LittleEndian.Uint32(buf) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrBadFile)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, fmt.Errorf("%w: trailing bytes", ErrBadFile)
	}
	return s, nil
}

// Restore makes an index over rows [0, n) of vecs from the saved centroids: a row whose key the file has
// goes to its saved list, any other row (added since the file was written) to its nearest list. It returns
// how many rows came from the file, or ErrBadFile when the saved lists do not match the vectors: every row
// is in its nearest list when written, so a sample of the rows taken from the file is checked against the
// centroids, and a file of other vectors (a database replaced under the same name) is refused.
func (s *Saved) Restore(vecs []float32, n int, key func(row int32) Key) (*Index, int, error) {
	k := len(s.centroids) / s.dim
	ix := &Index{dim: s.dim, centroids: s.centroids, lists: make([][]int32, k), codes: make([][]byte, k), trained: s.trained}
	assign := make([]int32, n)
	var reused []int
	for r := range n {
		if l, ok := s.lists[key(int32(r))]; ok {
			assign[r] = l
			reused = append(reused, r)
		} else {
			assign[r] = -1
		}
	}
	checked, agree := 0, 0
	for i := 0; i < len(reused); i += max(1, len(reused)/restoreChecks) {
		r := reused[i]
		checked++
		if nearest(s.centroids, s.dim, vecs[r*s.dim:(r+1)*s.dim]) == assign[r] {
			agree++
		}
	}
	if agree*10 < checked*9 {
		return nil, 0, fmt.Errorf("%w: %d of %d sampled rows are not in their nearest list", ErrBadFile, checked-agree, checked)
	}
	parallel(n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			if assign[r] < 0 {
				assign[r] = nearest(s.centroids, s.dim, vecs[r*s.dim:(r+1)*s.dim])
			}
		}
	})
	return ix.place(vecs, n, func(r int) int32 { return assign[r] }), len(reused), nil
}

// restoreChecks is about how many rows Restore checks against the centroids.
const restoreChecks = 64
