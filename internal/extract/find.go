package extract

import (
	"context"
	"errors"
	"math"
	"slices"
	"unicode"

	"github.com/klippa-app/go-pdfium"
	"github.com/klippa-app/go-pdfium/references"
	"github.com/klippa-app/go-pdfium/requests"
	"golang.org/x/text/unicode/norm"

	"github.com/ragd/ragd/internal/rag"
)

// MinFoundShare is the share of a text's letters and digits that FindOnPage must find on the page, in
// runs, for the text to count as found there; below it no boxes are returned for that text.
const MinFoundShare = 0.5

// Box is a rectangle of a page as it is rendered, in fractions of the page's width and height from its
// top left corner. Text is the index of the text it shows (FindOnPage's texts).
type Box struct {
	X    float64 `json:"x"`
	Y    float64 `json:"y"`
	W    float64 `json:"w"`
	H    float64 `json:"h"`
	Text int     `json:"text"`
}

// Found is where texts are on a page: the boxes of their lines and, for each text, the share of its
// letters and digits found there (0 to 1).
type Found struct {
	Boxes []Box     `json:"boxes"`
	Share []float64 `json:"share"`
}

// FindOnPage finds each of texts on page (1-based) of the PDF data and returns the boxes of the lines
// where it is, for a highlight over the rendered page (RenderPage). Texts and the page are compared on
// their letters and digits alone, case- and NFKC-folded, so spacing, punctuation and line breaks do not
// matter; a text is found in runs (of at least 4 letters or digits, or all of a shorter text), so one
// that the extractor reordered or that goes on to the next page is still found where it is. Boxes are one
// a run of a line as the page is shown (a character of text that runs sideways on it is a box of its own).
// It runs on RenderPage's workers; ctx bounds its time. Errors as RenderPage's.
func (e *Extractor) FindOnPage(ctx context.Context, data []byte, page int, texts []string) (*Found, error) {
	found := &Found{Boxes: []Box{}, Share: make([]float64, len(texts))}
	err := e.onPage(ctx, data, page, func(inst pdfium.Pdfium, d references.FPDF_DOCUMENT, _ int) error {
		p, err := openPageText(inst, d, page-1)
		if err != nil {
			return err
		}
		defer p.close()
		keys, owner := foldRunes(p.runes)
		for i, t := range texts {
			if err := ctx.Err(); err != nil {
				return err
			}
			matched, share := findRuns(keys, owner, t)
			found.Share[i] = share
			if share < MinFoundShare {
				continue
			}
			for _, r := range lineRects(p.boxes(matched)) {
				found.Boxes = append(found.Boxes, Box{X: r.x0, Y: r.y0, W: r.x1 - r.x0, H: r.y1 - r.y0, Text: i})
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return found, nil
}

// textPage is a loaded page's text: its characters (runes[i] is PDFium's character i), read in one call,
// and their boxes read on demand.
type textPage struct {
	inst   pdfium.Pdfium
	page   references.FPDF_PAGE
	text   references.FPDF_TEXTPAGE
	runes  []rune
	sx, sy int // the virtual device of toDevice
}

func openPageText(inst pdfium.Pdfium, d references.FPDF_DOCUMENT, index int) (*textPage, error) {
	loaded, err := inst.FPDF_LoadPage(&requests.FPDF_LoadPage{Document: d, Index: index})
	if err != nil {
		return nil, rag.WrapError(rag.CodeInvalid, err, "page %d cannot be read", index+1)
	}
	p := &textPage{inst: inst, page: loaded.Page}
	fail := func(err error) (*textPage, error) {
		p.close()
		return nil, rag.WrapError(rag.CodeInvalid, err, "the text of page %d cannot be read", index+1)
	}
	ref := requests.Page{ByReference: &p.page}
	w, err := inst.FPDF_GetPageWidthF(&requests.FPDF_GetPageWidthF{Page: ref})
	if err != nil {
		return fail(err)
	}
	h, err := inst.FPDF_GetPageHeightF(&requests.FPDF_GetPageHeightF{Page: ref})
	if err != nil || w.PageWidth <= 0 || h.PageHeight <= 0 {
		return fail(errors.Join(err, errors.New("page without a size")))
	}
	// The page as shown: PDFium reports a /Rotate 90 page's width as its height.
	p.sx, p.sy = deviceSize, max(1, int(math.Round(deviceSize*float64(h.PageHeight/w.PageWidth))))
	tp, err := inst.FPDFText_LoadPage(&requests.FPDFText_LoadPage{Page: ref})
	if err != nil {
		return fail(err)
	}
	p.text = tp.TextPage
	n, err := inst.FPDFText_CountChars(&requests.FPDFText_CountChars{TextPage: p.text})
	if err != nil {
		return fail(err)
	}
	if n.Count == 0 {
		return p, nil
	}
	all, err := inst.FPDFText_GetText(&requests.FPDFText_GetText{TextPage: p.text, Count: n.Count})
	if err != nil {
		return fail(err)
	}
	p.runes = []rune(all.Text)
	if len(p.runes) != n.Count {
		// A character outside the BMP counts as two: read them one by one to keep the indices.
		p.runes = make([]rune, n.Count)
		for i := range n.Count {
			if u, err := inst.FPDFText_GetUnicode(&requests.FPDFText_GetUnicode{TextPage: p.text, Index: i}); err == nil {
				p.runes[i] = rune(u.Unicode)
			}
		}
	}
	return p, nil
}

func (p *textPage) close() {
	if p.text != "" {
		p.inst.FPDFText_ClosePage(&requests.FPDFText_ClosePage{TextPage: p.text})
	}
	p.inst.FPDF_ClosePage(&requests.FPDF_ClosePage{Page: p.page})
}

// boxes returns the characters at indices (in page order, each once) with their boxes on the page as
// rendered (fractions from its top left: the page's rotation and crop box applied, so that text drawn
// sideways on a turned page is level), leaving out those PDFium has no box for.
func (p *textPage) boxes(indices []int) []pchar {
	idx := slices.Clone(indices)
	slices.Sort(idx)
	idx = slices.Compact(idx)
	var out []pchar
	for _, i := range idx {
		box, err := p.inst.FPDFText_GetLooseCharBox(&requests.FPDFText_GetLooseCharBox{TextPage: p.text, Index: i})
		if err != nil {
			continue
		}
		ax, ay := p.toDevice(float64(box.Rect.Left), float64(box.Rect.Top))
		bx, by := p.toDevice(float64(box.Rect.Right), float64(box.Rect.Bottom))
		c := pchar{r: p.runes[i], x0: min(ax, bx), x1: max(ax, bx), y0: min(ay, by), y1: max(ay, by), idx: i}
		if c.y1 > c.y0 && c.x1 > c.x0 {
			out = append(out, c)
		}
	}
	return out
}

// toDevice maps a point of the page in page space to fractions of the page as rendered, from its top left.
func (p *textPage) toDevice(x, y float64) (float64, float64) {
	ref := requests.Page{ByReference: &p.page}
	d, err := p.inst.FPDF_PageToDevice(&requests.FPDF_PageToDevice{Page: ref, SizeX: p.sx, SizeY: p.sy, PageX: x, PageY: y})
	if err != nil {
		return 0, 0
	}
	return clamp01(float64(d.DeviceX) / float64(p.sx)), clamp01(float64(d.DeviceY) / float64(p.sy))
}

// deviceSize is the width of the virtual device page coordinates are mapped onto: device pixels over it
// are the fractions of Box, to 1/10,000 of the page.
const deviceSize = 10000

func clamp01(f float64) float64 { return max(0, min(1, f)) }

// fold is how FindOnPage compares text: NFKC, lower case, letters and digits only.
func fold(dst []rune, r rune) []rune {
	for _, f := range norm.NFKC.String(string(r)) {
		if unicode.IsLetter(f) || unicode.IsDigit(f) {
			dst = append(dst, unicode.ToLower(f))
		}
	}
	return dst
}

// foldRunes folds a page's characters into keys, owner[k] being the character key k came from.
func foldRunes(runes []rune) (keys []rune, owner []int) {
	for i, r := range runes {
		n := len(keys)
		keys = fold(keys, r)
		for range len(keys) - n {
			owner = append(owner, i)
		}
	}
	return keys, owner
}

// findRuns finds text in keys greedily, run by run: from each position of the text, the longest run of it
// that keys hold (preferring the occurrence nearest after the previous run, so that a text read in order
// is found in order), at least min(4, its length) long; a position no such run starts at is skipped. It
// returns the characters matched (indices into the page's characters) and the share of the text found.
func findRuns(keys []rune, owner []int, text string) ([]int, float64) {
	var q []rune
	for _, r := range text {
		q = fold(q, r)
	}
	if len(q) == 0 || len(keys) == 0 {
		return nil, 0
	}
	at := map[rune][]int{}
	for j, k := range keys {
		at[k] = append(at[k], j)
	}
	minRun := min(4, len(q))
	var matched []int
	found, next := 0, 0
	for i := 0; i < len(q); {
		best, bestJ := 0, -1
		for _, j := range at[q[i]] {
			n := 0
			for i+n < len(q) && j+n < len(keys) && keys[j+n] == q[i+n] {
				n++
			}
			// Longer wins; of equal runs, the first at or after the previous run's end.
			if n > best || n == best && bestJ < next && j >= next {
				best, bestJ = n, j
			}
		}
		if best < minRun {
			i++
			continue
		}
		for k := bestJ; k < bestJ+best; k++ {
			if len(matched) == 0 || matched[len(matched)-1] != owner[k] {
				matched = append(matched, owner[k])
			}
		}
		found += best
		i += best
		next = bestJ + best
	}
	return matched, float64(found) / float64(len(q))
}

// rect is a rectangle.
type rect struct{ x0, y0, x1, y1 float64 }

// lineRects merges characters (boxes with y down), in the page's order, into one rectangle per run of a
// line.
func lineRects(chars []pchar) []rect {
	var out []rect
	var last pchar
	for n, c := range chars {
		if n > 0 {
			r := &out[len(out)-1]
			// The next character of the same line, not one far along it (another column): a line across,
			// or one down the page (text drawn sideways on it).
			w, lw := c.x1-c.x0, last.x1-last.x0
			across := math.Abs(c.cy()-last.cy()) < 0.5*min(c.h(), last.h()) &&
				c.x0 >= last.x0-0.5*last.h() && c.x0-last.x1 < 3*max(c.h(), last.h())
			down := math.Abs((c.x0+c.x1)/2-(last.x0+last.x1)/2) < 0.5*min(w, lw) &&
				c.y0 >= last.y0-0.5*lw && c.y0-last.y1 < 3*max(w, lw)
			if across || down {
				r.x0, r.y0, r.x1, r.y1 = min(r.x0, c.x0), min(r.y0, c.y0), max(r.x1, c.x1), max(r.y1, c.y1)
				last = c
				continue
			}
		}
		out = append(out, rect{c.x0, c.y0, c.x1, c.y1})
		last = c
	}
	return out
}
