package extract

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/klippa-app/go-pdfium"
	pdferrors "github.com/klippa-app/go-pdfium/errors"
	"github.com/klippa-app/go-pdfium/references"
	"github.com/klippa-app/go-pdfium/requests"
	"github.com/klippa-app/go-pdfium/webassembly"
	"github.com/tetratelabs/wazero"

	"github.com/ragd/ragd/internal/rag"
)

// pdfRuntime is one wazero runtime with PDFium compiled once, and a pool of PDFium instances (each its own
// WebAssembly memory, so one PDF's memory limit is one instance's). Instances are reused across files and
// discarded after a large file, a timeout or a failure, so memory PDFium grew is given back.
type pdfRuntime struct {
	opts Options
	pool pdfium.Pool
	// ocr reads pages without a text layer; nil for the page-image runtime.
	ocr *ocrEngine
}

// killGrace is how long a timed-out extraction gets to stop by itself (it checks its context between
// PDFium calls) before its instance is killed mid-call.
const killGrace = 2 * time.Second

// compileCache shares PDFium's compiled machine code between the runtimes of one process and, through a
// directory in the user's cache, between processes: compiling it takes seconds, which every `ragd ingest`
// of a PDF would otherwise pay.
var compileCache = sync.OnceValue(func() wazero.CompilationCache {
	if dir, err := os.UserCacheDir(); err == nil {
		if c, err := wazero.NewCompilationCacheWithDir(filepath.Join(dir, "ragd", "wazero")); err == nil {
			return c
		}
	}
	return wazero.NewCompilationCache()
})

func newPDFRuntime(opts Options) (*pdfRuntime, error) {
	cfg := wazero.NewRuntimeConfig().
		WithCompilationCache(compileCache()).
		WithMemoryLimitPages(uint32(opts.PDFMemoryLimit / 65536)).
		WithCloseOnContextDone(true)
	pool, err := webassembly.Init(webassembly.Config{
		Context:       withWasmMemory(context.Background()),
		MinIdle:       0,
		MaxIdle:       opts.PDFWorkers,
		MaxTotal:      opts.PDFWorkers,
		ReuseWorkers:  true,
		RuntimeConfig: cfg,
		// No file system: documents are passed as bytes, and PDFium has no business reading the disk.
		FSConfig: wazero.NewFSConfig(),
		Stdout:   io.Discard,
		Stderr:   io.Discard,
	})
	if err != nil {
		return nil, fmt.Errorf("init pdfium: %w", err)
	}
	return &pdfRuntime{opts: opts, pool: pool}, nil
}

func (rt *pdfRuntime) close() error { return rt.pool.Close() }

// extract reads one PDF within b's limits; ctx carries the extraction's time limit.
func (rt *pdfRuntime) extract(ctx context.Context, name string, data []byte, b *budget) (*rag.Extracted, error) {
	var doc *pdfDoc
	ocr := rt.ocr
	if !ocr.on() {
		ocr = nil
	}
	err := rt.run(ctx, b.caller, len(data), func(inst pdfium.Pdfium) error {
		var err error
		doc, err = readPDF(ctx, inst, name, data, b, ocr)
		return err
	})
	if err != nil {
		if err := b.overBudget(err); err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, b.timeout(err)
		}
		return nil, err
	}
	if len(doc.ocr) > 0 {
		if err := rt.ocrDoc(name, data, doc, b); err != nil {
			return nil, err
		}
	}
	if !slices.ContainsFunc(doc.pages, func(pc pageChars) bool { return len(pc.chars) > 0 }) {
		return nil, noText(name, rt.ocr, doc)
	}
	x, err := layoutDocument(name, doc, b)
	if err != nil {
		return nil, err
	}
	for i := range x.Blocks {
		if c, ok := doc.conf[x.Blocks[i].Page-1]; ok {
			x.Blocks[i].OCR, x.Blocks[i].OCRConfidence = true, c
		}
	}
	x.FailedPages = doc.failed
	return x, nil
}

