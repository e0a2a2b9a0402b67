package extract

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/ragd/ragd/internal/rag"
)

// Media types returned by MediaType and recorded on rag.Extracted. Source code is "text/x-<lang>".
const (
	MediaPDF      = "application/pdf"
	MediaDOCX     = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	MediaHTML     = "text/html"
	MediaMarkdown = "text/markdown"
	MediaMDX      = "text/mdx"
	MediaText     = "text/plain"
	MediaHWPX     = "application/hwp+zip"
	MediaHWP      = "application/x-hwp"
	MediaXLSX     = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	MediaPPTX     = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
)

// Formats names the formats Extract reads, for messages.
const Formats = "PDF, DOCX, HWP/HWPX, XLSX, PPTX, HTML, Markdown, text and source code"

// DefaultMaxBytes is the default size limit of one file (rag.DefaultMaxUploadBytes).
const DefaultMaxBytes = rag.DefaultMaxUploadBytes

// Options configures an Extractor. The zero value is usable: every field has a default.
type Options struct {
	// MaxBytes is the largest file accepted (inclusive); larger files fail with payload_too_large.
	// Default DefaultMaxBytes.
	MaxBytes int64
	// Limits are the budgets of one extraction (inflated bytes, depth, elements, pages, characters, time).
	Limits Limits
	// PDFMemoryLimit bounds the WebAssembly memory of one PDFium worker, which holds one PDF at a time
	// (the file's bytes are copied into it); a PDF that needs more fails with too_large. Default 512 MiB,
	// at most 4 GiB. RAGD_PDF_MEMORY_LIMIT.
	PDFMemoryLimit int64
	// PDFWorkers is how many PDFs are extracted at once; further calls wait. Default 2.
	PDFWorkers int
	// OCR configures the OCR of PDF pages without a text layer (default: auto, kor+eng).
	OCR OCROptions
	// PDFRecycleBytes: a worker that has handled a PDF at least this large is discarded afterwards, so
	// that the memory PDFium grew for it is given back; the Go heap is returned to the system after any
	// extraction of a file (or of inflated bytes) this large. Default 16 MiB.
	PDFRecycleBytes int64
}

func (o Options) withDefaults() Options {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	o.Limits = o.Limits.WithDefaults()
	if o.PDFMemoryLimit <= 0 {
		o.PDFMemoryLimit = 512 << 20
	}
	if o.PDFMemoryLimit > 4<<30 {
		o.PDFMemoryLimit = 4 << 30
	}
	if o.PDFWorkers <= 0 {
		o.PDFWorkers = 2
	}
	if o.PDFRecycleBytes <= 0 {
		o.PDFRecycleBytes = 16 << 20
	}
	return o
}

// Extractor implements rag.Extractor. It is safe for concurrent use; Close releases the PDF runtime.
type Extractor struct {
	opts Options
	ocr  *ocrEngine

	mu  sync.Mutex
	pdf *pdfRuntime // started on the first PDF: compiling PDFium takes seconds
	// render is the runtime of RenderPage, its own so that page images are not queued behind extractions
	// (which may take minutes); started on the first page rendered.
	render *pdfRuntime
	closed bool
}

var _ rag.Extractor = (*Extractor)(nil)

// New returns an Extractor. The PDF runtime is started lazily, on the first PDF. It fails for an OCR mode or
// language list that is not valid, and when OCR is forced but Tesseract is not installed.
func New(opts Options) (*Extractor, error) {
	opts = opts.withDefaults()
	ocr, err := newOCREngine(opts.OCR)
	if err != nil {
		return nil, err
	}
	return &Extractor{opts: opts, ocr: ocr}, nil
}

// Close releases the PDF runtime. Extract must not be called after Close.
func (e *Extractor) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	var errs []error
	for _, rt := range []**pdfRuntime{&e.pdf, &e.render} {
		if *rt != nil {
			errs = append(errs, (*rt).close())
			*rt = nil
		}
	}
	return errors.Join(errs...)
}

