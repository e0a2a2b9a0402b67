package extract

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/unicode"

	"github.com/ragd/ragd/internal/hostile"
	"github.com/ragd/ragd/internal/rag"
)

// extractWith extracts data with its own Extractor of limits lim.
func extractWith(t *testing.T, lim Limits, name string, data []byte) (*rag.Extracted, error) {
	t.Helper()
	e, err := New(Options{Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	return e.Extract(context.Background(), name, data)
}

func wantBudget(t *testing.T, err error, code rag.Code, setting string) {
	t.Helper()
	if rag.ErrorCode(err) != code || !strings.Contains(rag.ErrorMessage(err), "(limit "+setting+")") {
		t.Fatalf("got %v, want %s naming %s", err, code, setting)
	}
}

// The budgets at their boundaries: exactly the limit passes, one more fails with the code and the setting.
func TestBudgets(t *testing.T) {
	t.Run("MemberBytes", func(t *testing.T) {
		// The document part's size with n bytes of text: measure it once, then set the limit around it.
		size := int64(len(inflated(t, hostile.DOCX(1000, nil))))
		if _, err := extractWith(t, Limits{MaxMemberBytes: size}, "m.docx", hostile.DOCX(1000, nil)); err != nil {
			t.Fatalf("at the limit: %v", err)
		}
		_, err := extractWith(t, Limits{MaxMemberBytes: size - 1}, "m.docx", hostile.DOCX(1000, nil))
		wantBudget(t, err, rag.CodeTooLarge, "RAGD_MAX_MEMBER_BYTES")
	})
	t.Run("InflatedBytes", func(t *testing.T) {
		// styles.xml is read first; the total crosses the limit inside document.xml.
		styles := `<w:styles xmlns:w="w">` + strings.Repeat(" ", 5000) + `</w:styles>`
		doc := hostile.DOCX(1000, map[string]string{"word/styles.xml": styles})
		total := int64(len(inflated(t, doc)) + len(styles))
		if _, err := extractWith(t, Limits{MaxInflatedBytes: total}, "i.docx", doc); err != nil {
			t.Fatalf("at the limit: %v", err)
		}
		_, err := extractWith(t, Limits{MaxInflatedBytes: total - 1}, "i.docx", doc)
		wantBudget(t, err, rag.CodeTooLarge, "RAGD_MAX_INFLATED_BYTES")
	})
	t.Run("Depth", func(t *testing.T) {
		doc := hostile.DOCXBody(hostile.Nested(10)) // deepest element at 15
		if x, err := extractWith(t, Limits{MaxDepth: 15}, "d.docx", doc); err != nil || x.Blocks[0].Text != "deep" {
			t.Fatalf("at the limit: %v", err)
		}
		_, err := extractWith(t, Limits{MaxDepth: 14}, "d.docx", doc)
		wantBudget(t, err, rag.CodeTooComplex, "RAGD_MAX_DEPTH")
	})
	t.Run("DepthHTML", func(t *testing.T) {
		// html, head, body are 1–3 (the document node is 1 and html 2): 100 divs put the text at 104.
		page := []byte("<html><body>" + strings.Repeat("<div>", 100) + "deep" + strings.Repeat("</div>", 100) + "</body></html>")
		if _, err := extractWith(t, Limits{MaxDepth: 104}, "d.html", page); err != nil {
			t.Fatalf("at the limit: %v", err)
		}
		_, err := extractWith(t, Limits{MaxDepth: 103}, "d.html", page)
		wantBudget(t, err, rag.CodeTooComplex, "RAGD_MAX_DEPTH")
	})
	t.Run("DepthMarkdown", func(t *testing.T) {
		// 50 nested block quotes: the document is 1, the quotes 2–51.
		md := []byte(strings.Repeat(">", 50) + " deep\n")
		if _, err := extractWith(t, Limits{MaxDepth: 51}, "d.md", md); err != nil {
			t.Fatalf("at the limit: %v", err)
		}
		_, err := extractWith(t, Limits{MaxDepth: 50}, "d.md", md)
		wantBudget(t, err, rag.CodeTooComplex, "RAGD_MAX_DEPTH")
	})
	t.Run("Elements", func(t *testing.T) {
		doc := hostile.DOCXBody(strings.Repeat(`<w:p><w:r><w:t>x</w:t></w:r></w:p>`, 100)) // 2 + 300 elements
		if _, err := extractWith(t, Limits{MaxXMLElements: 302}, "e.docx", doc); err != nil {
			t.Fatalf("at the limit: %v", err)
		}
		_, err := extractWith(t, Limits{MaxXMLElements: 301}, "e.docx", doc)
		wantBudget(t, err, rag.CodeTooComplex, "RAGD_MAX_XML_ELEMENTS")
	})
	for _, name := range []string{"c.txt", "c.md", "c.docx", "c.html", "c.go"} {
		t.Run("Chars/"+name, func(t *testing.T) {
			text := strings.Repeat("가", 1000)
			data := []byte(text)
			switch {
			case strings.HasSuffix(name, ".docx"):
				data = hostile.DOCXBody(`<w:p><w:r><w:t>` + text + `</w:t></w:r></w:p>`)
			case strings.HasSuffix(name, ".html"):
				data = []byte("<html><body><p>" + text + "</p></body></html>")
			}
			if _, err := extractWith(t, Limits{MaxChars: 1000}, name, data); err != nil {
				t.Fatalf("at the limit: %v", err)
			}
			_, err := extractWith(t, Limits{MaxChars: 999}, name, data)
			wantBudget(t, err, rag.CodeTooLarge, "RAGD_MAX_CHARS")
		})
	}
	t.Run("Pages", func(t *testing.T) {
		pdf := hostile.PDF(hostile.PDFText("one"), hostile.PDFText("two"), hostile.PDFText("three"))
		if x, err := shared.Extract(context.Background(), "p.pdf", pdf); err != nil || x.Pages != 3 {
			t.Fatalf("default limits: %v", err)
		}
		e, err := New(Options{Limits: Limits{MaxPages: 3}})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		if _, err := e.Extract(context.Background(), "p.pdf", pdf); err != nil {
			t.Fatalf("at the limit: %v", err)
		}
		e2, _ := New(Options{Limits: Limits{MaxPages: 2}})
		defer e2.Close()
		_, err = e2.Extract(context.Background(), "p.pdf", pdf)
		wantBudget(t, err, rag.CodeTooLarge, "RAGD_MAX_PAGES")
	})
	t.Run("PDFMemory", func(t *testing.T) {
		// A page whose content stream inflates to 96 MiB, read by PDFium with 64 MiB of memory; the next
		// PDF gets a fresh instance and reads.
		e, err := New(Options{PDFMemoryLimit: 64 << 20})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		_, err = e.Extract(context.Background(), "bomb.pdf", hostile.PDF(hostile.PDFText("one"), hostile.PDFBomb(96<<20)))
		wantBudget(t, err, rag.CodeTooLarge, "RAGD_PDF_MEMORY_LIMIT")
		x, err := e.Extract(context.Background(), "ok.pdf", hostile.PDF(hostile.PDFText("fine")))
		if err != nil || x.Blocks[0].Text != "fine" {
			t.Fatalf("after the bomb: %v", err)
		}
	})
	t.Run("ZipBomb", func(t *testing.T) {
		// The bomb at a tenth of its size: 110 MiB of text, 110 KB on disk, stopped by the default
		// member limit before the text is whole.
		_, err := shared.Extract(context.Background(), "bomb.docx", hostile.DOCX(110<<20, nil))
		wantBudget(t, err, rag.CodeTooLarge, "RAGD_MAX_MEMBER_BYTES")
	})
	t.Run("QuadraticMarkdown", func(t *testing.T) {
		// 90 KB of "*a_" (a tenth of the file, which ran for more than 14 minutes): the text comes
		// through, the delimiters past the bound as text.
		x, err := shared.Extract(context.Background(), "q.md", hostile.QuadraticMarkdown(90_000))
		if err != nil || len(x.Blocks) != 1 || !strings.HasSuffix(x.Blocks[0].Text, "*a_") {
			t.Fatalf("got %v", err)
		}
	})
}

func inflated(t *testing.T, docx []byte) []byte {
	t.Helper()
	zr := mustZip(t, docx)
	for _, f := range zr.File {
		if f.Name == "word/document.xml" {
			return readAll(t, f)
		}
	}
	t.Fatal("no document.xml")
	return nil
}

// Text in UTF-16 (with its byte-order mark) and in EUC-KR/CP949 is decoded; bytes that decode as none of
// them are refused, as is UTF-16 cut in the middle of a character.
func TestEncodings(t *testing.T) {
	const text = "한국어 문서와 English text, 똠방각하 펲"
	le, _ := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().String(text)
	be, _ := unicode.UTF16(unicode.BigEndian, unicode.UseBOM).NewEncoder().String(text)
	// 똠 and 펲 are outside EUC-KR's 2,350 syllables: only CP949 (which korean.EUCKR implements) has them.
	cp949, err := korean.EUCKR.NewEncoder().String(text)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, data string }{
		{"le.txt", le}, {"be.md", be}, {"cp949.txt", cp949}, {"cp949.md", cp949},
	} {
		x, err := shared.Extract(context.Background(), c.name, []byte(c.data))
		if err != nil || x.Blocks[0].Text != text {
			t.Errorf("%s: got %v %+v", c.name, err, x)
		}
	}
	for _, c := range []struct{ name, data string }{
		{"odd.txt", le[:len(le)-1]},
		{"bad.txt", "\xb0\x20broken"}, // a CP949 lead byte followed by a space
		{"nul.txt", "a\x00\xff"},
	} {
		if _, err := shared.Extract(context.Background(), c.name, []byte(c.data)); rag.ErrorCode(err) != rag.CodeInvalid {
			t.Errorf("%s: got %v, want invalid_request", c.name, err)
		}
	}
}

func mustZip(t *testing.T, data []byte) *zip.Reader {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return zr
}

func readAll(t *testing.T, f *zip.File) []byte {
	t.Helper()
	rc, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// BenchmarkQuadraticMarkdown extracts the "*a_" file at a tenth of its size and at its size: with
// emphasis bounded per block, ten times the input takes about ten times as long (it took more than 14
// minutes at 900 KB before).
func BenchmarkQuadraticMarkdown(b *testing.B) {
	for _, n := range []int{90_000, 900_000} {
		data := hostile.QuadraticMarkdown(n)
		b.Run(strconv.Itoa(n/1000)+"KB", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := shared.Extract(context.Background(), "q.md", data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