// noText is the error of a PDF in which neither the text layer nor OCR found any character.
func noText(name string, ocr *ocrEngine, doc *pdfDoc) error {
	why := "OCR is off (RAGD_OCR=off)"
	switch {
	case len(doc.failed) > 0:
		why = fmt.Sprintf("OCR failed on page %d: %s", doc.failed[0].Page, doc.failed[0].Error)
	case len(doc.ocr) > 0:
		why = "OCR found no text on it either"
	case ocr != nil && ocr.opts.Mode != OCROff && ocr.path == "":
		why = "it needs OCR and Tesseract is not installed (Debian: apt-get install tesseract-ocr tesseract-ocr-kor tesseract-ocr-eng)"
	case ocr != nil && ocr.opts.Mode != OCROff:
		why = "its pages hold nothing to read"
	}
	return rag.Errorf(rag.CodeInvalid, "%s: PDF has no text layer (scanned or image-only pages); %s", name, why)
}

// run calls fn with an instance of the pool; ctx bounds fn's time, caller the wait for a free instance.
// Waiting is not the document's fault: it does not count against its time limit, but the caller may still
// give up (shutdown, deletion). size is the bytes of the PDF fn works on.
func (rt *pdfRuntime) run(ctx, caller context.Context, size int, fn func(inst pdfium.Pdfium) error) error {
	inst, err := rt.pool.GetInstanceWithContext(caller)
	if err != nil {
		if cerr := caller.Err(); cerr != nil {
			return cerr
		}
		return fmt.Errorf("get pdfium instance: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- fn(inst) }()
	select {
	case err = <-done:
	case <-ctx.Done():
		select {
		case err = <-done:
		case <-time.After(killGrace):
			// Stuck inside one PDFium call: killing the instance interrupts it (WithCloseOnContextDone).
			_ = inst.Kill()
			<-done
			err = ctx.Err()
		}
	}
	if err != nil && !refused(err) || int64(size) >= rt.opts.PDFRecycleBytes || wasmMemoryLive() > int64(rt.opts.PDFWorkers)*64<<20 {
		// A failed instance may be in any state; a large file, or a small one that needed much memory, has
		// grown it. Start afresh: closing the instance gives its memory back. (Starting one takes about a
		// second, which a stream of files PDFium refuses to open need not pay each time.)
		_ = inst.Kill()
	} else {
		_ = inst.Close()
	}
	return err
}

// refused reports an error of PDFium declining a file (not a PDF, damaged beyond repair, encrypted, a page
// it cannot load): the call returned cleanly with an error, and the instance is as it was. A trap of the
// WebAssembly instance (out of memory, a fault) is not a refusal.
func refused(err error) bool {
	return rag.ErrorCode(err) == rag.CodeInvalid && !strings.Contains(err.Error(), "wasm error")
}

// pdfDoc is what is read from PDFium: the characters of every page with their boxes.
type pdfDoc struct {
	title string
	pages []pageChars
	// ocr lists the pages (0-based) to be read by OCR; conf holds the confidence of those that were,
	// failed those that could not be.
	ocr     []int
	conf    map[int]float64
	failed  []rag.PageFailure
	ocrTime time.Duration
}

// readPDF reads every character of every page, and lists the pages ocr (when not nil) is to read. It checks
// ctx between PDFium calls so that a timeout stops it without killing the instance.
func readPDF(ctx context.Context, inst pdfium.Pdfium, name string, data []byte, b *budget, ocr *ocrEngine) (*pdfDoc, error) {
	d, pageCount, err := openPDF(inst, name, data, b.pdfMemory)
	if err != nil {
		return nil, err
	}
	defer inst.FPDF_CloseDocument(&requests.FPDF_CloseDocument{Document: d})
	if err := b.pages(pageCount); err != nil {
		return nil, err
	}
	doc := &pdfDoc{conf: map[int]float64{}}
	if t, err := inst.FPDF_GetMetaText(&requests.FPDF_GetMetaText{Document: d, Tag: "Title"}); err == nil {
		doc.title = strings.TrimSpace(t.Value)
	}
	for i := 0; i < pageCount; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pc, scan, err := readPage(ctx, inst, d, i, ocr)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if isOutOfMemory(err) {
				return nil, outOfMemory(name, b.pdfMemory, err)
			}
			return nil, rag.WrapError(rag.CodeInvalid, err, "%s: corrupt PDF (page %d cannot be read)", name, i+1)
		}
		if err := b.rawChars(len(pc.chars)); err != nil {
			return nil, err
		}
		doc.pages = append(doc.pages, pc)
		if scan {
			doc.ocr = append(doc.ocr, i)
		}
	}
	return doc, nil
}

