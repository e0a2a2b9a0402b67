package extract

import (
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/richardlehane/mscfb"

	"github.com/ragd/ragd/internal/rag"
)

// HWP 5.0 record tags (HWPTAG_BEGIN = 0x10), from Hancom's published "HWP 5.0 file format" document.
const (
	hwpTagStyle      = 0x10 + 26
	hwpTagParaHeader = 0x10 + 50
	hwpTagParaText   = 0x10 + 51
	hwpTagLineSeg    = 0x10 + 53
	hwpTagCtrlHeader = 0x10 + 55
	hwpTagListHeader = 0x10 + 56
	hwpTagTable      = 0x10 + 61
)

// Control IDs (MAKE_4CHID, stored little-endian) of the controls whose paragraph lists are read differently.
var (
	hwpCtrlTable    = ctrlID("tbl ")
	hwpCtrlHeader   = ctrlID("head")
	hwpCtrlFooter   = ctrlID("foot")
	hwpCtrlFootnote = ctrlID("fn  ")
	hwpCtrlEndnote  = ctrlID("en  ")
	hwpCtrlComment  = ctrlID("tcmt")
)

func ctrlID(s string) uint32 {
	return uint32(s[0])<<24 | uint32(s[1])<<16 | uint32(s[2])<<8 | uint32(s[3])
}

var hwpSectionRe = regexp.MustCompile(`^Section(\d+)$`)

// extractHWP reads an HWP 5.0 document: an OLE compound file (github.com/richardlehane/mscfb) whose
// FileHeader says whether its streams are compressed, whose DocInfo holds the paragraph styles and whose
// BodyText/Section<N> streams hold the text as records (raw deflate when compressed). Paragraphs, headings
// (paragraphs of an outline style, "개요 N"), tables (cells placed by their address; the first row is the
// header), footnotes and endnotes (as paragraphs after the paragraph citing them) and the text of other
// objects (text boxes) are read; running headers and footers and hidden comments are not. Pages come from the
// line layout the file records (recordedPages).
//
// Every stream is read through the budget (inflated bytes per stream and in total); no length field of the
// file is trusted for an allocation: a record is read as its bytes arrive.
func extractHWP(name string, data []byte, b *budget) (x *rag.Extracted, err error) {
	defer func() {
		// The compound-file reader is a dependency: a malformed file it does not anticipate must fail this
		// document alone.
		if p := recover(); p != nil {
			x, err = nil, rag.Errorf(rag.CodeInvalid, "%s: corrupt HWP (%v)", name, p)
		}
	}()
	cf, err := mscfb.New(bytes.NewReader(data))
	if err != nil {
		return nil, rag.WrapError(rag.CodeInvalid, err, "%s: not an HWP 5.0 file (not an OLE compound file)", name)
	}
	var header, docInfo *mscfb.File
	type section struct {
		n int
		f *mscfb.File
	}
	var sections []section
	for f, err := cf.Next(); err == nil; f, err = cf.Next() {
		switch {
		case len(f.Path) == 0 && f.Name == "FileHeader":
			header = f
		case len(f.Path) == 0 && f.Name == "DocInfo":
			docInfo = f
		case len(f.Path) == 1 && f.Path[0] == "BodyText":
			if m := hwpSectionRe.FindStringSubmatch(f.Name); m != nil {
				if n, err := strconv.Atoi(m[1]); err == nil {
					sections = append(sections, section{n, f})
				}
			}
		}
	}
	if header == nil {
		return nil, rag.Errorf(rag.CodeInvalid, "%s: not an HWP 5.0 file (no FileHeader)", name)
	}
	var fh [256]byte
	if _, err := io.ReadFull(header, fh[:]); err != nil || !bytes.HasPrefix(fh[:], []byte("HWP Document File")) {
		return nil, rag.Errorf(rag.CodeInvalid, "%s: not an HWP 5.0 file (bad FileHeader)", name)
	}
	props := binary.LittleEndian.Uint32(fh[36:])
	compressed := props&1 != 0
	switch {
	case props&2 != 0:
		return nil, rag.Errorf(rag.CodeInvalid, "%s: the HWP file is password-protected", name)
	case props&4 != 0:
		return nil, rag.Errorf(rag.CodeInvalid, "%s: the HWP file is a distribution document (배포용 문서), whose text is encrypted", name)
	}
	if len(sections) == 0 {
		return nil, rag.Errorf(rag.CodeInvalid, "%s: corrupt HWP (no BodyText section)", name)
	}
	slices.SortFunc(sections, func(a, b section) int { return a.n - b.n })
	r := &hwpReader{b: b, out: blockList{budget: b}, styles: map[int]int{}}
	open := func(f *mscfb.File, member string) *bufio.Reader {
		// A stream cannot hold more than the file: a forged size or a sector chain that loops ends there.
		var s io.Reader = io.LimitReader(f, int64(len(data)))
		if compressed {
			s = flate.NewReader(s)
		}
		return bufio.NewReader(b.member(member, s))
	}
	fail := func(err error, what string) error {
		if berr := b.overBudget(err); berr != nil {
			return berr
		}
		return rag.WrapError(rag.CodeInvalid, err, "%s: corrupt HWP (%s)", name, what)
	}
	if docInfo != nil {
		if err := r.readStyles(open(docInfo, "DocInfo")); err != nil {
			return nil, fail(err, "DocInfo")
		}
	}
	for _, s := range sections {
		member := "BodyText/" + s.f.Name
		r.pages.section()
		if err := r.readSection(open(s.f, member)); err != nil {
			return nil, fail(err, member)
		}
		if err := r.out.err(); err != nil {
			return nil, err
		}
	}
	return r.pages.extracted(r.out.blocks), nil
}

