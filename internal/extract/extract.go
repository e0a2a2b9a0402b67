package extract

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

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
)

// DefaultMaxBytes is the default size limit of one file (rag.DefaultMaxUploadBytes).
const DefaultMaxBytes = rag.DefaultMaxUploadBytes

// Options configures an Extractor. The zero value is usable: every field has a default.
type Options struct {
	// MaxBytes is the largest file accepted (inclusive); larger files fail with payload_too_large.
	// Default DefaultMaxBytes.
	MaxBytes int64
	// PDFTimeout bounds the extraction of one PDF; default 2 minutes.
	PDFTimeout time.Duration
	// PDFMemoryLimit bounds the WebAssembly memory of one PDFium worker, which holds one PDF at a time
	// (the file's bytes are copied into it); default 1 GiB, at most 4 GiB.
	PDFMemoryLimit int64
	// PDFWorkers is how many PDFs are extracted at once; further calls wait. Default 2.
	PDFWorkers int
	// PDFRecycleBytes: a worker that has handled a PDF at least this large is discarded afterwards, so
	// that the memory PDFium grew for it is given back. Default 16 MiB.
	PDFRecycleBytes int64
}

func (o Options) withDefaults() Options {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.PDFTimeout <= 0 {
		o.PDFTimeout = 2 * time.Minute
	}
	if o.PDFMemoryLimit <= 0 {
		o.PDFMemoryLimit = 1 << 30
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

	mu     sync.Mutex
	pdf    *pdfRuntime // started on the first PDF: compiling PDFium takes seconds
	closed bool
}

var _ rag.Extractor = (*Extractor)(nil)

// New returns an Extractor. The PDF runtime is started lazily, on the first PDF.
func New(opts Options) (*Extractor, error) {
	return &Extractor{opts: opts.withDefaults()}, nil
}

// Close releases the PDF runtime. Extract must not be called after Close.
func (e *Extractor) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	if e.pdf == nil {
		return nil
	}
	err := e.pdf.close()
	e.pdf = nil
	return err
}

// Extract turns the file called name (its base name is used in messages and its extension to detect the
// type) into blocks. Errors are *rag.Error: unsupported_media_type, payload_too_large, or invalid_request for
// an empty file, a corrupt or encrypted PDF, a PDF without a text layer (needs OCR), text that is not UTF-8
// or a malformed DOCX; a cancelled ctx is returned as is.
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
	var (
		x   *rag.Extracted
		err error
	)
	switch {
	case mt == MediaPDF:
		var rt *pdfRuntime
		rt, err = e.pdfRuntime()
		if err == nil {
			x, err = rt.extract(ctx, base, data)
		}
	case mt == MediaDOCX:
		x, err = extractDOCX(base, data)
	case mt == MediaHTML:
		x, err = extractHTML(base, data)
	case mt == MediaMarkdown || mt == MediaMDX:
		x, err = extractMarkdown(base, data, mt == MediaMDX)
	case mt == MediaText:
		x, err = extractText(base, data)
	default:
		x, err = extractCode(base, data)
	}
	if err != nil {
		return nil, err
	}
	x.MediaType = mt
	if len(x.Blocks) == 0 {
		return nil, rag.Errorf(rag.CodeInvalid, "%s: no text found", base)
	}
	return x, nil
}

func (e *Extractor) pdfRuntime() (*pdfRuntime, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errors.New("extract: extractor is closed")
	}
	if e.pdf == nil {
		rt, err := newPDFRuntime(e.opts)
		if err != nil {
			return nil, fmt.Errorf("start pdf runtime: %w", err)
		}
		e.pdf = rt
	}
	return e.pdf, nil
}

// checkUTF8 returns data as a string without a byte-order mark, or invalid_request when it is not UTF-8.
func checkUTF8(name string, data []byte) (string, error) {
	data = trimBOM(data)
	if !utf8.Valid(data) {
		return "", rag.Errorf(rag.CodeInvalid, "%s: text is not valid UTF-8", name)
	}
	return string(data), nil
}

func trimBOM(data []byte) []byte {
	if len(data) >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF {
		return data[3:]
	}
	return data
}
