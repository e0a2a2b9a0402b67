package vindex

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/bits"
	"slices"
)

// The file format (little-endian): magic "RAGDVIX", format version byte, then dim, lists, trained, the rows
// added since training, the number of entries and the length of the caller's header (uint32 each), the header, the centroids
// (float32), then per list the number of its entries (uint32) and each entry — key (two int64, e.g. chunk
// ID and the vector's sequence number), the caller's document (int64) and slot (uint32), the row's code
// (codeWords(dim) uint64) — and a CRC-32 (IEEE) of everything before it. A file of another version, a wrong
// dimension, a bad checksum or a short read is refused, and the caller builds the index again: a file is a
// cache, never trusted over the data.

const (
	magic = "RAGDVIX"
	// FormatVersion is the version of the file format Write writes and Read accepts. Version 1 had no codes
	// (they were computed again from the vectors at start-up) and no caller data.
	FormatVersion = 2
)

// ErrBadFile is returned by Read for a file that is not a valid index file of this version.
var ErrBadFile = errors.New("not a valid vector index file")

// Key identifies a row in a file independently of its position (e.g. chunk ID and vector sequence number,
// so that a re-embedded chunk is not taken for its old vector).
type Key [2]int64

// Entry is what a file keeps of a row besides its list and code: its key and two values of the caller's
// (the embedded store: the chunk's document, and where the row's float32 vector is in its vector file).
type Entry struct {
	Key  Key
	Doc  int64
	Slot uint32
}

// Write writes header (the caller's, returned by Read as is), the centroids, and the list, code and entry
// of every row for which entry returns ok.
func (ix *Index) Write(w io.Writer, header []byte, entry func(row int32) (Entry, bool)) error {
	crc := crc32.NewIEEE()
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<16)
	var b [8]byte
	u32 := func(v uint32) {
		binary.LittleEndian.PutUint32(b[:4], v)
		bw.Write(b[:4])
	}
	u64 := func(v uint64) {
		binary.LittleEndian.PutUint64(b[:], v)
		bw.Write(b[:])
	}
	type kept struct {
		j int
		e Entry
	}
	perList := make([][]kept, len(ix.lists))
	total := 0
	for c, l := range ix.lists {
		for j, r := range l {
			if e, ok := entry(r); ok {
				perList[c] = append(perList[c], kept{j, e})
			}
		}
		total += len(perList[c])
	}
	bw.WriteString(magic)
	bw.WriteByte(FormatVersion)
	u32(uint32(ix.dim))
	u32(uint32(len(ix.lists)))
	u32(uint32(ix.trained))
	u32(uint32(ix.added))
	u32(uint32(total))
	u32(uint32(len(header)))
	bw.Write(header)
	for _, f := range ix.centroids {
		u32(math.Float32bits(f))
	}
	nw := ix.nw
	for c, ks := range perList {
		u32(uint32(len(ks)))
		for _, k := range ks {
			u64(uint64(k.e.Key[0]))
			u64(uint64(k.e.Key[1]))
			u64(uint64(k.e.Doc))
			u32(k.e.Slot)
			for _, x := range ix.codes[c][k.j*nw : (k.j+1)*nw] {
				u64(x)
			}
		}
		perList[c] = nil
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(b[:4], crc.Sum32())
	_, err := w.Write(b[:4])
	return err
}

// Saved is an index file as read: the caller's header, the centroids, and every entry with its list and
// code, not yet tied to a matrix.
type Saved struct {
	// Header is the caller's header as written.
	Header []byte
	// Entries are the file's rows, list after list.
	Entries   []Entry
	dim, nw   int
	centroids []float32
	trained   int
	added     int
	ends      []int    // entries of list c are [ends[c-1], ends[c])
	codes     []uint64 // nw words per entry
}

// maxFileLists bounds the list count a file may claim, and maxHeader its header, so that a corrupt header
// cannot make Read allocate without limit.
const (
	maxFileLists = 1 << 20
	maxHeader    = 1 << 16
)

