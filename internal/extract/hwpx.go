package extract

import (
	"archive/zip"
	"bytes"
	"cmp"
	"encoding/xml"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/rag"
)

// hwpxSectionRe matches the body parts of an HWPX (OWPML) package, Contents/section0.xml, section1.xml, …
var hwpxSectionRe = regexp.MustCompile(`^Contents/section(\d+)\.xml$`)

// outlineStyleRe matches the outline (heading) paragraph styles of Hancom Office: "개요 1" … "개요 10",
// "Outline 1", and the heading names other converters write.
var outlineStyleRe = regexp.MustCompile(`^(?:개요|outline|heading|제목)\s*(\d{1,2})$`)

// maxTableCols bounds the column a table cell may claim through an attribute (HWP/HWPX cell addresses, DOCX
// gridSpan), so that a forged value cannot make a row of a billion empty cells.
const maxTableCols = 256

// hwpxStyles is what header.xml says about headings: the outline level (1-based, 0 = none) of paragraph
// styles and of paragraph shapes (hh:paraPr with hh:heading type="OUTLINE").
type hwpxStyles struct {
	style    map[string]int
	paraPr   map[string]int
	hasStyle bool
}

// extractHWPX reads an HWPX document (Hancom Office's OWPML: a zip of Contents/header.xml and
// Contents/section*.xml) with a streaming XML decoder, under the same budgets as DOCX: paragraphs, headings
// (paragraphs of an outline style, "개요 N", or of an outline paragraph shape), tables (rows of cells placed
// by their cell address; the leading rows marked header, or the first, are the header), text boxes into
// the paragraph that anchors them, and footnotes and endnotes as paragraphs after the paragraph that cites
// them. Running headers and footers are left out.
//
// Pages come from the layout Hancom Office records in the file (hp:lineseg, see recordedPages); a file
// without that layout has no pages.
func extractHWPX(name string, data []byte, b *budget) (*rag.Extracted, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, rag.WrapError(rag.CodeInvalid, err, "%s: corrupt HWPX (not a zip archive)", name)
	}
	type section struct {
		n int
		f *zip.File
	}
	var sections []section
	var header *zip.File
	for _, f := range zr.File {
		if m := hwpxSectionRe.FindStringSubmatch(f.Name); m != nil {
			n, err := strconv.Atoi(m[1])
			if err == nil {
				sections = append(sections, section{n, f})
			}
		} else if f.Name == "Contents/header.xml" {
			header = f
		}
	}
	if len(sections) == 0 {
		return nil, rag.Errorf(rag.CodeInvalid, "%s: corrupt HWPX (no Contents/section0.xml)", name)
	}
	slices.SortFunc(sections, func(a, b section) int { return cmp.Compare(a.n, b.n) })
	r := &hwpxReader{b: b, out: blockList{budget: b}}
	if header != nil {
		if err := readZipXML(header, b, r.readHeader); err != nil {
			if berr := b.overBudget(err); berr != nil {
				return nil, berr
			}
			return nil, rag.WrapError(rag.CodeInvalid, err, "%s: corrupt HWPX (header.xml)", name)
		}
	}
	for _, s := range sections {
		r.pages.section()
		if err := readZipXML(s.f, b, r.read); err != nil {
			if berr := b.overBudget(err); berr != nil {
				return nil, berr
			}
			return nil, rag.WrapError(rag.CodeInvalid, err, "%s: corrupt HWPX (%s)", name, s.f.Name)
		}
		if err := r.out.err(); err != nil {
			return nil, err
		}
	}
	return r.pages.extracted(r.out.blocks), nil
}

// readZipXML opens an archive member and walks its XML through the budget (inflated bytes, depth, elements).
func readZipXML(f *zip.File, b *budget, fn func(xml.Token) bool) error {
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	return walkXML(b.member(f.Name, rc), b, fn)
}