// hwpRecord is one record's header and, for the records the reader looks at, its data.
type hwpRecord struct {
	tag, level int
	data       []byte
}

var errHWPRecord = errors.New("truncated record")

// next reads the next record; io.EOF at a clean end. Only the records in keep have their data read (as it
// arrives, never allocated from the size field); the others are skipped.
func nextHWPRecord(r *bufio.Reader, b *budget, keep func(tag int) bool) (hwpRecord, error) {
	var h [4]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return hwpRecord{}, io.EOF
		}
		return hwpRecord{}, errHWPRecord
	}
	v := binary.LittleEndian.Uint32(h[:])
	rec := hwpRecord{tag: int(v & 0x3FF), level: int(v >> 10 & 0x3FF)}
	size := int64(v >> 20)
	if size == 0xFFF {
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return hwpRecord{}, errHWPRecord
		}
		size = int64(binary.LittleEndian.Uint32(h[:]))
	}
	if err := b.check(); err != nil {
		return hwpRecord{}, err
	}
	if !keep(rec.tag) {
		if n, err := io.CopyN(io.Discard, r, size); n != size {
			return hwpRecord{}, cmpErr(err)
		}
		return rec, nil
	}
	data, err := io.ReadAll(io.LimitReader(r, size))
	if err != nil || int64(len(data)) != size {
		return hwpRecord{}, cmpErr(err)
	}
	rec.data = data
	return rec, nil
}

func cmpErr(err error) error {
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return errHWPRecord
}

// hwpReader turns the records of the BodyText sections into blocks.
type hwpReader struct {
	b      *budget
	out    blockList
	styles map[int]int // style index → outline level (1-based)
	pages  recordedPages

	// the body paragraph being read
	inPara    bool
	level     int
	para      strings.Builder
	pageBreak bool
	segs      int
	segFirst  int
	segLast   int
	items     []hwpxItem // the paragraph's text and tables, in order
	notes     []string

	// controls inside the body paragraph: ctrlLevel is the level of the control's header record; records
	// deeper than it belong to it
	ctrl      uint32
	ctrlLevel int
	ctrlText  strings.Builder // a note's or text box's text

	cells bool // the table's TABLE record was read: the lists that follow are its cells (before it, its caption)
	rows  [][]string
	cell  strings.Builder
	col   int
	row   int
	open  bool // a cell is open
}

func hwpKeep(tag int) bool {
	switch tag {
	case hwpTagParaHeader, hwpTagParaText, hwpTagLineSeg, hwpTagCtrlHeader, hwpTagListHeader, hwpTagTable, hwpTagStyle:
		return true
	}
	return false
}

