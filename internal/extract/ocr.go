package extract

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"log/slog"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/klippa-app/go-pdfium"
	"github.com/klippa-app/go-pdfium/enums"
	"github.com/klippa-app/go-pdfium/references"
	"github.com/klippa-app/go-pdfium/requests"

	"github.com/ragd/ragd/internal/rag"
)

// OCR modes (RAGD_OCR).
const (
	// OCRAuto reads a PDF page by OCR when it has no text layer, or only a few characters over a large image
	// (a scan with a stamp or page number in text); when Tesseract is not installed it says so once and
	// leaves such pages out.
	OCRAuto = "auto"
	// OCROff never runs OCR: a PDF with no text layer at all fails as before.
	OCROff = "off"
	// OCRForce reads every page of every PDF by OCR, ignoring its text layer (a text layer known to be
	// garbage: broken font encodings).
	OCRForce = "force"
)

// OCR defaults.
const (
	DefaultOCRLangs       = "kor+eng"
	DefaultOCRPageTimeout = 3 * time.Minute
	DefaultOCRPageMemory  = 1 << 30
	// ocrDPI is the resolution pages are rendered at for Tesseract (its documented sweet spot); a page whose
	// image would exceed ocrMaxPixels is rendered at less.
	ocrDPI       = 300
	ocrMaxPixels = 36_000_000
	// ocrMinChars: a page with fewer characters than this in its text layer is a scan candidate (when an
	// image covers at least ocrImageCover of it, or when it has no text at all but draws something).
	ocrMinChars   = 16
	ocrImageCover = 0.3
)

// Tesseract's page segmentation modes. Sparse text (11) finds every line wherever it is and lets ragd's
// layout order them, which reads multi-column pages best (1 % CER on a three-column Federal Register page,
// against 77 % with mode 4, whose lines run across the columns). On justified Korean text it splits words
// and reads worse (17 % against 5 % on a page of a bill), so a page that is mostly Hangul, or that it reads
// with less than ocrRetryConf confidence, is read again as one column of text (4) — kept for a Hangul page
// unless clearly less confident, for another page when more confident. (Mode 3, automatic layout, dropped
// most lines of a justified Korean page.)
const (
	ocrSparse    = "11"
	ocrColumn    = "4"
	ocrRetryConf = 0.9
)

// OCROptions configure the OCR of PDF pages. The zero value is auto with the defaults.
type OCROptions struct {
	// Mode is OCRAuto (""), OCROff or OCRForce. RAGD_OCR.
	Mode string
	// Langs are Tesseract's languages joined by '+'; default "kor+eng". RAGD_OCR_LANGS.
	Langs string
	// Tesseract is the program run; default "tesseract" on the PATH.
	Tesseract string
	// PageTimeout bounds rendering and reading one page (default 1 minute; RAGD_OCR_PAGE_TIMEOUT);
	// PageMemory the address space of the Tesseract process reading it (default 1 GiB;
	// RAGD_OCR_PAGE_MEMORY). A page over either fails alone. The time spent on OCR does not count against
	// RAGD_EXTRACT_TIMEOUT: a scanned document takes PageTimeout per page at most.
	PageTimeout time.Duration
	PageMemory  int64
	// Logger gets the one notice that Tesseract is missing (auto mode); default slog.Default().
	Logger *slog.Logger
}

func (o OCROptions) withDefaults() OCROptions {
	if o.Mode == "" {
		o.Mode = OCRAuto
	}
	if o.Langs == "" {
		o.Langs = DefaultOCRLangs
	}
	if o.Tesseract == "" {
		o.Tesseract = "tesseract"
	}
	if o.PageTimeout <= 0 {
		o.PageTimeout = DefaultOCRPageTimeout
	}
	if o.PageMemory <= 0 {
		o.PageMemory = DefaultOCRPageMemory
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// ocrEngine runs Tesseract as a process: one per page, so that a page that crashes it, runs too long or
// needs too much memory fails alone and takes nothing else down (a cgo binding would also need cgo, which
// the release build does without).
type ocrEngine struct {
	opts OCROptions
	path string // "" when Tesseract is not installed
	once sync.Once
}

func newOCREngine(o OCROptions) (*ocrEngine, error) {
	o = o.withDefaults()
	switch o.Mode {
	case OCRAuto, OCROff, OCRForce:
	default:
		return nil, fmt.Errorf("OCR mode must be auto, off or force (got %q)", o.Mode)
	}
	for _, l := range strings.Split(o.Langs, "+") {
		if l == "" || strings.IndexFunc(l, func(r rune) bool { return !(r == '_' || r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r))) }) >= 0 {
			return nil, fmt.Errorf("OCR languages must be Tesseract language names joined by '+' (got %q)", o.Langs)
		}
	}
	e := &ocrEngine{opts: o}
	if o.Mode == OCROff {
		return e, nil
	}
	if p, err := exec.LookPath(o.Tesseract); err == nil {
		e.path = p
	} else if o.Mode == OCRForce {
		return nil, fmt.Errorf("OCR is forced (RAGD_OCR=force) but Tesseract is not installed (%s not found; Debian: apt-get install tesseract-ocr tesseract-ocr-kor tesseract-ocr-eng)", o.Tesseract)
	}
	return e, nil
}

