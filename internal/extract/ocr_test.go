package extract

import (
	"bytes"
	"context"
	"fmt"
	"image/jpeg"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klippa-app/go-pdfium"
	"github.com/klippa-app/go-pdfium/requests"

	"github.com/ragd/ragd/internal/hostile"
	"github.com/ragd/ragd/internal/rag"
)

// needTesseract skips a test when Tesseract with the Korean and English data is not installed (make test
// installs it: scripts/test.sh).
func needTesseract(t testing.TB) {
	t.Helper()
	out, err := exec.Command("tesseract", "--list-langs").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "kor") || !strings.Contains(string(out), "eng") {
		t.Skip("Tesseract with kor and eng is not installed (apt-get install tesseract-ocr tesseract-ocr-kor tesseract-ocr-eng)")
	}
}

// TestOCR_ScannedFixtures reads the image-only PDFs of ../shared/formats/scanned (pages of two shared PDFs
// rendered at 200 dpi): every block is marked as OCR with a confidence, and each page's character error rate
// against the original page's text layer (both through the same layout, whitespace left out) is reported
// and held under a ceiling: 10 % for Korean body text and 3 % for English, 15 % for the Korean title page
// (200 dpi, letter-spaced titles; measured 11 %). The table of contents (page 2 of the review report) is not
// held to a rate — its text layer is mostly dot leaders, which OCR reads as other marks (91 %) — but its
// entries must be read.
func TestOCR_ScannedFixtures(t *testing.T) {
	needTesseract(t)
	for _, c := range []struct {
		file, original string
		max            []float64 // per page; 0: not held to a rate
		phrases        map[int][]string
	}{
		{"scanned/scanned-ko-review-report-p1-3.pdf", "pdf/bill_2125318_review_report.pdf", []float64{0.15, 0, 0.10},
			map[int][]string{1: {"환경노동위원회"}, 2: {"제안경위", "참고자료"}, 3: {"회부되었음"}}},
		{"scanned/scanned-en-federal-register-p1-2.pdf", "pdf/federal-register-2020-17221.pdf", []float64{0.03, 0.03},
			map[int][]string{1: {"Airworthiness Directives"}, 2: {"189 fatalities"}}},
	} {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(formats, c.file))
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			x, err := shared.Extract(context.Background(), c.file, data)
			if err != nil {
				t.Fatal(err)
			}
			took := time.Since(start)
			if x.Pages != len(c.max) || len(x.FailedPages) != 0 {
				t.Fatalf("pages %d, failed %v; want %d pages, none failed", x.Pages, x.FailedPages, len(c.max))
			}
			for _, b := range x.Blocks {
				if !b.OCR || b.OCRConfidence <= 0 || b.OCRConfidence > 1 {
					t.Fatalf("block on page %d not marked as OCR with a confidence: %+v", b.Page, b)
				}
			}
			orig := extractFixture(t, c.original)
			for p := 1; p <= len(c.max); p++ {
				for _, ph := range c.phrases[p] {
					if !strings.Contains(squash(pageText(x, p)), squash(ph)) {
						t.Errorf("page %d lacks %q", p, ph)
					}
				}
				rate := cer(pageText(x, p), pageText(orig, p))
				t.Logf("page %d: CER %.2f %%", p, 100*rate)
				if c.max[p-1] > 0 && rate > c.max[p-1] {
					t.Errorf("page %d: CER %.3f over %.2f", p, rate, c.max[p-1])
				}
			}
			t.Logf("%d pages in %s: %.3f pages/s", len(c.max), took.Round(time.Millisecond), float64(len(c.max))/took.Seconds())
		})
	}
}

// scanPage makes an image-only PDF of page (1-based) of the PDF data, as a scanner would: the page rendered
// in grayscale at dpi by PDFium, JPEG-compressed, as the only thing on a page of the same size — after a
// page per text of texts, which have a text layer.
func scanPage(t testing.TB, data []byte, page, dpi int, texts ...string) []byte {
	t.Helper()
	rt, err := shared.pdfRuntime(&shared.render)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	ctx := context.Background()
	err = rt.run(ctx, ctx, len(data), func(inst pdfium.Pdfium) error {
		d, _, err := openPDF(inst, "PDF", data, shared.opts.PDFMemoryLimit)
		if err != nil {
			return err
		}
		defer inst.FPDF_CloseDocument(&requests.FPDF_CloseDocument{Document: d})
		size, err := inst.GetPageSize(&requests.GetPageSize{Page: requests.Page{ByIndex: &requests.PageByIndex{Document: d, Index: page - 1}}})
		if err != nil {
			return err
		}
		img, _, err := renderGray(inst, d, page-1, dpi, shared.opts.PDFMemoryLimit)
		if err != nil {
			return err
		}
		var jpg bytes.Buffer
		if err := jpeg.Encode(&jpg, img, &jpeg.Options{Quality: 85}); err != nil {
			return err
		}
		out = hostile.ImagePDF(size.Width, size.Height, jpg.Bytes(), img.Rect.Dx(), img.Rect.Dy(), texts...)
		return nil
	})
	if err != nil {
		t.Fatalf("scan page %d: %v", page, err)
	}
	return out
}