// Read reads an index file written by Write for vectors of dim dimensions.
func Read(r io.Reader, dim int) (*Saved, error) {
	crc := crc32.NewIEEE()
	br := bufio.NewReaderSize(r, 1<<16)
	tr := io.TeeReader(br, crc)
	bad := func(err error) (*Saved, error) {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("%w: %v", ErrBadFile, err)
	}
	head := make([]byte, len(magic)+1+24)
	if _, err := io.ReadFull(tr, head); err != nil {
		return bad(err)
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
	added := int(binary.LittleEndian.Uint32(h[12:]))
	n := int(binary.LittleEndian.Uint32(h[16:]))
	hlen := int(binary.LittleEndian.Uint32(h[20:]))
	if fdim != dim || lists == 0 || lists > maxFileLists || hlen > maxHeader {
		return nil, fmt.Errorf("%w: %d dimensions, %d lists, header of %d bytes (want %d dimensions)", ErrBadFile, fdim, lists, hlen, dim)
	}
	nw := codeWords(dim)
	s := &Saved{dim: dim, nw: nw, trained: trained, added: added, Header: make([]byte, hlen), centroids: make([]float32, lists*dim),
		ends: make([]int, lists)}
	if _, err := io.ReadFull(tr, s.Header); err != nil {
		return bad(err)
	}
	cb := make([]byte, 4*dim)
	for c := range lists {
		if _, err := io.ReadFull(tr, cb); err != nil {
			return bad(err)
		}
		for d := range dim {
			s.centroids[c*dim+d] = math.Float32frombits(binary.LittleEndian.Uint32(cb[4*d:]))
		}
	}
	// The entry count is checked against what the lists hold; the slices grow as entries are read, so a
	// corrupt count cannot allocate more than the file holds.
	s.Entries = make([]Entry, 0, min(n, 1<<20))
	s.codes = make([]uint64, 0, min(n, 1<<20)*nw)
	eb := make([]byte, 28+8*nw)
	for c := range lists {
		if _, err := io.ReadFull(tr, eb[:4]); err != nil {
			return bad(err)
		}
		count := int(binary.LittleEndian.Uint32(eb))
		if count > n-len(s.Entries) {
			return nil, fmt.Errorf("%w: list %d holds %d entries, more than the file's %d", ErrBadFile, c, count, n)
		}
		for range count {
			if _, err := io.ReadFull(tr, eb); err != nil {
				return bad(err)
			}
			s.Entries = append(s.Entries, Entry{
				Key:  Key{int64(binary.LittleEndian.Uint64(eb)), int64(binary.LittleEndian.Uint64(eb[8:]))},
				Doc:  int64(binary.LittleEndian.Uint64(eb[16:])),
				Slot: binary.LittleEndian.Uint32(eb[24:]),
			})
			for w := range nw {
				s.codes = append(s.codes, binary.LittleEndian.Uint64(eb[28+8*w:]))
			}
		}
		s.ends[c] = len(s.Entries)
	}
	if len(s.Entries) != n {
		return nil, fmt.Errorf("%w: the lists hold %d entries, the header says %d", ErrBadFile, len(s.Entries), n)
	}
	sum := crc.Sum32()
	if _, err := io.ReadFull(br, eb[:4]); err != nil {
		return bad(err)
	}
	if binary.LittleEndian.Uint32(eb) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrBadFile)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, fmt.Errorf("%w: trailing bytes", ErrBadFile)
	}
	return s, nil
}

// Index returns the saved index with row i being Entries[i]: the caller's rows are the file's entries, in
// file order.
func (s *Saved) Index() *Index {
	k := len(s.ends)
	ix := &Index{dim: s.dim, nw: s.nw, centroids: s.centroids, lists: make([][]int32, k), codes: make([][]uint64, k),
		pcs: make([][]uint16, k), rows: len(s.Entries), trained: s.trained, added: s.added}
	start := 0
	for c, end := range s.ends {
		l := make([]int32, end-start)
		pcs := make([]uint16, end-start)
		for j := range l {
			l[j] = int32(start + j)
			pcs[j] = popcount(s.codes[(start+j)*s.nw : (start+j+1)*s.nw])
		}
		ix.lists[c], ix.pcs[c] = l, pcs
		ix.codes[c] = s.codes[start*s.nw : end*s.nw : end*s.nw]
		start = end
	}
	return ix
}

func popcount(code []uint64) uint16 {
	n := 0
	for _, x := range code {
		n += bits.OnesCount64(x)
	}
	return uint16(n)
}

