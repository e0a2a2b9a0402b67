package extract

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"

	"github.com/klippa-app/go-pdfium"
	"github.com/klippa-app/go-pdfium/enums"
	"github.com/klippa-app/go-pdfium/references"
	"github.com/klippa-app/go-pdfium/requests"

	"github.com/ragd/ragd/internal/rag"
)

// MaxRenderAspect bounds a rendered page's height to this many times its width: a page far taller than
// wide (a receipt, a hostile 1 × 10,000 point page) is rendered narrower instead of into an image of
// unbounded size.
const MaxRenderAspect = 4

// RenderedPage is one page of a PDF as a PNG image.
type RenderedPage struct {
	PNG []byte
	// Width and Height are the image's size in pixels.
	Width, Height int
	// Pages is how many pages the PDF has.
	Pages int
}

// RenderPage renders page (1-based) of the PDF data as a PNG image width pixels wide, its height in
// proportion but at most MaxRenderAspect × width (a taller page is fitted into that box). It runs on PDFium
// workers of its own (Options.PDFWorkers of them, so that pages are not queued behind long extractions),
// within the worker memory limit, and ctx bounds its time, waiting for a worker included: a page still
// rendering when ctx ends is stopped (its worker is killed after a short grace). Errors are *rag.Error:
// not_found for a page past the last, invalid_request for a page or width below 1 and for a PDF that cannot
// be read (encrypted, corrupt), too_large when it needs more memory than the limit; ctx's error as is.
func (e *Extractor) RenderPage(ctx context.Context, data []byte, page, width int) (*RenderedPage, error) {
	if width < 1 {
		return nil, rag.Errorf(rag.CodeInvalid, "width %d: must be at least 1 pixel", width)
	}
	var (
		img   *image.RGBA
		pages int
	)
	err := e.onPage(ctx, data, page, func(inst pdfium.Pdfium, d references.FPDF_DOCUMENT, count int) error {
		var err error
		img, err = renderPage(inst, d, page, width, e.opts.PDFMemoryLimit)
		pages = count
		return err
	})
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	// Speed over size: a text page at 1000 px is ~0.1–0.3 MB either way, and the default level takes
	// several times longer to encode.
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("encode page %d: %w", page, err)
	}
	return &RenderedPage{PNG: buf.Bytes(), Width: img.Rect.Dx(), Height: img.Rect.Dy(), Pages: pages}, nil
}

// onPage opens the PDF data on a worker of the page runtime and calls fn with it and its page count once
// it knows page (1-based) is one of its pages. Errors: invalid_request for a page below 1 or a PDF that
// cannot be read, not_found for a page past the last, too_large (PDFium's memory), fn's; ctx's error as is
// once ctx has ended.
func (e *Extractor) onPage(ctx context.Context, data []byte, page int, fn func(inst pdfium.Pdfium, d references.FPDF_DOCUMENT, count int) error) error {
	if page < 1 {
		return rag.Errorf(rag.CodeInvalid, "page %d: pages are numbered from 1", page)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	rt, err := e.pdfRuntime(&e.render)
	if err != nil {
		return err
	}
	err = rt.run(ctx, ctx, len(data), func(inst pdfium.Pdfium) error {
		d, count, err := openPDF(inst, "PDF", data, e.opts.PDFMemoryLimit)
		if err != nil {
			return err
		}
		defer inst.FPDF_CloseDocument(&requests.FPDF_CloseDocument{Document: d})
		if err := ctx.Err(); err != nil {
			return err // checked between PDFium calls, as extraction does
		}
		if page > count {
			return rag.Errorf(rag.CodeNotFound, "page %d: the PDF has %d page(s)", page, count)
		}
		return fn(inst, d, count)
	})
	if cerr := ctx.Err(); err != nil && cerr != nil {
		return cerr
	}
	return err
}

// renderPage renders page (1-based) of d into an opaque image of its own (a page with transparency is
// laid on white).
func renderPage(inst pdfium.Pdfium, d references.FPDF_DOCUMENT, page, width int, memLimit int64) (*image.RGBA, error) {
	res, err := inst.RenderPageInPixels(&requests.RenderPageInPixels{
		Page:  requests.Page{ByIndex: &requests.PageByIndex{Document: d, Index: page - 1}},
		Width: width, Height: MaxRenderAspect * width,
		// Annotations are part of what a reader sees (stamps, highlights, form values).
		RenderFlags: enums.FPDF_RENDER_FLAG_ANNOT,
	})
	if err != nil {
		if isOutOfMemory(err) {
			return nil, outOfMemory("PDF", memLimit, err)
		}
		return nil, rag.WrapError(rag.CodeInvalid, err, "page %d cannot be rendered", page)
	}
	// The pixels live in the instance's memory until Cleanup: copy them out, laid on white (a page with
	// transparency is rendered on a transparent background; PDFium's alpha is not premultiplied).
	defer res.Cleanup()
	src, ok := res.Result.RenderedImage.(*image.RGBA)
	if !ok {
		return nil, fmt.Errorf("render page %d: unexpected image type %T", page, res.Result.RenderedImage)
	}
	w, h := src.Rect.Dx(), src.Rect.Dy()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		s, d := src.Pix[y*src.Stride:y*src.Stride+4*w], img.Pix[y*img.Stride:y*img.Stride+4*w]
		for i := 0; i < len(s); i += 4 {
			if a := uint32(s[i+3]); a == 255 {
				copy(d[i:i+3], s[i:i+3])
			} else {
				for c := range 3 {
					d[i+c] = uint8((uint32(s[i+c])*a + 255*(255-a)) / 255)
				}
			}
			d[i+3] = 255
		}
	}
	return img, nil
}
