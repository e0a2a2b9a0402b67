package extract

import (
	"context"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/fuzzbudget"
	"github.com/ragd/ragd/internal/hostile"
	"github.com/ragd/ragd/internal/rag"
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
		switch rag.ErrorCode(err) {
		case "", rag.CodeInvalid, rag.CodeTooLarge, rag.CodeTooComplex, rag.CodePayloadTooLarge, rag.CodeUnsupportedMediaType:
		default:
			t.Fatalf("%s: unexpected error %v", name, err)
		}
	})
}

func FuzzText(f *testing.F) {
	fuzzExtract(f, "f.txt", []byte("one\n\ntwo"), []byte("\xff\xfeh\x00i\x00"), []byte("\xc7\xd1\xb1\xb9"))
}

func FuzzCode(f *testing.F) {
	fuzzExtract(f, "f.go", []byte("package x\n\nfunc A() {\n}\n"), []byte("}\n\n\n\tx"))
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

func FuzzPDF(f *testing.F) {
	fuzzExtract(f, "f.pdf", hostile.PDF(hostile.PDFText("one"), hostile.PDFText("two")))
}
