package extract

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/rag"
)

// openPackage opens an OOXML package (XLSX, PPTX), indexes its members by name and returns its main part.
func openPackage(name, kind, mainPath string, data []byte) (map[string]*zip.File, *zip.File, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, nil, rag.WrapError(rag.CodeInvalid, err, "%s: corrupt %s (not a zip archive)", name, kind)
	}
	files := make(map[string]*zip.File, len(zr.File))
	for _, f := range zr.File {
		files[f.Name] = f
	}
	if files[mainPath] == nil {
		return nil, nil, rag.Errorf(rag.CodeInvalid, "%s: corrupt %s (no %s)", name, kind, mainPath)
	}
	return files, files[mainPath], nil
}

// ooxmlRel is one relationship of a package part, its target resolved to a member name.
type ooxmlRel struct{ id, typ, target string }

// readRels reads the relationships of the part at partPath (its _rels/<name>.rels); a missing or unreadable
// part has none. External targets (links) are left out.
func readRels(files map[string]*zip.File, partPath string, b *budget) []ooxmlRel {
	var rels []ooxmlRel
	dir, base := path.Split(partPath)
	f := files[dir+"_rels/"+base+".rels"]
	if f == nil {
		return nil
	}
	_ = readZipXML(f, b, func(tok xml.Token) bool {
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "Relationship" && attr(se, "TargetMode") != "External" {
			target := attr(se, "Target")
			if strings.HasPrefix(target, "/") {
				target = strings.TrimPrefix(target, "/")
			} else {
				target = path.Join(dir, target)
			}
			rels = append(rels, ooxmlRel{attr(se, "Id"), attr(se, "Type"), target})
		}
		return true
	})
	return rels
}

// relTargets maps the relationships' ids to their targets.
func relTargets(rels []ooxmlRel) map[string]string {
	m := make(map[string]string, len(rels))
	for _, r := range rels {
		m[r.id] = r.target
	}
	return m
}

// relOfType returns the target of the first relationship whose type ends in typ ("/notesSlide"), or "".
func relOfType(rels []ooxmlRel, typ string) string {
	for _, r := range rels {
		if strings.HasSuffix(r.typ, typ) {
			return r.target
		}
	}
	return ""
}

// packageErr turns a failure to read a member into the budget's error or invalid_request naming the member.
func packageErr(b *budget, err error, name, kind, member string) error {
	if berr := b.overBudget(err); berr != nil {
		return berr
	}
	return rag.WrapError(rag.CodeInvalid, err, "%s: corrupt %s (%s)", name, kind, member)
}

// xlsxCell is one non-empty cell of a row.
type xlsxCell struct {
	col  int
	text string
}

// extractXLSX reads an Excel workbook: one section per visible sheet (a heading with the sheet's name), its
// first non-empty row taken as the header and every later row written as "header: value" lines, one
// paragraph per row, so that a row is never read without its header. Cell values are shared strings, inline
// strings, or the stored value (numbers as saved, booleans as TRUE/FALSE, formulas' cached results).
func extractXLSX(name string, data []byte, b *budget) (*rag.Extracted, error) {
	const kind, wbPath = "XLSX", "xl/workbook.xml"
	files, wb, err := openPackage(name, kind, wbPath, data)
	if err != nil {
		return nil, err
	}
	type sheet struct{ name, target string }
	var sheets []sheet
	rels := relTargets(readRels(files, wbPath, b))
	err = readZipXML(wb, b, func(tok xml.Token) bool {
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "sheet" {
			if st := attr(se, "state"); st == "hidden" || st == "veryHidden" {
				return true
			}
			sheets = append(sheets, sheet{attr(se, "name"), rels[relID(se)]})
		}
		return true
	})
	if err != nil {
		return nil, packageErr(b, err, name, kind, wbPath)
	}
	var shared []string
	if f := files["xl/sharedStrings.xml"]; f != nil {
		if shared, err = readSharedStrings(f, b); err != nil {
			return nil, packageErr(b, err, name, kind, f.Name)
		}
	}
	out := blockList{budget: b}
	for _, s := range sheets {
		f := files[s.target]
		if f == nil {
			continue
		}
		out.heading(0, 1, cmpOr(s.name, path.Base(s.target)))
		if err := readSheet(f, shared, b, &out); err != nil {
			return nil, packageErr(b, err, name, kind, f.Name)
		}
		if err := out.err(); err != nil {
			return nil, err
		}
	}
	return &rag.Extracted{Blocks: out.blocks}, nil
}