// readHeader collects the outline levels of styles and paragraph shapes from header.xml.
func (r *hwpxReader) readHeader(tok xml.Token) bool {
	if r.styles.style == nil {
		r.styles = hwpxStyles{style: map[string]int{}, paraPr: map[string]int{}}
	}
	se, ok := tok.(xml.StartElement)
	if !ok {
		return true
	}
	switch se.Name.Local {
	case "style":
		if attr(se, "type") != "PARA" {
			return true
		}
		r.styles.hasStyle = true
		for _, n := range []string{attr(se, "name"), attr(se, "engName")} {
			if m := outlineStyleRe.FindStringSubmatch(strings.ToLower(strings.TrimSpace(n))); m != nil {
				lv, _ := strconv.Atoi(m[1])
				r.styles.style[attr(se, "id")] = min(max(lv, 1), 9)
				break
			}
		}
	case "paraPr":
		r.curParaPr = attr(se, "id")
	case "heading":
		if attr(se, "type") == "OUTLINE" && r.curParaPr != "" {
			if lv, err := strconv.Atoi(attr(se, "level")); err == nil && lv >= 0 && lv < 9 {
				r.styles.paraPr[r.curParaPr] = lv + 1
			}
		}
	}
	return true
}

// hwpxItem is a block of the top-level paragraph being read, emitted once the paragraph's page is known
// (its layout comes after its text).
type hwpxItem struct {
	text  string
	rows  [][]string
	head  int
	table bool
}

// hwpxReader walks the section parts. Top-level paragraphs are the section's own; paragraphs in table cells
// become the cells' lines (a nested table's text goes into the outer cell), in notes the notes' text, in
// text boxes the anchoring paragraph's.
type hwpxReader struct {
	b         *budget
	out       blockList
	styles    hwpxStyles
	curParaPr string

	pDepth int
	level  int // heading level of the top-level paragraph
	para   strings.Builder
	items  []hwpxItem
	notes  []string
	inText int // depth inside hp:t

	skip      int // depth inside a running header or footer, or a hidden comment
	noteDepth int // depth of footNote/endNote nesting
	note      strings.Builder

	tblDepth   int
	rows       [][]string
	row        []string
	col        int // column of the current cell
	cell       strings.Builder
	cellHeader bool
	rowHeader  bool
	headerRows int
	inHeader   bool

	pages             recordedPages
	segs              int // line layouts of the top-level paragraph read so far
	segFirst, segLast int // their first and last vertical positions
	pageBreak         bool
}

func (r *hwpxReader) read(tok xml.Token) bool {
	switch t := tok.(type) {
	case xml.StartElement:
		r.start(t)
	case xml.EndElement:
		r.end(t)
	case xml.CharData:
		if r.inText > 0 && r.skip == 0 {
			if r.b.rawChars(utf8.RuneCount(t)) != nil {
				return false
			}
			r.text().Write(t)
		}
	}
	return r.b.err == nil
}

// text is where the characters read now go.
func (r *hwpxReader) text() *strings.Builder {
	switch {
	case r.noteDepth > 0:
		return &r.note
	case r.tblDepth > 0:
		return &r.cell
	default:
		return &r.para
	}
}

