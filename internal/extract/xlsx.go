package extract

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"math"
	"path"
	"strconv"
	"strings"
	"time"
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
	book := xlsxBook{}
	err = readZipXML(wb, b, func(tok xml.Token) bool {
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "workbookPr" {
			book.date1904 = attr(se, "date1904") == "1" || attr(se, "date1904") == "true"
		}
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
	if f := files["xl/sharedStrings.xml"]; f != nil {
		if book.shared, err = readSharedStrings(f, b); err != nil {
			return nil, packageErr(b, err, name, kind, f.Name)
		}
	}
	if f := files["xl/styles.xml"]; f != nil {
		if book.dateStyles, err = readDateStyles(f, b); err != nil {
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
		if err := readSheet(f, &book, b, &out); err != nil {
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
func readSheet(f *zip.File, book *xlsxBook, b *budget, out *blockList) error {
	shared := book.shared
	var (
		header  map[int]string
		row     []xlsxCell
		col     int
		next    int // the column of a cell without a reference
		typ     string
		style   string
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
				style = attr(t, "s")
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
				} else if (typ == "" || typ == "n") && book.dateStyles[style] {
					s = book.date(s)
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

// xlsxBook is what the workbook's parts say about every sheet's cells.
type xlsxBook struct {
	shared     []string
	dateStyles map[string]bool // cell style indexes (the "s" attribute) whose number format is a date or time
	date1904   bool
}

// excelEpoch is day 0 of the 1900 date system as Excel counts it (its day 60 is the 29 February 1900 that
// never was, so serials from 61 on are right from 30 December 1899).
var excelEpoch = time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)

// date renders a date serial as 2006-01-02 (with the time of day when it has one); a value that is not a
// plausible serial is returned as it is.
func (bk *xlsxBook) date(v string) string {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f < 0 || f > 2958465 { // 9999-12-31
		return v
	}
	epoch := excelEpoch
	if bk.date1904 {
		epoch = time.Date(1904, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	days := math.Floor(f)
	t := epoch.AddDate(0, 0, int(days)).Add(time.Duration(math.Round((f-days)*86400)) * time.Second)
	switch {
	case days == 0 && f > 0:
		return t.Format("15:04:05")
	case f == days:
		return t.Format("2006-01-02")
	}
	return t.Format("2006-01-02 15:04:05")
}

// Built-in number formats that are dates or times (ECMA-376 18.8.30, with the East Asian ones).
var builtinDateFormats = map[int]bool{14: true, 15: true, 16: true, 17: true, 18: true, 19: true, 20: true, 21: true,
	22: true, 27: true, 28: true, 29: true, 30: true, 31: true, 32: true, 33: true, 34: true, 35: true, 36: true,
	45: true, 46: true, 47: true, 50: true, 51: true, 52: true, 53: true, 54: true, 55: true, 56: true, 57: true, 58: true}

// dateCode reports whether a custom number format shows a date or time: a y, d, h or s outside quoted text,
// escapes and [bracketed] sections (colours, locales; [h] elapsed hours count).
func dateCode(code string) bool {
	quoted, bracket := false, false
	for i := 0; i < len(code); i++ {
		c := code[i]
		switch {
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '\\' || c == '_' || c == '*':
			i++
		case c == '[':
			bracket = true
			if i+1 < len(code) && strings.ContainsRune("hHmMsS", rune(code[i+1])) {
				return true
			}
		case c == ']':
			bracket = false
		case bracket:
		case strings.IndexByte("yYdDhHsS", c) >= 0:
			return true
		}
	}
	return false
}

// readDateStyles reads styles.xml: the cell formats (cellXfs, by index) whose number format is a date.
func readDateStyles(f *zip.File, b *budget) (map[string]bool, error) {
	custom := map[string]bool{}
	styles := map[string]bool{}
	inXfs, n := false, 0
	err := readZipXML(f, b, func(tok xml.Token) bool {
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "numFmt":
				custom[attr(t, "numFmtId")] = dateCode(attr(t, "formatCode"))
			case "cellXfs":
				inXfs = true
			case "xf":
				if inXfs {
					id := attr(t, "numFmtId")
					k, _ := strconv.Atoi(id)
					if builtinDateFormats[k] || custom[id] {
						styles[strconv.Itoa(n)] = true
					}
					n++
				}
			}
		case xml.EndElement:
			if t.Name.Local == "cellXfs" {
				inXfs = false
			}
		}
		return true
	})
	return styles, err
}