// readStyles reads the STYLE records of DocInfo: a style named "개요 N" or "Outline N" makes its paragraphs
// headings of level N.
func (r *hwpReader) readStyles(s *bufio.Reader) error {
	idx := 0
	for {
		rec, err := nextHWPRecord(s, r.b, func(tag int) bool { return tag == hwpTagStyle })
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if rec.tag != hwpTagStyle {
			continue
		}
		d := rec.data
		for range 2 { // local name, then English name: WORD length + WCHARs
			if len(d) < 2 {
				break
			}
			n := int(binary.LittleEndian.Uint16(d))
			if 2+2*n > len(d) {
				break
			}
			name := strings.ToLower(strings.TrimSpace(utf16String(d[2 : 2+2*n])))
			d = d[2+2*n:]
			if m := outlineStyleRe.FindStringSubmatch(name); m != nil {
				lv, _ := strconv.Atoi(m[1])
				r.styles[idx] = min(max(lv, 1), 9)
				break
			}
		}
		idx++
	}
}

func utf16String(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u))
}

// readSection reads one BodyText section's records.
func (r *hwpReader) readSection(s *bufio.Reader) error {
	for {
		rec, err := nextHWPRecord(s, r.b, hwpKeep)
		if errors.Is(err, io.EOF) {
			r.endParagraph()
			return nil
		}
		if err != nil {
			return err
		}
		r.record(rec)
		if err := r.out.err(); err != nil {
			return err
		}
	}
}

func (r *hwpReader) record(rec hwpRecord) {
	// A record at or above the open control's level ends the control.
	if r.ctrl != 0 && rec.level <= r.ctrlLevel {
		r.endControl()
	}
	switch {
	case rec.tag == hwpTagParaHeader && rec.level == 0:
		r.endParagraph()
		r.inPara = true
		r.level, r.pageBreak, r.segs = 0, false, 0
		if len(rec.data) >= 12 {
			r.level = r.styles[int(rec.data[10])]
			r.pageBreak = rec.data[11]&0x04 != 0
		}
	case rec.tag == hwpTagParaText && rec.level == 1 && r.ctrl == 0:
		r.text(&r.para, rec.data)
	case rec.tag == hwpTagLineSeg && rec.level == 1 && r.ctrl == 0:
		// 36 bytes a line: text position, then the line's vertical position
		for i := 0; i+8 <= len(rec.data); i += 36 {
			v := int(int32(binary.LittleEndian.Uint32(rec.data[i+4:])))
			if r.segs == 0 {
				r.segFirst = v
			}
			r.segLast = v
			r.segs++
		}
	case rec.tag == hwpTagCtrlHeader && r.ctrl == 0 && rec.level == 1 && len(rec.data) >= 4:
		r.ctrl = binary.LittleEndian.Uint32(rec.data)
		r.ctrlLevel = rec.level
		r.ctrlText.Reset()
		if r.ctrl == hwpCtrlTable {
			if s := r.para.String(); strings.TrimSpace(s) != "" {
				r.items = append(r.items, hwpxItem{text: s})
			}
			r.para.Reset()
			r.rows, r.open, r.cells = nil, false, false
		}
	case r.ctrl == hwpCtrlTable && rec.tag == hwpTagTable && rec.level == r.ctrlLevel+1:
		r.cells = true
	case r.ctrl == hwpCtrlTable && r.cells && rec.tag == hwpTagListHeader && rec.level == r.ctrlLevel+1:
		r.endCell()
		r.open = true
		r.cell.Reset()
		r.col, r.row = -1, -1
		if len(rec.data) >= 12 {
			r.col = int(binary.LittleEndian.Uint16(rec.data[8:]))
			r.row = int(binary.LittleEndian.Uint16(rec.data[10:]))
		}
	case r.ctrl == hwpCtrlTable && r.cells && rec.tag == hwpTagParaText:
		if r.cell.Len() > 0 {
			r.cell.WriteByte(' ')
		}
		r.text(&r.cell, rec.data)
	case r.ctrl != 0 && rec.tag == hwpTagParaText:
		switch r.ctrl {
		case hwpCtrlHeader, hwpCtrlFooter, hwpCtrlComment:
		default:
			if r.ctrlText.Len() > 0 {
				r.ctrlText.WriteByte(' ')
			}
			r.text(&r.ctrlText, rec.data)
		}
	}
}