func cmpOr(a, b string) string {
	if strings.TrimSpace(a) != "" {
		return a
	}
	return b
}

// readSharedStrings reads the shared string table (the text of rich runs joined, phonetic guides left out).
func readSharedStrings(f *zip.File, b *budget) ([]string, error) {
	var out []string
	var cur strings.Builder
	inT, phonetic := false, 0
	var cerr error
	err := readZipXML(f, b, func(tok xml.Token) bool {
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "si":
				cur.Reset()
			case "t":
				inT = true
			case "rPh":
				phonetic++
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "si":
				out = append(out, cur.String())
			case "t":
				inT = false
			case "rPh":
				phonetic--
			}
		case xml.CharData:
			if inT && phonetic == 0 {
				if cerr = b.rawChars(utf8.RuneCount(t)); cerr != nil {
					return false
				}
				cur.Write(t)
			}
		}
		return true
	})
	if err == nil {
		err = cerr
	}
	return out, err
}

// colIndex returns the 0-based column of a cell reference ("C7" → 2), or -1.
func colIndex(ref string) int {
	n := 0
	i := 0
	for ; i < len(ref) && ref[i] >= 'A' && ref[i] <= 'Z'; i++ {
		n = n*26 + int(ref[i]-'A'+1)
		if n > 1<<20 {
			return -1
		}
	}
	if i == 0 {
		return -1
	}
	return n - 1
}

// colName returns the letters of a 0-based column (2 → "C").
func colName(c int) string {
	var s []byte
	for c++; c > 0; c = (c - 1) / 26 {
		s = append([]byte{byte('A' + (c-1)%26)}, s...)
	}
	return string(s)
}

// readSheet writes a worksheet's rows: the first non-empty row is the header, the others "header: value"
// lines (a column without a header is named by its letters).
func readSheet(f *zip.File, shared []string, b *budget, out *blockList) error {
	var (
		header  map[int]string
		row     []xlsxCell
		col     int
		next    int // the column of a cell without a reference
		typ     string
		val     strings.Builder
		inV, in bool
		cerr    error
	)
	endRow := func() {
		if len(row) == 0 {
			return
		}
		if header == nil {
			header = map[int]string{}
			for _, c := range row {
				header[c.col] = normInline(c.text)
			}
			out.paragraph(0, strings.Join(cellTexts(row), " | "))
		} else {
			lines := make([]string, 0, len(row))
			for _, c := range row {
				h := header[c.col]
				if h == "" {
					h = colName(c.col)
				}
				lines = append(lines, h+": "+normInline(c.text))
			}
			out.paragraph(0, strings.Join(lines, "\n"))
		}
		row = row[:0]
	}
	err := readZipXML(f, b, func(tok xml.Token) bool {
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "row":
				endRow()
				next = 0
			case "c":
				col = colIndex(attr(t, "r"))
				if col < 0 {
					col = next
				}
				next = col + 1
				typ = attr(t, "t")
				val.Reset()
				in = true
			case "v", "t":
				inV = in
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "v", "t":
				inV = false
			case "c":
				in = false
				s := val.String()
				if typ == "s" {
					if i, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && i >= 0 && i < len(shared) {
						s = shared[i]
					} else {
						s = ""
					}
				} else if typ == "b" {
					s = map[string]string{"1": "TRUE", "0": "FALSE"}[strings.TrimSpace(s)]
				}
				if strings.TrimSpace(s) != "" {
					if cerr = b.rawChars(utf8.RuneCountInString(s)); cerr != nil {
						return false
					}
					row = append(row, xlsxCell{col, s})
				}
			case "sheetData":
				endRow()
			}
		case xml.CharData:
			if inV {
				val.Write(t)
			}
		}
		return out.budget.err == nil
	})
	if err == nil {
		err = cerr
	}
	return err
}

func cellTexts(row []xlsxCell) []string {
	s := make([]string, len(row))
	for i, c := range row {
		s[i] = c.text
	}
	return s
}
