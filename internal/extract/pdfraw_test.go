package extract

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/klippa-app/go-pdfium"
	"github.com/klippa-app/go-pdfium/requests"
)

// TestCharReader reads pages of every PDF fixture through the direct function handles and through
// go-pdfium's own calls and wants the same characters (code point, box, angle, spacing) from both, and
// the direct reader to be available with the pinned go-pdfium (else extraction silently takes the slow
// path).
func TestCharReader(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(fixtures, "pdf", "*.pdf"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no PDF fixture: %v", err)
	}
	rt, err := shared.pdfRuntime(&shared.pdf)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	total := 0
	for _, p := range paths {
		data := readFixture(t, filepath.Join("pdf", filepath.Base(p)))
		err := rt.run(ctx, ctx, len(data), func(inst pdfium.Pdfium) error {
			d, pages, err := openPDF(inst, "PDF", data, shared.opts.PDFMemoryLimit)
			if err != nil {
				return err
			}
			defer inst.FPDF_CloseDocument(&requests.FPDF_CloseDocument{Document: d})
			for i := range min(pages, 3) {
				page, err := inst.FPDF_LoadPage(&requests.FPDF_LoadPage{Document: d, Index: i})
				if err != nil {
					return err
				}
				tp, err := inst.FPDFText_LoadPage(&requests.FPDFText_LoadPage{Page: requests.Page{ByReference: &page.Page}})
				if err != nil {
					return err
				}
				n, err := inst.FPDFText_CountChars(&requests.FPDFText_CountChars{TextPage: tp.TextPage})
				if err != nil {
					return err
				}
				r := charReaderFor(inst, tp.TextPage)
				if r == nil {
					t.Fatal("no direct character reader for go-pdfium's WebAssembly instance")
				}
				fast, err := readChars(ctx, r, n.Count)
				r.close()
				if err != nil {
					return err
				}
				slow, err := readChars(ctx, pdfiumChars{inst: inst, tp: tp.TextPage}, n.Count)
				if err != nil {
					return err
				}
				if !reflect.DeepEqual(fast, slow) {
					t.Errorf("%s page %d: the direct reader read %d characters, go-pdfium %d, or they differ", filepath.Base(p), i+1, len(fast), len(slow))
				}
				total += len(fast)
				inst.FPDFText_ClosePage(&requests.FPDFText_ClosePage{TextPage: tp.TextPage})
				inst.FPDF_ClosePage(&requests.FPDF_ClosePage{Page: page.Page})
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	if total < 1000 {
		t.Fatalf("only %d characters read from the fixtures", total)
	}
}
