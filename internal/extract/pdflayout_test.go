package extract

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/hostile"
	"github.com/ragd/ragd/internal/rag"
)

// linesPDF draws lines of text with the text matrix m (a b c d), each line below the previous one in the
// text's own direction. (A page's /Rotate only turns its display; PDFium reports the characters' angle
// from the text matrix, which is what is tested here.)
func linesPDF(m string, x, y int, lines ...string) []byte {
	var c strings.Builder
	fmt.Fprintf(&c, "BT /F1 12 Tf 14 TL %s %d %d Tm\n", m, x, y)
	for _, l := range lines {
		fmt.Fprintf(&c, "(%s) Tj T*\n", l)
	}
	c.WriteString("ET")
	return hostile.PDF(strings.NewReader(c.String()))
}

// Text drawn at a right angle (a landscape table on a portrait page turned by /Rotate, in either
// direction) reads left to right and top to bottom, not mirrored.
func TestPDF_RotatedTextReadsForward(t *testing.T) {
	lines := []string{"SPRINGFIELD AND RETURN", "AIRFARE FOR STAFF TRAVEL", "KANSAS CITY TO WASHINGTON"}
	for _, tc := range []struct {
		name string
		m    string
		x, y int
	}{
		{"Upright", "1 0 0 1", 72, 700},
		{"Counterclockwise", "0 1 -1 0", 500, 72},
		{"Clockwise", "0 -1 1 0", 100, 720},
		{"UpsideDown", "-1 0 0 -1", 540, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, err := shared.Extract(context.Background(), "r.pdf", linesPDF(tc.m, tc.x, tc.y, lines...))
			if err != nil {
				t.Fatal(err)
			}
			got := pageText(x, 1)
			want := strings.Join(lines, " ")
			if !strings.Contains(strings.Join(strings.Fields(got), " "), want) {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

// The fixture drawn at 90° (a Senate expense table on a /Rotate 90 page) reads forward.
func TestPDF_RotatedFixture(t *testing.T) {
	got := strings.Join(strings.Fields(pageText(extractFixture(t, "pdf/senate-expenditures.pdf"), 1)), " ")
	for _, want := range []string{"STAFF TRANSPORTATION", "CITIBANK - SENATOR IBA CARD", "WASHINGTON DC TO SPRINGFIELD AND RETURN"} {
		if !strings.Contains(got, want) {
			t.Errorf("page 1 lacks %q", want)
		}
	}
	if strings.Contains(got, "NOITATROPSNART") || strings.Contains(got, "NOITATROPSNAR T") {
		t.Errorf("page 1 still mirrored")
	}
}

// A line break after a number and its counter ("10일") is a space unless a particle follows; a break inside
// a word the document writes whole elsewhere is not.
func TestPDF_HangulLineJoin(t *testing.T) {
	st := newSpacing(nil)
	for _, l := range []string{
		"2023년 11월 9일 이수진 의원이 대표 발의한 법률안은", "우리는 탄소중립 사회로의 이행을 위하여 일부개정법률안을 마련했다",
		"위원회에 회부되었음", "12월 1일에 상정되었다", "다음 날에 다시 논의했고 우리 위원회는", "그 일부는 탄소중립기본계획에 반영되었다",
	} {
		st.add(l)
	}
	for _, tc := range []struct{ text, next, want string }{
		{"2023년 11월 10일", "우리 위원회에 회부되었음.", "2023년 11월 10일 우리 위원회에 회부되었음."},
		{"2023년 11월 10일", "에 회부되었음.", "2023년 11월 10일에 회부되었음."},
		{"국가 탄소중", "립기본계획", "국가 탄소중립기본계획"},
	} {
		if got := joinText(tc.text, tc.next, st); got != tc.want {
			t.Errorf("joinText(%q, %q) = %q, want %q", tc.text, tc.next, got, tc.want)
		}
	}
}

// The review report's body is not a section of its table of contents (목 차) or of its cover page.
func TestPDF_TableOfContentsIsNoSection(t *testing.T) {
	x := extractFixture(t, "pdf/bill_2125318_review_report.pdf")
	var heads []string
	for _, b := range x.Blocks {
		if b.Kind == rag.BlockHeading {
			heads = append(heads, b.Text)
		}
	}
	if len(heads) == 0 || heads[0] != "I. 제안경위" {
		t.Errorf("headings %q, want the body's first (I. 제안경위) first", heads)
	}
	for _, b := range x.Blocks {
		if strings.HasPrefix(b.Text, "목 차") && b.Kind != rag.BlockParagraph {
			t.Errorf("목 차 is a %s", b.Kind)
		}
	}
}

// Page 5 of the Federal Register sets three columns whose lines sit at different heights, above a table
// that spans them: each column's sentences come out whole, not interleaved with the next column's.
func TestPDF_ColumnsAboveATableReadInOrder(t *testing.T) {
	got := strings.Join(strings.Fields(pageText(extractFixture(t, "pdf/federal-register-2020-17221.pdf"), 5)), " ")
	for _, want := range []string{
		"The FAA estimates that this proposed AD affects 73 airplanes of U.S. registry.",
		"Boeing 737 Flight Standardization Board Report documenting the results of the operational evaluation on pilot training.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("page 5 lacks %q", want)
		}
	}
}

// A sentence of the Federal Register that runs on from the foot of one column into the next is one
// paragraph, not three ("… per sensed high" | "AOA event. A subsequent activation of" | "MCAS would be …"); a
// footnote under a column does not join the sentence it interrupts.
func TestPDF_ParagraphAcrossColumns(t *testing.T) {
	x := extractFixture(t, "pdf/federal-register-2020-17221.pdf")
	const want = "only one activation of MCAS per sensed high AOA event. A subsequent activation of MCAS would be possible"
	if !slices.ContainsFunc(x.Blocks, func(b rag.Block) bool { return strings.Contains(b.Text, want) }) {
		t.Errorf("no block holds %q", want)
	}
	for _, b := range x.Blocks {
		if strings.Contains(b.Text, "airspeed disagree alert, and 1Preliminary") {
			t.Errorf("a footnote joined the body: %q", b.Text)
		}
	}
}

// joinCase is a pair of paragraphs and whether they are one.
type joinCase struct {
	prev     para
	prevText string
	next     para
	nextText string
	want     bool
}

// continues joins a paragraph that ends mid-sentence to the next of its size that goes on with it.
func TestContinues(t *testing.T) {
	full := para{h: 9, lines: 5, full: true}
	short := para{h: 9, lines: 1}
	for _, tc := range []joinCase{
		{full, "the revised flight control laws would permit only one activation of MCAS per sensed high", para{h: 7}, "AOA event. A subsequent activation of", true},
		{short, "AOA event. A subsequent activation of", para{h: 9}, "MCAS would be possible only after", true},
		{short, "Mail: U.S. Department of", para{h: 9}, "Transportation, Docket Operations", true},
		{full, "지방탄소중립위원회(이하 “지방탄소중립위원회”라 함)를 둘 수 있도록 하고, 지방탄소중립위원", para{h: 9}, "회의 위원 위촉의 경우에도", true},
		{full, "the FCC would disable the speed trim system.", para{h: 9}, "and more", false},                                 // a sentence ends
		{full, "clude stall warning activation, airspeed disagree alert, and", para{h: 7}, "1Preliminary KNKT report", false}, // a footnote
		{full, "the FAA will post the draft Boeing 737 Flight Standardization", para{h: 9}, "ESTIMATED COSTS", false},         // a heading in capitals
		{short, "Related Service Information", para{h: 9}, "the FAA reviewed", false},                                         // a short line ends no sentence that goes on
		{full, "the report of the standing trustee", para{h: 14}, "annual report", false},                                     // another size
		{full, "주요 내용은 다음과 같음", para{h: 9}, "1. 위원 후보 추천", false},                                                             // a list item
	} {
		if got := continues(tc.prev, tc.next, tc.prevText, tc.nextText); got != tc.want {
			t.Errorf("continues(%q, %q) = %v, want %v", tc.prevText, tc.nextText, got, tc.want)
		}
	}
}

// A Federal Register sentence that runs on from the foot of page 1 to the top of page 2 ("… after takeoff
// from Soekarno-" | "Hatta International Airport …, resulting in 189 fatalities.") is one paragraph that
// starts on page 1 and says where page 2 starts in it; each page's part stays its page's text.
func TestPDF_ParagraphAcrossPages(t *testing.T) {
	x := extractFixture(t, "pdf/federal-register-2020-17221.pdf")
	i := slices.IndexFunc(x.Blocks, func(b rag.Block) bool {
		return strings.Contains(b.Text, "operated by Lion Air") && strings.Contains(b.Text, "resulting in 189 fatalities")
	})
	if i < 0 {
		t.Fatal("no block holds the Lion Air sentence from page 1 to page 2")
	}
	b := x.Blocks[i]
	if b.Page != 1 || len(b.PageTurns) != 1 || b.PageTurns[0].Page != 2 {
		t.Fatalf("block on page %d with turns %v, want page 1 turning to 2", b.Page, b.PageTurns)
	}
	if on1, on2 := b.TextOn(1), b.TextOn(2); !strings.HasSuffix(on1, "Soekarno") || !strings.HasPrefix(on2, "Hatta International Airport") {
		t.Errorf("page 1 part ends %q, page 2 part starts %q", on1[max(0, len(on1)-30):], on2[:min(40, len(on2))])
	}
	// Korean pages stay apart: no block of the bill turns a page.
	for _, b := range extractFixture(t, "pdf/bill_2125318_original.pdf").Blocks {
		if len(b.PageTurns) > 0 {
			t.Errorf("a Korean paragraph was joined across pages: %q", b.Text)
		}
	}
}

// continuesPage joins the first paragraph of a page to the last of the page before when the sentence runs
// on, also when the page opens with a capital (a name wrapped at its hyphen); Hangul pages stay apart.
func TestContinuesPage(t *testing.T) {
	full := para{h: 9, lines: 5, full: true}
	long := "a Boeing Model 737–8 airplane operated by Lion Air was involved in an accident after takeoff from Soekarno"
	for _, tc := range []joinCase{
		{full, long, para{h: 9}, "Hatta International Airport in Jakarta", true},
		{full, long, para{h: 9}, "the airport", true},                                                          // continues' own rule
		{para{h: 9, lines: 1}, long, para{h: 9}, "Hatta International", false},                                 // a short last line ends the paragraph
		{full, long + ".", para{h: 9}, "Hatta International", false},                                           // a sentence ends
		{full, long, para{h: 9}, "ESTIMATED COSTS", false},                                                     // a heading in capitals
		{full, long, para{h: 9}, "5Stall warning indication", false},                                           // a footnote
		{full, "from Soekarno", para{h: 9}, "Hatta International", false},                                      // too short to tell
		{full, "an accident after takeoff from the airport Soekarno", para{h: 9}, "Hatta International", true}, // 8 words
		{full, "an accident after takeoff from airport Soekarno", para{h: 9}, "Hatta International", false},    // 7 words
		{full, long, para{h: 14}, "Hatta International", false},                                                // another size
		{full, "지방탄소중립위원회(이하 “지방탄소중립위원회”라 함)를 둘 수 있도록 하고, 지방탄소중립위원", para{h: 9}, "회의 위원 위촉의 경우에도", false},
	} {
		if got := continuesPage(tc.prev, tc.next, tc.prevText, tc.nextText); got != tc.want {
			t.Errorf("continuesPage(%q, %q) = %v, want %v", tc.prevText, tc.nextText, got, tc.want)
		}
	}
}