// Extract turns the file called name (its base name is used in messages and its extension to detect the
// type) into blocks. Errors are *rag.Error: unsupported_media_type, payload_too_large, too_large or
// too_complex (over a budget of Options.Limits, or PDFium's memory limit; the message names the limit), or
// invalid_request for an empty file, a corrupt or encrypted PDF, a PDF without a text layer (needs OCR), text
// in no encoding ragd can decode or a malformed DOCX; a cancelled ctx is returned as is.
func (e *Extractor) Extract(ctx context.Context, name string, data []byte) (*rag.Extracted, error) {
	base := filepath.Base(name)
	if int64(len(data)) > e.opts.MaxBytes {
		return nil, rag.Errorf(rag.CodePayloadTooLarge, "%s: file is %d bytes, over the limit of %d bytes", base, len(data), e.opts.MaxBytes)
	}
	mt := MediaType(name, data)
	if mt == "" {
		return nil, rag.Errorf(rag.CodeUnsupportedMediaType, "%s: unsupported file type %q", base, strings.ToLower(filepath.Ext(name)))
	}
	if len(data) == 0 {
		return nil, rag.Errorf(rag.CodeInvalid, "%s: empty file", base)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	caller := ctx
	ctx, cancel := context.WithTimeoutCause(ctx, e.opts.Limits.Timeout, errTimeout)
	defer cancel()
	b := newBudget(ctx, base, e.opts.Limits)
	b.caller = caller
	b.pdfMemory = e.opts.PDFMemoryLimit
	defer func() {
		for _, c := range b.cancels {
			c()
		}
		// A large file leaves a large heap behind (inflated XML, PDF characters): give it back now rather
		// than keep the peak resident until the runtime gets round to it.
		if int64(len(data)) >= e.opts.PDFRecycleBytes || b.inflated >= e.opts.PDFRecycleBytes || int64(b.raw) >= e.opts.PDFRecycleBytes/4 {
			debug.FreeOSMemory()
		}
	}()
	var (
		x   *rag.Extracted
		err error
	)
	switch {
	case mt == MediaPDF:
		var rt *pdfRuntime
		rt, err = e.pdfRuntime(&e.pdf)
		if err == nil {
			x, err = rt.extract(ctx, base, data, b)
		}
	case mt == MediaDOCX:
		x, err = extractDOCX(base, data, b)
	case mt == MediaHWPX:
		x, err = extractHWPX(base, data, b)
	case mt == MediaHWP:
		x, err = extractHWP(base, data, b)
	case mt == MediaXLSX:
		x, err = extractXLSX(base, data, b)
	case mt == MediaPPTX:
		x, err = extractPPTX(base, data, b)
	case mt == MediaHTML:
		x, err = extractHTML(base, data, b)
	case mt == MediaMarkdown || mt == MediaMDX:
		x, err = extractMarkdown(base, data, mt == MediaMDX, b)
	case mt == MediaText:
		x, err = extractText(base, data, b)
	default:
		x, err = extractCode(base, data, b)
	}
	if err == nil {
		// Every extractor stops adding blocks once a budget is spent; this is where that becomes the error.
		// (b.ctx: OCR may have renewed the extraction's limit.)
		err = b.overBudget(b.ctx.Err())
	}
	if err != nil {
		if berr := b.overBudget(err); berr != nil && !errors.Is(err, context.Canceled) {
			return nil, berr
		}
		return nil, err
	}
	x.MediaType = mt
	if len(x.Blocks) == 0 {
		return nil, rag.Errorf(rag.CodeInvalid, "%s: no text found", base)
	}
	return x, nil
}

// pdfRuntime returns *rt, started on first use.
func (e *Extractor) pdfRuntime(rt **pdfRuntime) (*pdfRuntime, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errors.New("extract: extractor is closed")
	}
	if *rt == nil {
		r, err := newPDFRuntime(e.opts)
		if err != nil {
			return nil, fmt.Errorf("start pdf runtime: %w", err)
		}
		if rt == &e.pdf {
			r.ocr = e.ocr
		}
		*rt = r
	}
	return *rt, nil
}

func trimBOM(data []byte) []byte {
	if len(data) >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF {
		return data[3:]
	}
	return data
}