// openPDF opens a PDF and counts its pages; the caller closes the document. Errors are *rag.Error:
// invalid_request for an encrypted or corrupt PDF or one without pages, too_large when it needs more than
// memLimit bytes of PDFium memory.
func openPDF(inst pdfium.Pdfium, name string, data []byte, memLimit int64) (references.FPDF_DOCUMENT, int, error) {
	opened, err := inst.OpenDocument(&requests.OpenDocument{File: &data})
	if err != nil {
		if isOutOfMemory(err) {
			return "", 0, outOfMemory(name, memLimit, err)
		}
		switch {
		case errors.Is(err, pdferrors.ErrPassword), errors.Is(err, pdferrors.ErrSecurity):
			return "", 0, rag.WrapError(rag.CodeInvalid, err, "%s: encrypted PDF (password required); remove the password and upload it again", name)
		case errors.Is(err, pdferrors.ErrFormat), errors.Is(err, pdferrors.ErrFile), errors.Is(err, pdferrors.ErrUnknown):
			return "", 0, rag.WrapError(rag.CodeInvalid, err, "%s: corrupt PDF (cannot be parsed)", name)
		}
		return "", 0, rag.WrapError(rag.CodeInvalid, err, "%s: PDF cannot be read", name)
	}
	d := opened.Document
	count, err := inst.FPDF_GetPageCount(&requests.FPDF_GetPageCount{Document: d})
	switch {
	case err != nil:
		err = rag.WrapError(rag.CodeInvalid, err, "%s: corrupt PDF (no page tree)", name)
	case count.PageCount == 0:
		err = rag.Errorf(rag.CodeInvalid, "%s: corrupt PDF (no pages)", name)
	}
	if err != nil {
		inst.FPDF_CloseDocument(&requests.FPDF_CloseDocument{Document: d})
		return "", 0, err
	}
	return d, count.PageCount, nil
}

// readPage reads the characters of page index (0-based) and whether ocr (when not nil) is to read it.
func readPage(ctx context.Context, inst pdfium.Pdfium, d references.FPDF_DOCUMENT, index int, ocr *ocrEngine) (pc pageChars, scan bool, err error) {
	page, err := inst.FPDF_LoadPage(&requests.FPDF_LoadPage{Document: d, Index: index})
	if err != nil {
		return pc, false, fmt.Errorf("load page: %w", err)
	}
	defer inst.FPDF_ClosePage(&requests.FPDF_ClosePage{Page: page.Page})
	pc, err = readPageText(ctx, inst, page.Page)
	if err == nil && ocr != nil {
		scan = ocr.needsOCR(inst, page.Page, pc)
	}
	return pc, scan, err
}

// readPageText reads the characters of a loaded page.
func readPageText(ctx context.Context, inst pdfium.Pdfium, page references.FPDF_PAGE) (pageChars, error) {
	var pc pageChars
	ref := requests.Page{ByReference: &page}
	if w, err := inst.FPDF_GetPageWidthF(&requests.FPDF_GetPageWidthF{Page: ref}); err == nil {
		pc.w = float64(w.PageWidth)
	}
	if h, err := inst.FPDF_GetPageHeightF(&requests.FPDF_GetPageHeightF{Page: ref}); err == nil {
		pc.h = float64(h.PageHeight)
	}
	tp, err := inst.FPDFText_LoadPage(&requests.FPDFText_LoadPage{Page: ref})
	if err != nil {
		return pc, fmt.Errorf("load text page: %w", err)
	}
	defer inst.FPDFText_ClosePage(&requests.FPDFText_ClosePage{TextPage: tp.TextPage})
	n, err := inst.FPDFText_CountChars(&requests.FPDFText_CountChars{TextPage: tp.TextPage})
	if err != nil {
		return pc, fmt.Errorf("count chars: %w", err)
	}
	var src charSource = pdfiumChars{inst: inst, tp: tp.TextPage}
	if r := charReaderFor(inst, tp.TextPage); r != nil && !slowCharReads {
		defer r.close()
		src = r
	}
	if pc.chars, err = readChars(ctx, src, n.Count); err != nil {
		return pc, err
	}
	if len(pc.chars) > 0 {
		pc.rules = readRules(ctx, inst, page)
	}
	upright(&pc)
	return pc, nil
}