// cer is the character error rate of got against want: their edit distance over want's length, in runes,
// both compared as squash does (NFKC, whitespace left out).
func cer(got, want string) float64 {
	a, b := []rune(squash(got)), []rune(squash(want))
	return float64(editRow(a, b, false)[len(b)]) / float64(max(len(b), 1))
}

// TestOCR_CharacterErrorRate scans pages of the shared PDFs inside the test (PDFium renders the page at
// 200 dpi, the image becomes the only content of a new PDF: no text layer) and reads them back through
// Extract: the OCR text's character error rate against the original page's text layer (both through the
// same layout, whitespace left out) is at most 10 % for Korean and 3 % for English.
func TestOCR_CharacterErrorRate(t *testing.T) {
	needTesseract(t)
	var pages int
	var took time.Duration
	for _, c := range []struct {
		file string
		page int
		max  float64
	}{
		{"pdf/bill_2125318_review_report.pdf", 3, 0.10},
		{"pdf/bill_2125318_original.pdf", 2, 0.10},
		{"pdf/federal-register-2020-17221.pdf", 1, 0.03},
	} {
		t.Run(fmt.Sprintf("%s#%d", filepath.Base(c.file), c.page), func(t *testing.T) {
			scan := scanPage(t, readFixture(t, c.file), c.page, 300)
			start := time.Now()
			x, err := shared.Extract(context.Background(), "scan.pdf", scan)
			if err != nil {
				t.Fatal(err)
			}
			took += time.Since(start)
			pages++
			for _, b := range x.Blocks {
				if !b.OCR {
					t.Fatalf("block not marked as read by OCR: %+v", b)
				}
			}
			want := pageText(extractFixture(t, c.file), c.page)
			got := pageText(x, 1)
			rate := cer(got, want)
			t.Logf("CER %.2f %% (%d characters of the text layer, whitespace aside), confidence %.2f", 100*rate, len([]rune(squash(want))), x.Blocks[0].OCRConfidence)
			if rate > c.max {
				t.Errorf("CER %.3f over %.2f\nOCR:\n%s\ntext layer:\n%s", rate, c.max, got, want)
			}
		})
	}
	if pages > 0 {
		t.Logf("%d pages in %s: %.2f pages/s", pages, took.Round(time.Millisecond), float64(pages)/took.Seconds())
	}
}

// TestOCR_PageFailsAlone: a scanned page over the OCR time or memory limit is left out and recorded; the
// page with a text layer before it is extracted.
func TestOCR_PageFailsAlone(t *testing.T) {
	needTesseract(t)
	data := scanPage(t, readFixture(t, "pdf/federal-register-2020-17221.pdf"), 1, 150, "Quarterly figures from the text layer")
	for _, c := range []struct {
		name string
		ocr  OCROptions
		want string
	}{
		{"Time", OCROptions{PageTimeout: time.Millisecond}, "OCR failed: OCR took longer than 1ms (limit RAGD_OCR_PAGE_TIMEOUT)"},
		{"Memory", OCROptions{PageMemory: 64 << 20}, "OCR failed: tesseract: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := New(Options{OCR: c.ocr})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			x, err := e.Extract(context.Background(), "mixed.pdf", data)
			if err != nil {
				t.Fatal(err)
			}
			if x.Pages != 2 || len(x.Blocks) != 1 || x.Blocks[0].Page != 1 || x.Blocks[0].Text != "Quarterly figures from the text layer" || x.Blocks[0].OCR {
				t.Errorf("blocks %+v of %d pages, want page 1's text alone", x.Blocks, x.Pages)
			}
			if len(x.FailedPages) != 1 || x.FailedPages[0].Page != 2 || !strings.HasPrefix(x.FailedPages[0].Error, c.want) {
				t.Errorf("failed pages %+v, want page 2: %q…", x.FailedPages, c.want)
			}
		})
	}
}

// TestOCR_Modes: off and a missing Tesseract (auto) leave a scan unread with a message saying why; force
// without Tesseract, an unknown mode and a bad language list refuse to start.
func TestOCR_Modes(t *testing.T) {
	scan, err := os.ReadFile(filepath.Join(formats, "scanned", "scanned-en-federal-register-p1-2.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		ocr  OCROptions
		want string
	}{
		{"Off", OCROptions{Mode: OCROff}, "scan.pdf: PDF has no text layer (scanned or image-only pages); OCR is off (RAGD_OCR=off)"},
		{"AutoWithoutTesseract", OCROptions{Tesseract: "/nonexistent/tesseract"}, "scan.pdf: PDF has no text layer (scanned or image-only pages); it needs OCR and Tesseract is not installed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := New(Options{OCR: c.ocr})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			_, err = e.Extract(context.Background(), "scan.pdf", scan)
			if rag.ErrorCode(err) != rag.CodeInvalid || !strings.HasPrefix(rag.ErrorMessage(err), c.want) {
				t.Errorf("got %v, want invalid_request %q…", err, c.want)
			}
		})
	}
	for name, o := range map[string]OCROptions{
		"ForceWithoutTesseract": {Mode: OCRForce, Tesseract: "/nonexistent/tesseract"},
		"UnknownMode":           {Mode: "sometimes"},
		"BadLanguages":          {Langs: "kor+; rm -rf"},
	} {
		if _, err := New(Options{OCR: o}); err == nil {
			t.Errorf("%s: New accepted %+v", name, o)
		}
	}
}
