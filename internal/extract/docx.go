package extract

import (
	"archive/zip"
	"bytes"
	"cmp"
	"encoding/xml"
	"errors"
	"io"
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/rag"
)

// docxStyle is what a paragraph style says about headings.
type docxStyle struct {
	name    string
	basedOn string
	outline int // outline level 0..8 (0 = top), -1 when the style sets none
}

var headingNameRe = regexp.MustCompile(`^(?:heading|제목)\s*(\d)$`)

// extractDOCX reads the main document part of a DOCX with a streaming XML decoder: paragraphs, headings
// (heading styles — "Heading 1", "제목 1", or an outline level — become heading blocks with their level) and
// tables (rows of cell texts, the first row or the rows marked as repeating headers being the header), in
// document order.
//
// Every member is read through the budget b: inflated bytes, XML depth and elements, characters.
func extractDOCX(name string, data []byte, b *budget) (*rag.Extracted, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, rag.WrapError(rag.CodeInvalid, err, "%s: corrupt DOCX (not a zip archive)", name)
	}
	files := map[string]*zip.File{}
	for _, f := range zr.File {
		files[f.Name] = f
	}
	docPath := mainPart(files, b)
	f := files[docPath]
	if f == nil {
		return nil, rag.Errorf(rag.CodeInvalid, "%s: corrupt DOCX (no %s)", name, docPath)
	}
	styles := map[string]docxStyle{}
	if sf := files[path.Join(path.Dir(docPath), "styles.xml")]; sf != nil {
		if err := readStyles(sf, styles, b); err != nil {
			if berr := b.overBudget(err); berr != nil {
				return nil, berr
			}
			return nil, rag.WrapError(rag.CodeInvalid, err, "%s: corrupt DOCX (styles)", name)
		}
	}
	x := &rag.Extracted{}
	if cf := files["docProps/core.xml"]; cf != nil {
		x.Title = readCoreTitle(cf, b)
	}
	if err := b.overBudget(nil); err != nil {
		return nil, err
	}
	rc, err := f.Open()
	if err != nil {
		return nil, rag.WrapError(rag.CodeInvalid, err, "%s: corrupt DOCX", name)
	}
	defer rc.Close()
	d := docxReader{styles: styles, b: b, out: blockList{budget: b}}
	if err := d.read(b.member(f.Name, rc)); err != nil {
		if berr := b.overBudget(err); berr != nil {
			return nil, berr
		}
		return nil, rag.WrapError(rag.CodeInvalid, err, "%s: corrupt DOCX (document.xml)", name)
	}
	if err := d.out.err(); err != nil {
		return nil, err
	}
	x.Blocks = d.out.blocks
	return x, nil
}

// mainPart finds the main document part through the package relationships (it is almost always
// word/document.xml).
func mainPart(files map[string]*zip.File, b *budget) string {
	const def = "word/document.xml"
	f := files["_rels/.rels"]
	if f == nil {
		return def
	}
	rc, err := f.Open()
	if err != nil {
		return def
	}
	defer rc.Close()
	var rels struct {
		Rel []struct {
			Type   string `xml:"Type,attr"`
			Target string `xml:"Target,attr"`
		} `xml:"Relationship"`
	}
	if xml.NewDecoder(b.member(f.Name, rc)).Decode(&rels) != nil {
		return def
	}
	for _, r := range rels.Rel {
		if strings.HasSuffix(r.Type, "/officeDocument") {
			return strings.TrimPrefix(r.Target, "/")
		}
	}
	return def
}

func readCoreTitle(f *zip.File, b *budget) string {
	var title strings.Builder
	in := false
	_ = readZipXML(f, b, func(tok xml.Token) bool {
		switch t := tok.(type) {
		case xml.StartElement:
			in = t.Name.Local == "title"
		case xml.EndElement:
			if in {
				return false
			}
		case xml.CharData:
			if in && b.rawChars(utf8.RuneCount(t)) == nil {
				title.Write(t)
			}
		}
		return true
	})
	if !in {
		return ""
	}
	return normInline(title.String())
}

// walkXML reads r's tokens (raw: no namespace resolution) and gives each to f until f returns false, the end
// of the input, an error, or a limit of the budget (nesting depth, element count, time), whose error it
// returns.
func walkXML(r io.Reader, b *budget, f func(xml.Token) bool) error {
	dec := xml.NewDecoder(r)
	depth := 0
	for {
		tok, err := dec.RawToken()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch tok.(type) {
		case xml.StartElement:
			depth++
			if err := b.element(depth); err != nil {
				return err
			}
		case xml.EndElement:
			depth--
		default:
			if err := b.check(); err != nil {
				return err
			}
		}
		if !f(tok) {
			return nil
		}
	}
}

func attr(se xml.StartElement, local string) string {
	for _, a := range se.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

func readStyles(f *zip.File, styles map[string]docxStyle, b *budget) error {
	var id string
	var cur docxStyle
	return readZipXML(f, b, func(tok xml.Token) bool {
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "style":
				id = attr(t, "styleId")
				cur = docxStyle{outline: -1}
			case "name":
				if id != "" {
					cur.name = strings.ToLower(attr(t, "val"))
				}
			case "basedOn":
				if id != "" {
					cur.basedOn = attr(t, "val")
				}
			case "outlineLvl":
				if id != "" {
					if n, err := strconv.Atoi(attr(t, "val")); err == nil {
						cur.outline = n
					}
				}
			}
		case xml.EndElement:
			if t.Name.Local == "style" && id != "" {
				styles[id] = cur
				id = ""
			}
		}
		return true
	})
}