// text appends the characters of a PARA_TEXT record (UTF-16LE with inline and extended controls, which take
// eight code units, and character controls, which take one).
func (r *hwpReader) text(w *strings.Builder, d []byte) {
	u := make([]uint16, 0, len(d)/2)
	for i := 0; i+1 < len(d); i += 2 {
		c := binary.LittleEndian.Uint16(d[i:])
		if c >= 32 {
			u = append(u, c)
			continue
		}
		switch c {
		case 9:
			u = append(u, '\t')
		case 10:
			u = append(u, '\n')
		case 24, 30, 31:
			u = append(u, ' ')
		}
		switch c {
		case 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23:
			i += 14 // the control's other seven code units
		}
	}
	s := string(utf16.Decode(u))
	if r.b.rawChars(len(u)) == nil {
		w.WriteString(s)
	}
}

func (r *hwpReader) endCell() {
	if !r.open {
		return
	}
	r.open = false
	row, col := r.row, r.col
	if row < 0 || col < 0 || col >= maxTableCols || row > len(r.rows) {
		// no usable address: the next cell of the last row
		row = max(len(r.rows)-1, 0)
		col = -1
	}
	for len(r.rows) <= row {
		r.rows = append(r.rows, nil)
	}
	if col < 0 {
		col = len(r.rows[row])
	}
	for len(r.rows[row]) < col {
		r.rows[row] = append(r.rows[row], "")
	}
	if col < len(r.rows[row]) {
		r.rows[row][col] += " " + r.cell.String()
	} else {
		r.rows[row] = append(r.rows[row], r.cell.String())
	}
	r.cell.Reset()
}

func (r *hwpReader) endControl() {
	switch r.ctrl {
	case hwpCtrlTable:
		r.endCell()
		if s := strings.TrimSpace(r.ctrlText.String()); s != "" { // the caption
			r.items = append(r.items, hwpxItem{text: s})
		}
		r.items = append(r.items, hwpxItem{table: true, rows: r.rows, head: 1})
		r.rows = nil
	case hwpCtrlFootnote, hwpCtrlEndnote:
		if s := strings.TrimSpace(r.ctrlText.String()); s != "" {
			r.notes = append(r.notes, s)
		}
	default:
		if s := strings.TrimSpace(r.ctrlText.String()); s != "" {
			r.items = append(r.items, hwpxItem{text: s})
		}
	}
	r.ctrl = 0
	r.ctrlText.Reset()
}

// endParagraph emits the body paragraph just read, its tables and objects, then its notes.
func (r *hwpReader) endParagraph() {
	if r.ctrl != 0 {
		r.endControl()
	}
	if !r.inPara {
		return
	}
	r.inPara = false
	items := r.items
	if s := r.para.String(); strings.TrimSpace(s) != "" {
		// The paragraph's own text comes first: its controls' records follow its text record.
		items = append([]hwpxItem{{text: s}}, items...)
	}
	r.para.Reset()
	page := r.pages.page
	if r.segs > 0 {
		page = r.pages.paragraph(r.segFirst, r.segLast, r.pageBreak)
	}
	emitItems(&r.out, page, r.level, items, r.notes)
	r.items, r.notes = r.items[:0], r.notes[:0]
}

// emitItems adds the blocks of one body paragraph of a word-processor document (HWP, HWPX) on its page: its
// text (a heading when the paragraph has an outline level and nothing else), its tables and objects, then
// its notes.
func emitItems(out *blockList, page, level int, items []hwpxItem, notes []string) {
	for _, it := range items {
		switch {
		case it.table:
			out.table(page, it.rows, it.head)
		case level > 0 && len(items) == 1:
			out.heading(page, level, it.text)
		default:
			out.paragraph(page, it.text)
		}
	}
	for _, n := range notes {
		out.paragraph(page, n)
	}
}
