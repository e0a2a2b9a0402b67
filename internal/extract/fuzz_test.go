package extract

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/fuzzbudget"
	"github.com/ragd/ragd/internal/hostile"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/testkit"
)

// The fuzz targets feed each extractor arbitrary bytes. Run as normal tests they check their seeds; under
// `go test -fuzz` each input must also finish within fuzzbudget.PerInput (a super-linear path shows up as
// an input that takes seconds). Every failure must be a documented code, never a panic or "internal".

func fuzzExtract(f *testing.F, name string, seeds ...[]byte) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) { extractFuzzed(t, name, data) })
}

// extractFuzzed extracts one fuzz input within fuzzbudget.PerInput and fails on an undocumented error.
func extractFuzzed(t *testing.T, name string, data []byte) {
	fuzzbudget.Time(t, data, func() {
		_, err := shared.Extract(context.Background(), name, data)
		checkFuzzError(t, name, err)
	})
}

// checkFuzzError fails on an error without one of the documented codes.
func checkFuzzError(t *testing.T, name string, err error) {
	switch rag.ErrorCode(err) {
	case "", rag.CodeInvalid, rag.CodeTooLarge, rag.CodeTooComplex, rag.CodePayloadTooLarge, rag.CodeUnsupportedMediaType:
	default:
		t.Fatalf("%s: unexpected error %v", name, err)
	}
}

func FuzzText(f *testing.F) {
	fuzzExtract(f, "f.txt", []byte("one\n\ntwo"), []byte("\xff\xfeh\x00i\x00"), []byte("\xc7\xd1\xb1\xb9"))
}

func FuzzCode(f *testing.F) {
	fuzzExtract(f, "f.go", []byte("package x\n\nfunc A() {\n}\n"), []byte("}\n\n\n\tx"))
}

// FuzzCodeBraces fuzzes the brace scanner (strings, comments, nested classes) through a TypeScript file.
func FuzzCodeBraces(f *testing.F) {
	fuzzExtract(f, "f.ts", []byte("import x from 'y'\n\n/** A. */\nexport class A {\n  m(): string {\n    return `}${'{'}`;\n  }\n}\n"),
		[]byte("impl<'a> X for Y {\n fn f() { let c = '{'; }\n}\n"), []byte(strings.Repeat("class A {\n", 200)))
}

// FuzzCodePython fuzzes the indentation scanner (triple-quoted strings, brackets, nested classes).
func FuzzCodePython(f *testing.F) {
	fuzzExtract(f, "f.py", []byte("class A:\n    \"\"\"d\n\"\"\"\n    def m(self):\n        return (1,\n2)\n"),
		[]byte(strings.Repeat("class A:\n ", 200)))
}

func FuzzMarkdown(f *testing.F) {
	fuzzExtract(f, "f.md", []byte("# T\n\n*a* _b_ ~c~ [l](u) `c`\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"),
		[]byte("---\ntitle: x\n---\n> > quote\n- a\n  - b\n"), hostile.QuadraticMarkdown(3000),
		[]byte(strings.Repeat("[a](", 300)), []byte(strings.Repeat("<X ", 200)))
}

func FuzzMDX(f *testing.F) {
	fuzzExtract(f, "f.mdx", []byte("import X from 'y'\n\n<Note a={1}>\ntext {/* c */}\n</Note>\n"))
}

func FuzzHTML(f *testing.F) {
	fuzzExtract(f, "f.html", []byte("<html><title>t</title><body><h1>a</h1><p>b<table><tr><th>x<td>y</table></body></html>"),
		[]byte(strings.Repeat("<table><tr><td>", 50)))
}

func FuzzDOCX(f *testing.F) {
	fuzzExtract(f, "f.docx", hostile.DOCXBody(`<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>h</w:t></w:r></w:p>`+
		`<w:tbl><w:tr><w:tc><w:p><w:r><w:t>a</w:t></w:r></w:p></w:tc></w:tr></w:tbl>`), hostile.DOCX(100, nil))
}