func (r *hwpxReader) start(t xml.StartElement) {
	if r.skip > 0 {
		r.skip++
		return
	}
	switch t.Name.Local {
	case "header", "footer", "hiddenComment", "memo":
		if t.Name.Space == "hp" || t.Name.Space == "" {
			r.skip = 1
		}
	case "p":
		r.pDepth++
		if r.pDepth == 1 {
			r.para.Reset()
			r.items = r.items[:0]
			r.level = r.styles.style[attr(t, "styleIDRef")]
			if lv := r.styles.paraPr[attr(t, "paraPrIDRef")]; lv > 0 {
				r.level = lv
			}
			r.pageBreak = attr(t, "pageBreak") == "1"
			r.segs = 0
		} else if w := r.text(); w.Len() > 0 {
			w.WriteByte(' ')
		}
	case "t":
		r.inText++
	case "tab":
		if r.inText > 0 || r.pDepth > 0 {
			r.text().WriteByte('\t')
		}
	case "lineBreak":
		r.text().WriteByte('\n')
	case "fwSpace", "nbSpace":
		r.text().WriteByte(' ')
	case "footNote", "endNote":
		r.noteDepth++
		if r.noteDepth == 1 {
			r.note.Reset()
		}
	case "tbl":
		if r.noteDepth > 0 {
			return
		}
		r.tblDepth++
		if r.tblDepth == 1 {
			if s := r.para.String(); strings.TrimSpace(s) != "" {
				r.items = append(r.items, hwpxItem{text: s})
			}
			r.para.Reset()
			r.rows, r.headerRows, r.inHeader = nil, 0, true
		} else if r.cell.Len() > 0 {
			r.cell.WriteByte(' ')
		}
	case "tr":
		if r.tblDepth == 1 && r.noteDepth == 0 {
			r.row, r.rowHeader = nil, true
		}
	case "tc":
		if r.tblDepth == 1 && r.noteDepth == 0 {
			r.cell.Reset()
			r.col = len(r.row)
			r.cellHeader = attr(t, "header") == "1"
		}
	case "cellAddr":
		if r.tblDepth == 1 && r.noteDepth == 0 {
			if c, err := strconv.Atoi(attr(t, "colAddr")); err == nil && c >= len(r.row) && c < maxTableCols {
				r.col = c
			}
		}
	case "lineseg":
		if r.pDepth == 1 && r.tblDepth == 0 && r.noteDepth == 0 {
			if v, err := strconv.Atoi(attr(t, "vertpos")); err == nil {
				if r.segs == 0 {
					r.segFirst = v
				}
				r.segLast = v
				r.segs++
			}
		}
	}
}

func (r *hwpxReader) end(t xml.EndElement) {
	if r.skip > 0 {
		r.skip--
		return
	}
	switch t.Name.Local {
	case "t":
		r.inText = max(r.inText-1, 0)
	case "footNote", "endNote":
		if r.noteDepth == 0 {
			return
		}
		r.noteDepth--
		if r.noteDepth == 0 {
			if s := strings.TrimSpace(r.note.String()); s != "" {
				r.notes = append(r.notes, s)
			}
			r.note.Reset()
		}
	case "p":
		if r.pDepth == 0 {
			return
		}
		r.pDepth--
		switch {
		case r.noteDepth > 0:
			r.note.WriteByte(' ')
		case r.tblDepth > 0:
			r.cell.WriteByte(' ')
		case r.pDepth == 0:
			r.endParagraph()
		}
	case "tc":
		if r.tblDepth == 1 && r.noteDepth == 0 {
			for len(r.row) < r.col {
				r.row = append(r.row, "")
			}
			r.row = append(r.row, r.cell.String())
			r.rowHeader = r.rowHeader && r.cellHeader
			r.cell.Reset()
		}
	case "tr":
		if r.tblDepth == 1 && r.noteDepth == 0 {
			if r.inHeader && r.rowHeader && len(r.row) > 0 {
				r.headerRows++
			} else {
				r.inHeader = false
			}
			r.rows = append(r.rows, r.row)
		}
	case "tbl":
		if r.noteDepth > 0 || r.tblDepth == 0 {
			return
		}
		r.tblDepth--
		if r.tblDepth == 0 {
			r.items = append(r.items, hwpxItem{table: true, rows: r.rows, head: max(r.headerRows, 1)})
			r.rows = nil
		}
	}
}

// endParagraph emits the blocks of the top-level paragraph just read, on its page, then its notes.
func (r *hwpxReader) endParagraph() {
	if s := r.para.String(); strings.TrimSpace(s) != "" {
		r.items = append(r.items, hwpxItem{text: s})
	}
	r.para.Reset()
	page := r.pages.page
	if r.segs > 0 {
		page = r.pages.paragraph(r.segFirst, r.segLast, r.pageBreak)
	}
	emitItems(&r.out, page, r.level, r.items, r.notes)
	r.items, r.notes = r.items[:0], r.notes[:0]
}