// readChars reads the n characters of a text page from src: those in the file with a box, each marked
// when spaces came before it.
func readChars(ctx context.Context, src charSource, n int) ([]pchar, error) {
	var chars []pchar
	spaceBefore := false
	for i := range n {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return chars, err
			}
		}
		r, err := src.unicodeAt(i)
		if err != nil {
			return chars, fmt.Errorf("char %d: %w", i, err)
		}
		if r == 0 || r == 0xFFFE || r == 0xFFFF {
			continue
		}
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == 0xFEFF || r == 0x200B {
			// Spaces, generated or not, carry no position we trust; they only say a word ended here.
			spaceBefore = true
			continue
		}
		if src.generatedAt(i) {
			// PDFium generates spaces and line breaks only; anything else generated is not in the file.
			continue
		}
		box, ok := src.boxAt(i) // left, top, right, bottom
		if !ok {
			continue
		}
		c := pchar{
			r: r, x0: float64(box[0]), x1: float64(box[2]),
			y0: float64(min(box[3], box[1])), y1: float64(max(box[3], box[1])),
			spaceBefore: spaceBefore, idx: len(chars),
		}
		spaceBefore = false
		if c.y1-c.y0 <= 0 || c.x1 < c.x0 {
			continue
		}
		if a, ok := src.angleAt(i); ok {
			c.angle = a
		}
		chars = append(chars, c)
	}
	return chars, nil
}

// upright turns a page whose text runs at a right angle (a landscape table on a page with /Rotate 90, say)
// so that its dominant text direction is horizontal (its ruling lines with it), and drops characters at other angles (margin stamps,
// vertical labels), which would scatter into one-character lines.
func upright(pc *pageChars) {
	var count [4]int
	bucket := func(a float64) int { return int(math.Round(a/(math.Pi/2))) % 4 }
	for _, c := range pc.chars {
		count[bucket(c.angle)]++
	}
	dom := 0
	for b := range 4 {
		if count[b] > count[dom] {
			dom = b
		}
	}
	theta := float64(dom) * math.Pi / 2
	// PDFium's char angle is measured clockwise (atan2 of the matrix's c and a entries, y pointing up), so
	// text at angle θ is brought level by turning the page θ counter-clockwise.
	cos, sin := math.Round(math.Cos(theta)), math.Round(math.Sin(theta))
	rot := func(x, y float64) (float64, float64) { return x*cos - y*sin, x*sin + y*cos }
	// The page's own corners, rotated, give the new page frame.
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, p := range [][2]float64{{0, 0}, {pc.w, 0}, {0, pc.h}, {pc.w, pc.h}} {
		x, y := rot(p[0], p[1])
		minX, minY, maxX, maxY = min(minX, x), min(minY, y), max(maxX, x), max(maxY, y)
	}
	kept := pc.chars[:0]
	for _, c := range pc.chars {
		d := math.Abs(math.Remainder(c.angle-theta, 2*math.Pi))
		if d > 0.1 {
			continue
		}
		if dom != 0 {
			ax, ay := rot(c.x0, c.y0)
			bx, by := rot(c.x1, c.y1)
			c.x0, c.x1 = min(ax, bx)-minX, max(ax, bx)-minX
			c.y0, c.y1 = min(ay, by)-minY, max(ay, by)-minY
		}
		c.idx = len(kept)
		kept = append(kept, c)
	}
	pc.chars = kept
	if dom != 0 {
		for i, r := range pc.rules {
			ax, ay := rot(r.x0, r.y0)
			bx, by := rot(r.x1, r.y1)
			pc.rules[i] = rule{x0: min(ax, bx) - minX, x1: max(ax, bx) - minX, y0: min(ay, by) - minY, y1: max(ay, by) - minY}
		}
	}
	if dom == 1 || dom == 3 {
		pc.w, pc.h = pc.h, pc.w
	}
}

// isOutOfMemory reports a PDFium failure caused by its WebAssembly memory limit (RAGD_PDF_MEMORY_LIMIT):
// PDFium aborts when an allocation fails, which reaches us as an "unreachable" trap of the instance (its
// abort); it is the only abort a parsed PDF has been seen to cause.
func isOutOfMemory(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "wasm error: unreachable") || strings.Contains(msg, "out of memory")
}

func outOfMemory(name string, memLimit int64, err error) error {
	return &rag.Error{Code: rag.CodeTooLarge, Err: err,
		Message: fmt.Sprintf("%s: PDF needs more memory than the limit of %d MiB to read (limit RAGD_PDF_MEMORY_LIMIT)", name, memLimit>>20)}
}