// FuzzDOCXBody fuzzes the WordprocessingML inside a well-formed DOCX: mutating the zip itself (FuzzDOCX)
// mostly breaks its checksums and never reaches the XML.
func FuzzDOCXBody(f *testing.F) {
	for _, s := range []string{
		`<w:p><w:pPr><w:outlineLvl w:val="1"/></w:pPr><w:r><w:t>h</w:t><w:tab/><w:br/></w:r></w:p>`,
		`<w:tbl><w:tr><w:trPr><w:tblHeader/></w:trPr><w:tc><w:tcPr><w:gridSpan w:val="3"/></w:tcPr><w:p><w:r><w:t>a</w:t></w:r></w:p></w:tc></w:tr></w:tbl>`,
		hostile.Nested(20),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) { extractFuzzed(t, "f.docx", hostile.DOCXBody(body)) })
}

// FuzzPDF fuzzes PDFium and the layout with OCR off: one page read by Tesseract takes seconds of its own
// process (bounded by RAGD_OCR_PAGE_TIMEOUT and RAGD_OCR_PAGE_MEMORY, TestOCR_*), over the per-input budget;
// what ragd makes of Tesseract's output is fuzzed by FuzzOCRTSV.
//
// A PDFium instance discarded after an input (a trap, memory grown) is started again by the next extraction,
// which takes about a second (three on this machine under load): a small PDF is extracted first, outside the
// timed part, so that the budget measures the input's own work.
func FuzzPDF(f *testing.F) {
	warm := hostile.PDF(hostile.PDFText("one"), hostile.PDFText("two"))
	f.Add(warm)
	f.Add(gridPDF([]int{72, 172, 272}, []int{700, 670, 640}, nil, map[[2]int]string{{80, 682}: "a", {180, 652}: "b"}, "boxes"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := noOCR.Extract(context.Background(), "warm.pdf", warm); err != nil {
			t.Fatalf("warm-up: %v", err)
		}
		fuzzbudget.Time(t, data, func() {
			_, err := noOCR.Extract(context.Background(), "f.pdf", data)
			checkFuzzError(t, "f.pdf", err)
		})
	})
}

// FuzzOCRTSV fuzzes the reading of Tesseract's TSV output and the layout of the characters it gives.
func FuzzOCRTSV(f *testing.F) {
	f.Add([]byte("level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n"+
		"4\t1\t1\t1\t1\t0\t100\t100\t400\t40\t-1\t\n"+
		"5\t1\t1\t1\t1\t1\t100\t100\t150\t40\t96.5\t환경노동\n"+
		"5\t1\t1\t1\t1\t2\t300\t100\t200\t40\t91\tcommittee\n"), true)
	f.Fuzz(func(t *testing.T, tsv []byte, apart bool) {
		fuzzbudget.Time(t, tsv, func() {
			p, err := parseTSV(tsv, 2550, 3300, 300, apart)
			if err != nil || len(p.chars.chars) == 0 {
				return
			}
			_, err = layoutDocument("f.pdf", &pdfDoc{pages: []pageChars{p.chars}}, newBudget(context.Background(), "f.pdf", Limits{}.WithDefaults()))
			checkFuzzError(t, "f.pdf", err)
		})
	})
}

// formatSeed reads a fixture of ../shared/formats as a seed.
func formatSeed(f *testing.F, rel string) []byte {
	data, err := os.ReadFile(filepath.Join(formats, rel))
	if err != nil {
		f.Fatal(err)
	}
	return data
}

func FuzzHWPX(f *testing.F) {
	fuzzExtract(f, "f.hwpx", formatSeed(f, "hwpx/table-grades.hwpx"), hwpxDoc(hwpxPara(`styleIDRef="2"`, `<hp:t>h</hp:t>`, 0)))
}

// FuzzHWPXBody fuzzes the section XML inside a well-formed HWPX package (with the header of hwpxDoc).
func FuzzHWPXBody(f *testing.F) {
	for _, s := range []string{
		hwpxPara(`paraPrIDRef="7"`, `<hp:t>a<hp:tab/>b</hp:t><hp:ctrl><hp:footNote><hp:subList><hp:p><hp:run><hp:t>n</hp:t></hp:run></hp:p></hp:subList></hp:footNote></hp:ctrl>`, 0),
		`<hp:p><hp:run><hp:tbl><hp:tr><hp:tc header="1"><hp:subList><hp:p><hp:run><hp:t>a</hp:t></hp:run></hp:p></hp:subList><hp:cellAddr colAddr="3"/></hp:tc></hp:tr></hp:tbl></hp:run></hp:p>`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) { extractFuzzed(t, "f.hwpx", hwpxDoc(body)) })
}