// headingLevel returns the heading level (1-based) of a paragraph style, or 0.
func headingLevel(styles map[string]docxStyle, id string) int {
	for range 10 { // basedOn chains are short; the bound guards against cycles
		s, ok := styles[id]
		if !ok {
			if m := headingNameRe.FindStringSubmatch(strings.ToLower(id)); m != nil {
				n, _ := strconv.Atoi(m[1])
				return max(n, 1)
			}
			return 0
		}
		if m := headingNameRe.FindStringSubmatch(s.name); m != nil {
			n, _ := strconv.Atoi(m[1])
			return max(n, 1)
		}
		if s.name == "title" {
			return 1
		}
		if s.outline >= 0 && s.outline < 9 {
			return s.outline + 1
		}
		if s.basedOn == "" {
			return 0
		}
		id = s.basedOn
	}
	return 0
}

// docxReader walks document.xml. Text boxes and nested tables are read into the paragraph or cell that
// holds them.
type docxReader struct {
	styles map[string]docxStyle
	b      *budget
	out    blockList

	pDepth  int // nesting of w:p (text boxes put paragraphs inside paragraphs)
	para    strings.Builder
	pStyle  string
	outline int
	inText  bool // inside w:t

	tblDepth   int
	rows       [][]string
	row        []string
	cell       strings.Builder
	headerRows int
	rowHeader  bool
	inHeader   bool // the leading rows are all marked tblHeader so far
	span       int  // empty cells to add after the current cell (gridSpan)
}

func (d *docxReader) read(r io.Reader) error {
	var err error
	werr := walkXML(r, d.b, func(tok xml.Token) bool {
		switch t := tok.(type) {
		case xml.StartElement:
			d.start(t)
		case xml.EndElement:
			d.end(t)
		case xml.CharData:
			if d.inText {
				if err = d.b.rawChars(utf8.RuneCount(t)); err != nil {
					return false
				}
				d.para.Write(t)
			}
		}
		return d.out.budget.err == nil
	})
	return cmp.Or(werr, err, d.out.err())
}

func (d *docxReader) start(t xml.StartElement) {
	switch t.Name.Local {
	case "p":
		if t.Name.Space != "w" && t.Name.Space != "" {
			return
		}
		d.pDepth++
		if d.pDepth == 1 {
			d.para.Reset()
			d.pStyle, d.outline = "", -1
		} else {
			d.para.WriteByte(' ')
		}
	case "delText", "instrText":
		d.inText = false
	case "pStyle":
		if d.pDepth == 1 {
			d.pStyle = attr(t, "val")
		}
	case "outlineLvl":
		if d.pDepth == 1 {
			if n, err := strconv.Atoi(attr(t, "val")); err == nil {
				d.outline = n
			}
		}
	case "t":
		d.inText = t.Name.Space == "w"
	case "tab":
		if d.pDepth > 0 {
			d.para.WriteByte('\t')
		}
	case "br", "cr":
		if d.pDepth > 0 {
			d.para.WriteByte('\n')
		}
	case "noBreakHyphen":
		d.para.WriteByte('-')
	case "tbl":
		d.tblDepth++
		if d.tblDepth == 1 {
			d.rows, d.headerRows, d.inHeader = nil, 0, true
		}
	case "tr":
		if d.tblDepth == 1 {
			d.row = nil
			d.rowHeader = false
		}
	case "tblHeader":
		if d.tblDepth == 1 {
			d.rowHeader = attr(t, "val") != "0" && attr(t, "val") != "false"
		}
	case "tc":
		if d.tblDepth == 1 {
			d.cell.Reset()
		}
	case "gridSpan":
		if d.tblDepth == 1 {
			if n, err := strconv.Atoi(attr(t, "val")); err == nil && n > 1 {
				d.span = min(n, maxTableCols) - 1
			}
		}
	}
}

func (d *docxReader) end(t xml.EndElement) {
	switch t.Name.Local {
	case "t":
		d.inText = false
	case "p":
		if t.Name.Space != "w" && t.Name.Space != "" {
			return
		}
		d.pDepth--
		if d.pDepth > 0 {
			return
		}
		text := d.para.String()
		d.para.Reset()
		if d.tblDepth > 0 {
			// Paragraphs of a cell (or of a nested table inside it) are the cell's lines.
			if d.cell.Len() > 0 {
				d.cell.WriteByte(' ')
			}
			d.cell.WriteString(text)
			return
		}
		level := 0
		if d.outline >= 0 && d.outline < 9 {
			level = d.outline + 1
		} else if d.pStyle != "" {
			level = headingLevel(d.styles, d.pStyle)
		}
		if level > 0 && strings.TrimSpace(text) != "" {
			d.out.heading(0, level, text)
			return
		}
		d.out.paragraph(0, text)
	case "tc":
		if d.tblDepth == 1 {
			d.row = append(d.row, d.cell.String())
			for range d.span {
				d.row = append(d.row, "")
			}
			d.span = 0
			d.cell.Reset()
		}
	case "tr":
		if d.tblDepth == 1 {
			if d.inHeader && d.rowHeader {
				d.headerRows++
			} else {
				d.inHeader = false
			}
			d.rows = append(d.rows, d.row)
		}
	case "tbl":
		d.tblDepth--
		if d.tblDepth == 0 {
			d.out.table(0, d.rows, max(d.headerRows, 1))
			d.rows = nil
		}
	}
}
