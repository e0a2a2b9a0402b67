package extract

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/hostile"
	"github.com/ragd/ragd/internal/rag"
)

func TestFindOnPage(t *testing.T) {
	pdf := readFixture(t, "pdf/bill_2125318_original.pdf")

	t.Run("Sentence", func(t *testing.T) {
		// Page 5 holds the bill's 부칙; the sentence is asked for with other spacing and punctuation.
		f, err := shared.FindOnPage(t.Context(), pdf, 5, []string{"제1조(시행일) 이 법은 공포 후 6개월이 경과한 날부터 시행한다.", "전혀 없는 문장입니다 zzzz qqqq"})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("found %v, boxes %+v", f.Share, f.Boxes)
		if f.Share[0] < 0.95 || f.Share[1] > 0.3 {
			t.Fatalf("shares %v: want the sentence found whole and the other not", f.Share)
		}
		if len(f.Boxes) == 0 || len(f.Boxes) > 3 {
			t.Fatalf("%d boxes for a sentence of one or two lines", len(f.Boxes))
		}
		for _, b := range f.Boxes {
			if b.Text != 0 || b.X < 0 || b.Y < 0 || b.X+b.W > 1 || b.Y+b.H > 1 || b.W < 0.05 || b.H <= 0 || b.H > 0.05 {
				t.Errorf("box %+v is not a line of text on the page", b)
			}
		}
		// Found in the text on page 5, not on page 1.
		other, err := shared.FindOnPage(t.Context(), pdf, 1, []string{"제1조(시행일) 이 법은 공포 후 6개월이 경과한 날부터 시행한다."})
		if err != nil {
			t.Fatal(err)
		}
		if other.Share[0] >= MinFoundShare || len(other.Boxes) != 0 {
			t.Errorf("page 1: share %v, %d boxes; the sentence is not there", other.Share, len(other.Boxes))
		}
	})

	t.Run("WhereTheTextIs", func(t *testing.T) {
		// "Hello ragd" at (72, 720) on a 612 × 792 page, 12 points high: near the top left.
		plain := hostile.PDF(hostile.PDFText("Hello ragd"))
		f, err := shared.FindOnPage(t.Context(), plain, 1, []string{"hello RAGD"})
		if err != nil || len(f.Boxes) != 1 {
			t.Fatalf("%+v, %v", f, err)
		}
		b := f.Boxes[0]
		if math.Abs(b.X-72.0/612) > 0.01 || math.Abs(b.Y+b.H-(792-720.0)/792) > 0.01 {
			t.Errorf("box %+v; want its left at %.3f and its baseline near %.3f", b, 72.0/612, (792-720.0)/792)
		}
		// The same page shown turned a quarter clockwise (/Rotate 90): the text runs down the right side.
		old := "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >>"
		turned := "<</Type/Page/Parent 2 0 R/Rotate 90/MediaBox[0 0 612 792]/Resources<</Font<</F1 3 0 R>>>>"
		if len(turned) > len(old) {
			t.Fatalf("the replacement must not be longer")
		}
		rotated := bytes.Replace(plain, []byte(old), []byte(turned+strings.Repeat(" ", len(old)-len(turned))), 1)
		f, err = shared.FindOnPage(t.Context(), rotated, 1, []string{"hello ragd"})
		if err != nil || len(f.Boxes) != 1 {
			t.Fatalf("rotated: %+v, %v", f, err)
		}
		b = f.Boxes[0]
		if math.Abs(b.X-(720.0/792)) > 0.02 || math.Abs(b.Y-72.0/612) > 0.01 || b.H < b.W {
			t.Errorf("rotated box %+v; want a tall box at x≈%.3f from y≈%.3f", b, 720.0/792, 72.0/612)
		}
	})

	t.Run("SidewaysTextOnATurnedPage", func(t *testing.T) {
		// The Senate table is drawn at 90° on a /Rotate 90 page: on the page as shown it reads across, and
		// so do its boxes.
		senate := readFixture(t, "pdf/senate-expenditures.pdf")
		x := extractFixture(t, "pdf/senate-expenditures.pdf")
		text := []rune(x.Blocks[0].Text)
		f, err := shared.FindOnPage(t.Context(), senate, 1, []string{string(text[:min(len(text), 80)])})
		if err != nil {
			t.Fatal(err)
		}
		if f.Share[0] < 0.9 || len(f.Boxes) == 0 {
			t.Fatalf("share %v, %d boxes for %q", f.Share, len(f.Boxes), string(text[:min(len(text), 80)]))
		}
		for _, b := range f.Boxes {
			if b.W < b.H {
				t.Errorf("box %+v is taller than wide: the line does not read across the page as shown", b)
			}
		}
	})

	t.Run("PastTheLastPage", func(t *testing.T) {
		if _, err := shared.FindOnPage(t.Context(), pdf, 11, []string{"x"}); rag.ErrorCode(err) != rag.CodeNotFound {
			t.Fatalf("%v, want not_found", err)
		}
	})
}

func TestFindRuns(t *testing.T) {
	keys, owner := foldRunes([]rune("aaa bbbb cccc. Apple pie, 탄소중립·녹색성장 ㈜회사"))
	for _, c := range []struct {
		text  string
		share float64
	}{
		{"APPLE-PIE", 1},
		{"탄소 중립 ‧ 녹색 성장", 1},         // another middle dot, other spaces
		{"(주)회사", 1},                 // NFKC: ㈜ is (주)
		{"bbbb xyzw cccc", 8.0 / 12}, // xyzw is not there
		{"az", 0},                    // a two-letter text must be found whole
		{"", 0},
	} {
		m, share := findRuns(keys, owner, c.text)
		if math.Abs(share-c.share) > 1e-9 {
			t.Errorf("%q: share %.3f (chars %v), want %.3f", c.text, share, m, c.share)
		}
	}
	// Runs are found in reading order: the second "cccc" run continues after "bbbb".
	k2, o2 := foldRunes([]rune("cccc bbbb cccc"))
	m, _ := findRuns(k2, o2, "bbbbcccc")
	if len(m) != 8 || m[0] != 5 || m[4] != 10 {
		t.Errorf("matched %v, want bbbb then the cccc after it (5–8, 10–13)", m)
	}
}