// on reports whether pages are read by OCR at all; in auto mode without Tesseract it logs that once.
func (e *ocrEngine) on() bool {
	if e == nil || e.opts.Mode == OCROff {
		return false
	}
	if e.path == "" {
		e.once.Do(func() {
			e.opts.Logger.Warn("Tesseract is not installed: pages without a text layer are left out (RAGD_OCR=auto; Debian: apt-get install tesseract-ocr tesseract-ocr-kor tesseract-ocr-eng)")
		})
		return false
	}
	return true
}

// needsOCR reports whether page (already read into pc) is to be read by OCR.
func (e *ocrEngine) needsOCR(inst pdfium.Pdfium, page references.FPDF_PAGE, pc pageChars) bool {
	if e == nil || e.opts.Mode == OCROff {
		return false
	}
	if e.opts.Mode == OCRForce {
		return true
	}
	if len(pc.chars) >= ocrMinChars {
		return false
	}
	objects, cover := imageCover(inst, page, pc.w*pc.h)
	return cover >= ocrImageCover || len(pc.chars) == 0 && objects > 0
}

// imageCover counts the page's objects and returns the share of its area that image objects cover (at
// most 1; overlapping images count twice). It looks at the first 10,000 objects only.
func imageCover(inst pdfium.Pdfium, page references.FPDF_PAGE, area float64) (int, float64) {
	if area <= 0 {
		return 0, 0
	}
	covered := 0.0
	n := eachObject(context.Background(), inst, page, enums.FPDF_PAGEOBJ_IMAGE, 10_000, func(_ references.FPDF_PAGEOBJECT, b rule) bool {
		covered += (b.x1 - b.x0) * (b.y1 - b.y0)
		return true
	})
	return n, min(covered/area, 1)
}

// ocrPage is what OCR read of one page.
type ocrPage struct {
	chars pageChars
	// conf is Tesseract's word confidence averaged over the characters, 0 to 1.
	conf float64
}

// read renders page index (0-based) of d and reads it with Tesseract within the page's time and memory
// limits. ctx is the page's.
func (e *ocrEngine) read(ctx context.Context, inst pdfium.Pdfium, d references.FPDF_DOCUMENT, index int, memLimit int64) (ocrPage, error) {
	img, dpi, err := renderGray(inst, d, index, ocrDPI, memLimit)
	if err != nil {
		return ocrPage{}, err
	}
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img); err != nil {
		return ocrPage{}, fmt.Errorf("encode page image: %w", err)
	}
	run := func(psm string) (ocrPage, error) {
		tsv, err := e.tesseract(ctx, buf.Bytes(), dpi, psm)
		if err != nil {
			return ocrPage{}, err
		}
		return parseTSV(tsv, float64(img.Rect.Dx()), float64(img.Rect.Dy()), dpi, psm == ocrSparse)
	}
	sparse, err := run(ocrSparse)
	if err != nil {
		return ocrPage{}, err
	}
	hangul := hangulShare(sparse.chars.chars) >= 0.3
	if !hangul && sparse.conf >= ocrRetryConf {
		return sparse, nil
	}
	column, err := run(ocrColumn)
	if err != nil {
		return ocrPage{}, err
	}
	if hangul && column.conf >= sparse.conf-0.05 || column.conf > sparse.conf {
		return column, nil
	}
	return sparse, nil
}