func FuzzHWP(f *testing.F) {
	fuzzExtract(f, "f.hwp", formatSeed(f, "hwp/table.hwp"), formatSeed(f, "hwp/paragraph-numbering.hwp"))
}

// FuzzHWPRecords fuzzes the record stream of a BodyText section (and of DocInfo): mutating the compound file
// (FuzzHWP) mostly breaks its sector chains before a record is read.
func FuzzHWPRecords(f *testing.F) {
	f.Add(hwpRec(hwpTagStyle, 1, hwpStyle("개요 1", "Outline 1")), bytes.Join([][]byte{
		hwpRec(hwpTagParaHeader, 0, hwpParaHeader(0, true)), hwpRec(hwpTagParaText, 1, hwpText("a\tb\x0b")), hwpRec(hwpTagLineSeg, 1, hwpLineSeg(0, 10)),
		hwpRec(hwpTagCtrlHeader, 1, hwpCtrl("tbl ")), hwpRec(hwpTagTable, 2, nil), hwpRec(hwpTagListHeader, 2, hwpCell(1, 0)),
		hwpRec(hwpTagParaText, 3, hwpText("c")), hwpRec(hwpTagCtrlHeader, 1, hwpCtrl("en  ")), hwpRec(hwpTagParaText, 3, hwpText("n")),
	}, nil))
	f.Fuzz(func(t *testing.T, docInfo, body []byte) {
		fuzzbudget.Time(t, body, func() {
			_, err := readHWPRecords(t, Limits{}, docInfo, body)
			if err != nil && !errors.Is(err, errHWPRecord) && rag.ErrorCode(err) == "" {
				t.Fatalf("unexpected error %v", err)
			}
		})
	})
}

func FuzzXLSX(f *testing.F) {
	fuzzExtract(f, "f.xlsx", testkit.XLSX(testkit.Sheet{Name: "s", Rows: [][]string{{"h", "n"}, {"a", "1"}}}))
}

// FuzzXLSXSheet fuzzes a worksheet's XML and the shared strings inside a well-formed workbook.
func FuzzXLSXSheet(f *testing.F) {
	f.Add(`<sheetData><row r="1"><c r="A1" t="s"><v>0</v></c><c r="XFD1" t="inlineStr"><is><t>x</t></is></c></row><row><c t="b"><v>1</v></c></row></sheetData>`,
		`<si><r><t>a</t></r><rPh><t>b</t></rPh></si>`)
	f.Fuzz(func(t *testing.T, sheet, strs string) {
		extractFuzzed(t, "f.xlsx", hostile.Zip("xl/workbook.xml", `<workbook><sheets><sheet name="s" r:id="rId1"/></sheets></workbook>`,
			"xl/_rels/workbook.xml.rels", `<Relationships><Relationship Id="rId1" Target="worksheets/sheet1.xml"/></Relationships>`,
			"xl/sharedStrings.xml", "<sst>"+strs+"</sst>", "xl/worksheets/sheet1.xml", "<worksheet>"+sheet+"</worksheet>"))
	})
}

func FuzzPPTX(f *testing.F) {
	fuzzExtract(f, "f.pptx", testkit.PPTX(testkit.Slide{Title: "t", Body: []string{"b"}, Table: [][]string{{"h"}, {"c"}}, Notes: "n"}))
}

// FuzzPPTXSlide fuzzes a slide's XML inside a well-formed presentation.
func FuzzPPTXSlide(f *testing.F) {
	f.Add(`<p:sp><p:nvSpPr><p:nvPr><p:ph type="title"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>T</a:t></a:r><a:br/></a:p></p:txBody></p:sp>` +
		`<a:tbl><a:tr><a:tc><a:txBody><a:p><a:r><a:t>c</a:t></a:r></a:p></a:txBody></a:tc></a:tr></a:tbl>`)
	f.Fuzz(func(t *testing.T, slide string) {
		extractFuzzed(t, "f.pptx", hostile.Zip("ppt/presentation.xml", `<p:presentation><p:sldIdLst><p:sldId id="256" r:id="rId1"/></p:sldIdLst></p:presentation>`,
			"ppt/_rels/presentation.xml.rels", `<Relationships><Relationship Id="rId1" Target="slides/slide1.xml"/></Relationships>`,
			"ppt/slides/slide1.xml", "<p:sld><p:cSld><p:spTree>"+slide+"</p:spTree></p:cSld></p:sld>"))
	})
}
