package extract

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/hostile"
	"github.com/ragd/ragd/internal/rag"
)

func decodePNG(t *testing.T, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	return img
}

// inkShare is the share of an image's pixels that are not near white.
func inkShare(img image.Image) float64 {
	b := img.Bounds()
	ink := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r+g+bl < 3*0xC000 {
				ink++
			}
		}
	}
	return float64(ink) / float64(b.Dx()*b.Dy())
}

func TestRenderPage(t *testing.T) {
	pdf := readFixture(t, "pdf/bill_2125318_original.pdf")

	t.Run("OK", func(t *testing.T) {
		p, err := shared.RenderPage(t.Context(), pdf, 1, 800)
		if err != nil {
			t.Fatal(err)
		}
		img := decodePNG(t, p.PNG)
		// The bill is A4 portrait (595 × 842 points): 800 px wide, about 1132 high.
		if img.Bounds().Dx() != 800 || p.Width != 800 || p.Height != img.Bounds().Dy() || p.Height < 1100 || p.Height > 1160 {
			t.Errorf("image %v, reported %d × %d; want 800 × ~1132", img.Bounds(), p.Width, p.Height)
		}
		if p.Pages != 10 {
			t.Errorf("pages %d, want 10", p.Pages)
		}
		// A page of text: some ink, mostly paper, and the paper is white (not transparent black).
		if s := inkShare(img); s < 0.005 || s > 0.5 {
			t.Errorf("ink covers %.3f of the page; want a page of text on white", s)
		}
		if _, _, _, a := img.At(5, 5).RGBA(); a != 0xFFFF {
			t.Errorf("corner alpha %d: the page is not opaque", a)
		}
	})

	t.Run("LastPageAndPastIt", func(t *testing.T) {
		if _, err := shared.RenderPage(t.Context(), pdf, 10, 200); err != nil {
			t.Fatalf("page 10 of 10: %v", err)
		}
		_, err := shared.RenderPage(t.Context(), pdf, 11, 200)
		if rag.ErrorCode(err) != rag.CodeNotFound {
			t.Fatalf("page 11 of 10: %v, want not_found", err)
		}
	})

	t.Run("BadArguments", func(t *testing.T) {
		for _, c := range []struct{ page, width int }{{0, 200}, {-1, 200}, {1, 0}} {
			if _, err := shared.RenderPage(t.Context(), pdf, c.page, c.width); rag.ErrorCode(err) != rag.CodeInvalid {
				t.Errorf("page %d width %d: %v, want invalid_request", c.page, c.width, err)
			}
		}
	})

	t.Run("NotAPDF", func(t *testing.T) {
		for name, data := range map[string][]byte{"text": []byte("# just markdown\n"), "truncated": pdf[:len(pdf)/3]} {
			if _, err := shared.RenderPage(t.Context(), data, 1, 200); rag.ErrorCode(err) != rag.CodeInvalid {
				t.Errorf("%s: %v, want invalid_request", name, err)
			}
		}
	})

	t.Run("TallPageFitsTheBox", func(t *testing.T) {
		// The same number of bytes, so the cross-reference table stays right: a 90 × 7920 point page.
		tall := bytes.ReplaceAll(hostile.PDF(hostile.PDFText("tall")), []byte("/MediaBox [0 0 612 792]"), []byte("/MediaBox [0 0 90 7920]"))
		p, err := shared.RenderPage(t.Context(), tall, 1, 400)
		if err != nil {
			t.Fatal(err)
		}
		img := decodePNG(t, p.PNG)
		if img.Bounds().Dy() > MaxRenderAspect*400 || img.Bounds().Dx() > 400 || img.Bounds().Dy() < MaxRenderAspect*400-1 {
			t.Errorf("tall page rendered %v; want height %d and width in proportion", img.Bounds(), MaxRenderAspect*400)
		}
	})

	t.Run("Deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
		defer cancel()
		<-ctx.Done()
		if _, err := shared.RenderPage(ctx, pdf, 1, 800); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("past its deadline: %v, want context.DeadlineExceeded", err)
		}
		// The workers are still usable afterwards.
		if _, err := shared.RenderPage(t.Context(), pdf, 2, 300); err != nil {
			t.Fatalf("after a deadline: %v", err)
		}
	})
}

// BenchmarkRenderPage is the cost of a page image without a cache: open the PDF, render, encode.
func BenchmarkRenderPage(b *testing.B) {
	pdf := readFixture(b, "pdf/bill_2125318_original.pdf")
	if _, err := shared.RenderPage(b.Context(), pdf, 1, 1000); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := shared.RenderPage(b.Context(), pdf, 1, 1000); err != nil {
			b.Fatal(err)
		}
	}
}