// hangulShare is the share of Hangul among the characters.
func hangulShare(cs []pchar) float64 {
	n := 0
	for _, c := range cs {
		if unicode.Is(unicode.Hangul, c.r) {
			n++
		}
	}
	return float64(n) / float64(max(len(cs), 1))
}

// renderGray renders a page in grayscale at dpi, or less for a page whose image would be larger than
// ocrMaxPixels, and copies it out of the instance. It returns the resolution used.
func renderGray(inst pdfium.Pdfium, d references.FPDF_DOCUMENT, index, dpi int, memLimit int64) (*image.Gray, int, error) {
	page := requests.Page{ByIndex: &requests.PageByIndex{Document: d, Index: index}}
	if s, err := inst.GetPageSize(&requests.GetPageSize{Page: page}); err == nil && s.Width > 0 && s.Height > 0 {
		px := s.Width / 72 * s.Height / 72 * float64(dpi*dpi)
		if px > ocrMaxPixels {
			dpi = max(int(float64(dpi)*math.Sqrt(ocrMaxPixels/px)), 1)
		}
	}
	res, err := inst.RenderPageInDPI(&requests.RenderPageInDPI{
		Page: page, DPI: dpi, ImageFormat: requests.RenderImageFormatGrayscale,
		RenderFlags: enums.FPDF_RENDER_FLAG_ANNOT,
	})
	if err != nil {
		if isOutOfMemory(err) {
			return nil, 0, outOfMemory("PDF", memLimit, err)
		}
		return nil, 0, fmt.Errorf("render: %w", err)
	}
	defer res.Cleanup()
	src, ok := res.Result.RenderedImage.(*image.Gray)
	if !ok {
		return nil, 0, fmt.Errorf("render: unexpected image type %T", res.Result.RenderedImage)
	}
	w, h := src.Rect.Dx(), src.Rect.Dy()
	img := image.NewGray(image.Rect(0, 0, w, h))
	for y := range h {
		copy(img.Pix[y*img.Stride:y*img.Stride+w], src.Pix[y*src.Stride:y*src.Stride+w])
	}
	return img, dpi, nil
}

// tesseract runs Tesseract on one PNG image and returns its TSV output. The process gets the page's
// context (killed when it ends), one thread (the machine's cores are the ingestion workers') and at most
// PageMemory bytes of address space (ulimit -v through /bin/sh).
func (e *ocrEngine) tesseract(ctx context.Context, img []byte, dpi int, psm string) ([]byte, error) {
	args := []string{strconv.FormatInt(e.opts.PageMemory>>10, 10), e.path, "stdin", "stdout",
		"-l", e.opts.Langs, "--psm", psm, "--dpi", strconv.Itoa(dpi), "tsv"}
	cmd := exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", `ulimit -v "$0" || exit 125; exec "$@"`}, args...)...)
	cmd.Env = []string{"OMP_THREAD_LIMIT=1", "PATH=/usr/bin:/bin"}
	cmd.Stdin = bytes.NewReader(img)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		msg := strings.TrimSpace(errOut.String())
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:]
		}
		return nil, fmt.Errorf("tesseract: %w: %s", err, msg)
	}
	return out.Bytes(), nil
}

// parseTSV turns Tesseract's TSV (a row per block, paragraph, line and word, pixel boxes from the top
// left) into the page's characters in PDF points, y up: each word's box is shared evenly between its
// characters, which take the height of their line, so that the layout reads the page as it reads a text
// layer. w and h are the image's size in pixels. With apart, words are not neighbours in the characters'
// order (sparse text: a line Tesseract runs across a column gutter is then split there by the layout);
// otherwise the words of a line are.
func parseTSV(tsv []byte, w, h float64, dpi int, apart bool) (ocrPage, error) {
	scale := 72 / float64(dpi)
	p := ocrPage{chars: pageChars{w: w * scale, h: h * scale}}
	var confSum, lineTop, lineBottom float64
	idx := 0
	sc := bufio.NewScanner(bytes.NewReader(tsv))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	header := true
	for sc.Scan() {
		if header {
			header = false
			continue
		}
		f := strings.Split(sc.Text(), "\t")
		if len(f) < 12 {
			continue
		}
		num := func(i int) float64 { v, _ := strconv.ParseFloat(f[i], 64); return v }
		left, top, width, height := num(6), num(7), num(8), num(9)
		switch f[0] { // 1-3 are the page, blocks and paragraphs
		case "4": // a line
			lineTop, lineBottom = top, top+height
			idx++
		case "5": // a word
			text := strings.TrimSpace(f[11])
			conf := num(10)
			if text == "" || conf < 0 {
				continue
			}
			rs := []rune(text)
			if apart {
				idx++
			}
			y0, y1 := min(lineTop, top), max(lineBottom, top+height)
			cw := width / float64(len(rs))
			for i, r := range rs {
				x0 := left + float64(i)*cw
				p.chars.chars = append(p.chars.chars, pchar{
					r: r, x0: x0 * scale, x1: (x0 + cw) * scale,
					y0: h*scale - y1*scale, y1: h*scale - y0*scale,
					spaceBefore: i == 0, idx: idx,
				})
				idx++
			}
			confSum += conf * float64(len(rs))
		}
	}
	if err := sc.Err(); err != nil {
		return p, fmt.Errorf("tesseract output: %w", err)
	}
	if n := len(p.chars.chars); n > 0 {
		p.conf = math.Round(confSum/float64(n)) / 100
	}
	return p, nil
}

