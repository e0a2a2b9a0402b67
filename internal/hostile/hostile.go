// Package hostile builds the hostile inputs ragd's budgets are tested with — zip bombs, PDF bombs, quadratic
// Markdown, deep XML — at test time, so that no bomb is ever stored in the repository. Sizes are
// parameters: tests use small ones that cross a lowered limit, and the same code builds the full-size ones.
package hostile

import (
	"archive/zip"
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"strings"
)

// repeatReader yields n bytes of the repeated pattern p.
type repeatReader struct {
	p   []byte
	n   int64
	off int
}

func (r *repeatReader) Read(b []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	w := 0
	for w < len(b) && r.n > 0 {
		c := copy(b[w:min(len(b), w+int(min(r.n, int64(len(r.p)-r.off))))], r.p[r.off:])
		w += c
		r.n -= int64(c)
		r.off = (r.off + c) % len(r.p)
	}
	return w, nil
}

// Repeat returns a reader of n bytes of pattern repeated.
func Repeat(pattern string, n int64) io.Reader { return &repeatReader{p: []byte(pattern), n: n} }

// DOCX returns a DOCX (a zip, deflated) whose word/document.xml is a <w:document> with one paragraph whose
// one <w:t> holds textBytes bytes of "a": the zip bomb of issue 19 at textBytes = 1100 MiB (1.1 MB on disk).
// Extra members (name → content) are added as they are, for styles or relationships.
func DOCX(textBytes int64, extra map[string]string) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("word/document.xml")
	io.WriteString(w, `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>`+
		`<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>`)
	io.Copy(w, Repeat("a", textBytes))
	io.WriteString(w, `</w:t></w:r></w:p></w:body></w:document>`)
	for name, content := range extra {
		w, _ := zw.Create(name)
		io.WriteString(w, content)
	}
	zw.Close()
	return buf.Bytes()
}

// DOCXBody returns a DOCX whose word/document.xml body is body (raw WordprocessingML).
func DOCXBody(body string) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("word/document.xml")
	io.WriteString(w, `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>`+
		`<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`+body+`</w:body></w:document>`)
	zw.Close()
	return buf.Bytes()
}

// Nested returns a paragraph inside depth nested <w:sdt> elements: as the body of DOCXBody, its deepest
// element (w:t) is at depth+5 (w:document, w:body, the w:sdt, w:p, w:r, w:t).
func Nested(depth int) string {
	return strings.Repeat("<w:sdt>", depth) + `<w:p><w:r><w:t>deep</w:t></w:r></w:p>` + strings.Repeat("</w:sdt>", depth)
}

// QuadraticMarkdown returns n bytes of "*a_" repeated: emphasis delimiters that never match, which cost
// goldmark n² steps (issue 19: 900 KB ran for more than 14 minutes).
func QuadraticMarkdown(n int) []byte {
	b, _ := io.ReadAll(Repeat("*a_", int64(n)))
	return b
}

// PDF returns a PDF with one page per content stream; each stream is written FlateDecode-compressed, so
// a stream of a few bytes repeated is a PDF bomb. The cross-reference table is computed, so PDFium opens
// it without repairs.
func PDF(contents ...io.Reader) []byte {
	streams := make([]pdfStream, len(contents))
	for i, c := range contents {
		var z bytes.Buffer
		zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
		io.Copy(zw, c)
		zw.Close()
		streams[i] = pdfStream{"/Filter /FlateDecode", z.Bytes()}
	}
	return pagedPDF(612, 792, "", nil, streams)
}

// ImagePDF returns a PDF of width × height point pages: first one page per text of texts (shown with
// Helvetica at the top left), then a page whose only content is a grayscale JPEG image (px × py pixels)
// covering it — a scanned page, with no text layer.
func ImagePDF(width, height float64, jpeg []byte, px, py int, texts ...string) []byte {
	streams := make([]pdfStream, 0, len(texts)+1)
	for _, t := range texts {
		streams = append(streams, pdfStream{"", []byte(fmt.Sprintf("BT /F1 12 Tf 72 %.2f Td (%s) Tj ET", height-72, t))})
	}
	streams = append(streams, pdfStream{"", []byte(fmt.Sprintf("q %.2f 0 0 %.2f 0 0 cm /Im1 Do Q", width, height))})
	image := &pdfStream{fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /DCTDecode", px, py), jpeg}
	return pagedPDF(width, height, " /XObject << /Im1 4 0 R >>", image, streams)
}

// pdfStream is a stream object: the entries of its dictionary besides /Length, and its bytes.
type pdfStream struct {
	dict string
	data []byte
}

// pagedPDF writes a PDF of width × height point pages, one per content stream: object 1 is the catalog, 2
// the page tree, 3 the Helvetica font (/F1), 4 the image when there is one; every page's resources are the
// font and res.
func pagedPDF(width, height float64, res string, image *pdfStream, contents []pdfStream) []byte {
	var w pdfWriter
	first := 4
	if image != nil {
		first = 5
	}
	kids := make([]string, len(contents))
	for i := range contents {
		kids[i] = fmt.Sprintf("%d 0 R", first+2*i)
	}
	w.obj("<< /Type /Catalog /Pages 2 0 R >>", nil)
	w.obj(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(contents)), nil)
	w.obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>", nil)
	if image != nil {
		w.obj(fmt.Sprintf("<< %s /Length %d >>", image.dict, len(image.data)), image.data)
	}
	for i, c := range contents {
		w.obj(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %g %g] /Resources << /Font << /F1 3 0 R >>%s >> /Contents %d 0 R >>",
			width, height, res, first+2*i+1), nil)
		w.obj(fmt.Sprintf("<< /Length %d %s >>", len(c.data), c.dict), c.data)
	}
	return w.finish()
}

// pdfWriter writes numbered objects (from 1) and then the cross-reference table; object 1 is the catalog.
type pdfWriter struct {
	buf     bytes.Buffer
	offsets []int
}

func (w *pdfWriter) obj(body string, stream []byte) {
	if w.buf.Len() == 0 {
		w.buf.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	}
	w.offsets = append(w.offsets, w.buf.Len())
	fmt.Fprintf(&w.buf, "%d 0 obj\n%s", len(w.offsets), body)
	if stream != nil {
		w.buf.WriteString("\nstream\n")
		w.buf.Write(stream)
		w.buf.WriteString("\nendstream")
	}
	w.buf.WriteString("\nendobj\n")
}

func (w *pdfWriter) finish() []byte {
	xref := w.buf.Len()
	fmt.Fprintf(&w.buf, "xref\n0 %d\n0000000000 65535 f \n", len(w.offsets)+1)
	for _, o := range w.offsets {
		fmt.Fprintf(&w.buf, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&w.buf, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(w.offsets)+1, xref)
	return w.buf.Bytes()
}

// PDFText is the content stream of a page that shows text at the top left.
func PDFText(text string) io.Reader {
	return strings.NewReader(fmt.Sprintf("BT /F1 12 Tf 72 720 Td (%s) Tj ET", text))
}

// PDFBomb is the content stream of a page that inflates to n bytes (spaces, which PDFium must still hold
// and parse) and then shows text.
func PDFBomb(n int64) io.Reader {
	return io.MultiReader(Repeat(" ", n), PDFText("after the bomb"))
}

// Zip returns a zip archive (deflated) of the members given as name, content pairs, in that order: the
// OOXML and OWPML packages (XLSX, PPTX, HWPX) tests build.
func Zip(members ...string) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; i+1 < len(members); i += 2 {
		w, _ := zw.Create(members[i])
		io.WriteString(w, members[i+1])
	}
	zw.Close()
	return buf.Bytes()
}
