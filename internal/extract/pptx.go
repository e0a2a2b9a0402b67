package extract

import (
	"archive/zip"
	"encoding/xml"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/rag"
)

// extractPPTX reads a PowerPoint presentation: one section per slide, in the presentation's order, on the
// slide's "page" (its number): the slide's title as a heading ("Slide N" when it has none), the text of its
// other shapes paragraph by paragraph, its tables (the first row is the header), then its speaker notes under
// a "Notes" heading.
func extractPPTX(name string, data []byte, b *budget) (*rag.Extracted, error) {
	const kind, presPath = "PPTX", "ppt/presentation.xml"
	files, pres, err := openPackage(name, kind, presPath, data)
	if err != nil {
		return nil, err
	}
	rels := relTargets(readRels(files, presPath, b))
	var slides []string
	err = readZipXML(pres, b, func(tok xml.Token) bool {
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "sldId" {
			if t := rels[relID(se)]; t != "" {
				slides = append(slides, t)
			}
		}
		return true
	})
	if err != nil {
		return nil, packageErr(b, err, name, kind, presPath)
	}
	if err := b.pages(len(slides)); err != nil {
		return nil, err
	}
	out := blockList{budget: b}
	x := &rag.Extracted{}
	for i, target := range slides {
		f := files[target]
		if f == nil {
			continue
		}
		page := i + 1
		x.Pages = page
		s, err := readSlide(f, b)
		if err != nil {
			return nil, packageErr(b, err, name, kind, f.Name)
		}
		out.heading(page, 1, cmpOr(s.title, "Slide "+strconv.Itoa(page)))
		s.emit(&out, page)
		if notes := relOfType(readRels(files, target, b), "/notesSlide"); files[notes] != nil {
			n, err := readSlide(files[notes], b)
			if err != nil {
				return nil, packageErr(b, err, name, kind, notes)
			}
			if len(n.items) > 0 {
				out.heading(page, 2, "Notes")
				n.emit(&out, page)
			}
		}
		if err := out.err(); err != nil {
			return nil, err
		}
	}
	x.Blocks = out.blocks
	return x, nil
}

// pptxSlide is the text of a slide (or notes page): its title and, in order, its paragraphs and tables.
type pptxSlide struct {
	title string
	items []hwpxItem
}

func (s *pptxSlide) emit(out *blockList, page int) {
	for _, it := range s.items {
		if it.table {
			out.table(page, it.rows, 1)
		} else {
			out.paragraph(page, it.text)
		}
	}
}

// readSlide reads the shapes of a slide or notes part. The title placeholder's text is the title; slide
// numbers, dates, footers and the notes page's slide image are left out.
func readSlide(f *zip.File, b *budget) (pptxSlide, error) {
	var (
		s        pptxSlide
		para     strings.Builder
		shape    strings.Builder // the title shape's text
		spDepth  int
		isTitle  bool
		skip     bool
		inT      bool
		tblDepth int
		rows     [][]string
		row      []string
		cell     strings.Builder
		cerr     error
	)
	err := readZipXML(f, b, func(tok xml.Token) bool {
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "sp":
				spDepth++
				if spDepth == 1 {
					isTitle, skip = false, false
					shape.Reset()
				}
			case "ph":
				switch attr(t, "type") {
				case "title", "ctrTitle":
					isTitle = true
				case "sldNum", "dt", "ftr", "hdr", "sldImg":
					skip = true
				}
			case "tbl":
				tblDepth++
				if tblDepth == 1 {
					rows = nil
				}
			case "tr":
				if tblDepth == 1 {
					row = nil
				}
			case "tc":
				if tblDepth == 1 {
					cell.Reset()
				}
			case "p":
				para.Reset()
			case "t":
				inT = true
			case "br":
				para.WriteByte('\n')
			case "tab":
				para.WriteByte('\t')
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "t":
				inT = false
			case "p":
				text := para.String()
				para.Reset()
				switch {
				case tblDepth > 0:
					if cell.Len() > 0 {
						cell.WriteByte(' ')
					}
					cell.WriteString(text)
				case skip:
				case isTitle && spDepth > 0:
					if shape.Len() > 0 {
						shape.WriteByte(' ')
					}
					shape.WriteString(text)
				case strings.TrimSpace(text) != "":
					s.items = append(s.items, hwpxItem{text: text})
				}
			case "sp":
				if spDepth == 1 && isTitle && s.title == "" {
					s.title = normInline(shape.String())
				}
				spDepth = max(spDepth-1, 0)
			case "tc":
				if tblDepth == 1 {
					row = append(row, cell.String())
				}
			case "tr":
				if tblDepth == 1 {
					rows = append(rows, row)
				}
			case "tbl":
				tblDepth = max(tblDepth-1, 0)
				if tblDepth == 0 {
					s.items = append(s.items, hwpxItem{table: true, rows: rows})
				}
			}
		case xml.CharData:
			if inT {
				if cerr = b.rawChars(utf8.RuneCount(t)); cerr != nil {
					return false
				}
				para.Write(t)
			}
		}
		return true
	})
	if err == nil {
		err = cerr
	}
	return s, err
}

// relID returns an element's relationship id (r:id: the "id" attribute with a namespace prefix; a slide's
// sldId also has a plain numeric id).
func relID(se xml.StartElement) string {
	for _, a := range se.Attr {
		if a.Name.Local == "id" && a.Name.Space != "" {
			return a.Value
		}
	}
	return ""
}