// ocrRenderGrace is the time a page's rendering gets besides the page limit before the pass gives up.
const ocrRenderGrace = 30 * time.Second

// ocrDoc reads doc's pages listed in doc.ocr by OCR, on an instance of rt, each within the page time limit;
// the time spent is not counted against the extraction's own limit (b's context is renewed afterwards with
// the time it had left). A page that fails is recorded in doc.failed; its text layer, if any, stays.
func (rt *pdfRuntime) ocrDoc(name string, data []byte, doc *pdfDoc, b *budget) error {
	deadline, hasDeadline := b.ctx.Deadline()
	left := time.Until(deadline)
	// The whole pass is bounded by the page limit times the pages, and half a minute a page for rendering,
	// which cannot be stopped in the middle of a PDFium call: a render stuck past this kills the instance.
	ctx, cancel := context.WithTimeout(b.caller, time.Duration(len(doc.ocr))*(rt.ocr.opts.PageTimeout+ocrRenderGrace))
	defer cancel()
	err := rt.run(ctx, b.caller, len(data), func(inst pdfium.Pdfium) error {
		d, _, err := openPDF(inst, name, data, b.pdfMemory)
		if err != nil {
			return err
		}
		defer inst.FPDF_CloseDocument(&requests.FPDF_CloseDocument{Document: d})
		for _, i := range doc.ocr {
			if err := b.caller.Err(); err != nil {
				return err
			}
			pctx, pcancel := context.WithTimeout(ctx, rt.ocr.opts.PageTimeout)
			start := time.Now()
			p, err := rt.ocr.read(pctx, inst, d, i, b.pdfMemory)
			pcancel()
			switch {
			case err != nil && b.caller.Err() != nil:
				return b.caller.Err()
			case errors.Is(err, context.DeadlineExceeded):
				err = fmt.Errorf("OCR took longer than %s (limit RAGD_OCR_PAGE_TIMEOUT)", rt.ocr.opts.PageTimeout)
			case err == nil:
				// (No upright: OCR reads the page as rendered, level, and upright would renumber the
				// characters' idx, which keeps words apart.)
				if rerr := b.rawChars(len(p.chars.chars)); rerr != nil {
					return rerr
				}
				doc.pages[i] = p.chars
				doc.conf[i] = p.conf
				doc.ocrTime += time.Since(start)
				continue
			}
			doc.failed = append(doc.failed, rag.PageFailure{Page: i + 1, Error: "OCR failed: " + err.Error()})
		}
		return nil
	})
	if hasDeadline {
		// The extraction's own limit goes on with the time it had left before OCR.
		nctx, ncancel := context.WithTimeoutCause(b.caller, max(left, 0), errTimeout)
		b.ctx = nctx
		b.cancels = append(b.cancels, ncancel)
	}
	if err != nil {
		if berr := b.overBudget(err); berr != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			return berr
		}
		if cerr := b.caller.Err(); cerr != nil {
			return cerr
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return rag.Errorf(rag.CodeTooComplex, "%s: OCR took longer than %s per page (limit RAGD_OCR_PAGE_TIMEOUT)", name, rt.ocr.opts.PageTimeout)
		}
		return err
	}
	return nil
}
