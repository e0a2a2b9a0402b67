package extract

import (
	"context"
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
// that the extractor reordered or that goes on to the next page is still found where it is. A page whose
// text runs sideways (turned upright by extraction) has no boxes. It runs on RenderPage's workers; ctx
// bounds its time. Errors as RenderPage's.
func (e *Extractor) FindOnPage(ctx context.Context, data []byte, page int, texts []string) (*Found, error) {
	found := &Found{Boxes: []Box{}, Share: make([]float64, len(texts))}
	err := e.onPage(ctx, data, page, func(inst pdfium.Pdfium, d references.FPDF_DOCUMENT, _ int) error {
		pc, err := readPage(ctx, inst, d, page-1)
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			return rag.WrapError(rag.CodeInvalid, err, "page %d cannot be read", page)
		}
		if pc.turned || pc.w <= 0 || pc.h <= 0 {
			return nil
		}
		toDevice, closePage, err := pageToDevice(inst, d, page-1, pc.w, pc.h)
		if err != nil {
			return err
		}
		defer closePage()
		keys, owner := foldChars(pc.chars)
		for i, t := range texts {
			matched, share := findRuns(keys, owner, t)
			found.Share[i] = share
			if share < MinFoundShare {
				continue
			}
			for _, r := range lineRects(pc.chars, matched) {
				// The rectangle's corners in page space (y up) to the rendered page's (y down, the page's
				// rotation and crop box applied).
				ax, ay := toDevice(r.x0, r.y1)
				bx, by := toDevice(r.x1, r.y0)
				found.Boxes = append(found.Boxes, Box{X: min(ax, bx), Y: min(ay, by), W: math.Abs(bx - ax), H: math.Abs(by - ay), Text: i})
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return found, nil
}

// deviceSize is the width of the virtual device page coordinates are mapped onto: device pixels over it
// are the fractions of Box, to 1/10,000 of the page.
const deviceSize = 10000

// pageToDevice returns a function mapping a point of page index in page space to fractions of the page
// as rendered, and the function that closes the page.
func pageToDevice(inst pdfium.Pdfium, d references.FPDF_DOCUMENT, index int, w, h float64) (func(x, y float64) (float64, float64), func(), error) {
	loaded, err := inst.FPDF_LoadPage(&requests.FPDF_LoadPage{Document: d, Index: index})
	if err != nil {
		return nil, nil, rag.WrapError(rag.CodeInvalid, err, "page %d cannot be read", index+1)
	}
	ref := requests.Page{ByReference: &loaded.Page}
	// w and h are the page as shown (PDFium reports a /Rotate 90 page's width as its height).
	sx, sy := deviceSize, max(1, int(math.Round(deviceSize*h/w)))
	to := func(x, y float64) (float64, float64) {
		p, err := inst.FPDF_PageToDevice(&requests.FPDF_PageToDevice{Page: ref, SizeX: sx, SizeY: sy, PageX: x, PageY: y})
		if err != nil {
			return 0, 0
		}
		return clamp01(float64(p.DeviceX) / float64(sx)), clamp01(float64(p.DeviceY) / float64(sy))
	}
	return to, func() { inst.FPDF_ClosePage(&requests.FPDF_ClosePage{Page: loaded.Page}) }, nil
}

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

// foldChars folds a page's characters into keys, owner[k] being the character key k came from.
func foldChars(chars []pchar) (keys []rune, owner []int) {
	for i, c := range chars {
		n := len(keys)
		keys = fold(keys, c.r)
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

// rect is a rectangle in page space (y up).
type rect struct{ x0, y0, x1, y1 float64 }

// lineRects merges the matched characters, in the page's order, into one rectangle per run of a line.
func lineRects(chars []pchar, matched []int) []rect {
	idx := slices.Clone(matched)
	slices.Sort(idx)
	idx = slices.Compact(idx)
	var out []rect
	var last pchar
	for n, i := range idx {
		c := chars[i]
		if n > 0 {
			r := &out[len(out)-1]
			sameLine := math.Abs(c.cy()-last.cy()) < 0.5*min(c.h(), last.h())
			// The next character of the same line, not one far to the right (another column).
			near := c.x0 >= last.x0-0.5*last.h() && c.x0-last.x1 < 3*max(c.h(), last.h())
			if sameLine && near {
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