// Restore makes an index over rows [0, n) of src from the saved centroids: a row whose key the file has
// goes to its saved list with its saved code, any other row (added since the file was written) to its
// nearest list. It returns how many rows came from the file, or ErrBadFile when the saved entries do not
// match the vectors (see Check).
func (s *Saved) Restore(src Matrix, n int, key func(row int32) Key) (*Index, int, error) {
	at := make(map[Key]int32, len(s.Entries))
	for i, e := range s.Entries {
		at[e.Key] = int32(i)
	}
	list := make([]int32, len(s.Entries))
	for c, end := range s.ends {
		start := 0
		if c > 0 {
			start = s.ends[c-1]
		}
		for i := start; i < end; i++ {
			list[i] = int32(c)
		}
	}
	ix := &Index{dim: s.dim, nw: s.nw, centroids: s.centroids, lists: make([][]int32, len(s.ends)),
		codes: make([][]uint64, len(s.ends)), pcs: make([][]uint16, len(s.ends)), trained: s.trained, added: s.added}
	entry := make([]int32, n) // the file entry of each row, -1 for a row not in the file
	var reused []int32
	for r := range n {
		entry[r] = -1
		if i, ok := at[key(int32(r))]; ok {
			entry[r] = i
			reused = append(reused, int32(r))
		}
	}
	at = nil
	// Rows from the file go to their saved lists with their codes (checked on a sample), the others are
	// assigned as Add does.
	if err := ix.checkRows(src, sampleOf(reused), func(r int32) (int32, []uint64) {
		i := entry[r]
		return list[i], s.codes[int(i)*s.nw : (int(i)+1)*s.nw]
	}); err != nil {
		return nil, 0, err
	}
	var fresh []int
	for r := range n {
		if entry[r] < 0 {
			fresh = append(fresh, r)
		}
	}
	assign, codes, pcs, err := ix.assign(src, fresh)
	if err != nil {
		return nil, 0, err
	}
	f := 0
	return ix.place(n, func(r int) (int32, []uint64, uint16) {
		if i := entry[r]; i >= 0 {
			code := s.codes[int(i)*s.nw : (int(i)+1)*s.nw]
			return list[i], code, popcount(code)
		}
		f++
		return assign[f-1], codes[(f-1)*s.nw : f*s.nw], pcs[f-1]
	}), len(reused), nil
}

// Check reports ErrBadFile when the index's rows do not match src: the vectors of a sample of rows
// (restoreChecks of them, evenly spaced) must give the codes the index holds for them, and at least nine
// in ten must be in their nearest list (every row is when it is written: the centroids do not change).
// A file of other vectors (a database replaced under the same name, a vector file of another index) is
// refused.
func (ix *Index) Check(src Matrix) error {
	where := make(map[int32][2]int, restoreChecks)
	var rows []int32
	for _, r := range sampleOf(allRows(ix.rows)) {
		where[r] = [2]int{-1, -1}
		rows = append(rows, r)
	}
	for c, l := range ix.lists {
		for j, r := range l {
			if _, ok := where[r]; ok {
				where[r] = [2]int{c, j}
			}
		}
	}
	return ix.checkRows(src, rows, func(r int32) (int32, []uint64) {
		w := where[r]
		if w[0] < 0 {
			return -1, nil
		}
		return int32(w[0]), ix.codes[w[0]][w[1]*ix.nw : (w[1]+1)*ix.nw]
	})
}

// checkRows compares the codes and lists of rows (ascending) that saved gives with those their vectors in
// src give.
func (ix *Index) checkRows(src Matrix, rows []int32, saved func(r int32) (list int32, code []uint64)) error {
	rs := make([]int, len(rows))
	for i, r := range rows {
		rs[i] = int(r)
	}
	agree, codesDiffer := 0, 0
	code := make([]uint64, 0, ix.nw)
	err := ForRows(src, rs, ix.dim, func(i int, row []float32) {
		list, want := saved(rows[i])
		got, _ := encode(code[:0], row, ix.nw)
		if want == nil || !slices.Equal(got, want) {
			codesDiffer++
		}
		if nearest(ix.centroids, ix.dim, row) == list {
			agree++
		}
	})
	if err != nil {
		return err
	}
	if codesDiffer > 0 || agree*10 < len(rows)*9 {
		return fmt.Errorf("%w: of %d sampled rows, %d have other codes and %d are not in their nearest list", ErrBadFile,
			len(rows), codesDiffer, len(rows)-agree)
	}
	return nil
}

// restoreChecks is about how many rows Check and Restore compare with their vectors.
const restoreChecks = 64

// sampleOf returns about restoreChecks evenly spaced rows of rows, in order.
func sampleOf(rows []int32) []int32 {
	var out []int32
	for i := 0; i < len(rows); i += max(1, len(rows)/restoreChecks) {
		out = append(out, rows[i])
	}
	return out
}

func allRows(n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(i)
	}
	return out
}
