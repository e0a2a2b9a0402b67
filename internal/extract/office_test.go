package extract

import (
	"context"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/hostile"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/testkit"
)

func blockLines(x *rag.Extracted) string {
	var got []string
	for _, b := range x.Blocks {
		got = append(got, string(b.Kind)+"/"+itoa(b.Level)+"/p"+itoa(b.Page)+": "+b.Text)
	}
	return strings.Join(got, "\n")
}

func TestXLSX_SheetsAndRows(t *testing.T) {
	data := testkit.XLSX(
		testkit.Sheet{Name: "예산", Rows: [][]string{{"항목", "금액", "비고"}, {"인건비", "3000", ""}, {}, {"홍보비", "120.5", "온라인 & 옥외"}, {"", "", "", "추가"}}},
		testkit.Sheet{Name: "Empty"},
		testkit.Sheet{Name: "Staff", Rows: [][]string{{"Name", "Role"}, {"Kim", "Lead"}}},
	)
	x, err := shared.Extract(context.Background(), "budget.xlsx", data)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"heading/1/p0: 예산",
		"paragraph/0/p0: 항목 | 금액 | 비고",
		"paragraph/0/p0: 항목: 인건비\n금액: 3000",
		"paragraph/0/p0: 항목: 홍보비\n금액: 120.5\n비고: 온라인 & 옥외",
		"paragraph/0/p0: D: 추가",
		"heading/1/p0: Empty",
		"heading/1/p0: Staff",
		"paragraph/0/p0: Name | Role",
		"paragraph/0/p0: Name: Kim\nRole: Lead",
	}, "\n")
	if got := blockLines(x); got != want || x.MediaType != MediaXLSX {
		t.Errorf("%s:\n%s\nwant\n%s", x.MediaType, got, want)
	}
	if mt := MediaType("noext", data); mt != MediaXLSX {
		t.Errorf("sniffed %q", mt)
	}

	// Hidden sheets are left out; inline strings, booleans, rich shared strings without their phonetic
	// guide, and an out-of-range shared string index (empty) are read.
	wb := `<workbook><sheets><sheet name="S" r:id="rId1"/><sheet name="H" state="hidden" r:id="rId2"/></sheets></workbook>`
	rels := `<Relationships><Relationship Id="rId1" Target="worksheets/a.xml"/><Relationship Id="rId2" Target="/xl/worksheets/b.xml"/></Relationships>`
	sheet := `<worksheet><sheetData><row><c r="A1" t="inlineStr"><is><t>H1</t></is></c><c r="B1" t="s"><v>0</v></c></row>` +
		`<row><c r="A2" t="b"><v>1</v></c><c r="B2" t="s"><v>7</v></c><c t="str"><f>A1</f><v>계산</v></c></row>` +
		`<row><c r="A3" s="1"><v>45366</v></c><c r="B3" s="2"><v>45366.5</v></c><c r="C3" s="3"><v>1.5</v></c></row></sheetData></worksheet>`
	// Dates: a built-in date format (14), a custom one with quoted text, and a custom number format whose
	// only "d" is quoted (not a date).
	styles := `<styleSheet><numFmts><numFmt numFmtId="164" formatCode="yyyy&quot;년&quot; m&quot;월&quot; d&quot;일&quot; h:mm"/>` +
		`<numFmt numFmtId="165" formatCode="0.00&quot;d&quot;"/></numFmts><cellXfs><xf numFmtId="0"/><xf numFmtId="14"/>` +
		`<xf numFmtId="164"/><xf numFmtId="165"/></cellXfs></styleSheet>`
	x, err = shared.Extract(context.Background(), "m.xlsx", hostile.Zip("xl/workbook.xml", wb, "xl/_rels/workbook.xml.rels", rels,
		"xl/sharedStrings.xml", `<sst><si><r><t>후</t></r><r><t>보</t></r><rPh><t>フ</t></rPh></si></sst>`,
		"xl/worksheets/a.xml", sheet, "xl/styles.xml", styles, "xl/worksheets/b.xml", `<worksheet><sheetData><row><c t="inlineStr"><is><t>hidden</t></is></c></row></sheetData></worksheet>`))
	if err != nil {
		t.Fatal(err)
	}
	want = "heading/1/p0: S\nparagraph/0/p0: H1 | 후보\nparagraph/0/p0: H1: TRUE\nC: 계산\n" +
		"paragraph/0/p0: H1: 2024-03-15\n후보: 2024-03-15 12:00:00\nC: 1.5"
	if got := blockLines(x); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	for _, bad := range [][]byte{hostile.Zip("xl/other.xml", "<a/>"), hostile.Zip("xl/workbook.xml", "<workbook><sheets><sheet")} {
		if _, err := shared.Extract(context.Background(), "bad.xlsx", bad); rag.ErrorCode(err) != rag.CodeInvalid || !strings.Contains(rag.ErrorMessage(err), "XLSX") {
			t.Errorf("got %v, want invalid_request naming XLSX", err)
		}
	}
}

func TestPPTX_SlidesTitlesNotes(t *testing.T) {
	data := testkit.PPTX(
		testkit.Slide{Title: "분기 실적", Body: []string{"매출 12% 증가", "영업이익 흑자 전환"}, Notes: "질문이 나오면 환율 효과를 설명할 것"},
		testkit.Slide{Body: []string{"No title here"}, Table: [][]string{{"Region", "Sales"}, {"Seoul", "120"}}},
	)
	x, err := shared.Extract(context.Background(), "deck.pptx", data)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"heading/1/p1: 분기 실적",
		"paragraph/0/p1: 매출 12% 증가",
		"paragraph/0/p1: 영업이익 흑자 전환",
		"heading/2/p1: Notes",
		"paragraph/0/p1: 질문이 나오면 환율 효과를 설명할 것",
		"heading/1/p2: Slide 2",
		"paragraph/0/p2: No title here",
		"table/0/p2: | Region | Sales |\n| --- | --- |\n| Seoul | 120 |",
	}, "\n")
	if got := blockLines(x); got != want || x.Pages != 2 || x.MediaType != MediaPPTX {
		t.Errorf("%s, %d pages:\n%s\nwant\n%s", x.MediaType, x.Pages, got, want)
	}
	if mt := MediaType("noext", data); mt != MediaPPTX {
		t.Errorf("sniffed %q", mt)
	}

	// The slide count is a page count: MaxPages holds at its boundary.
	three := testkit.PPTX(testkit.Slide{Title: "a"}, testkit.Slide{Title: "b"}, testkit.Slide{Title: "c"})
	if _, err := extractWith(t, Limits{MaxPages: 3}, "p.pptx", three); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	_, err = extractWith(t, Limits{MaxPages: 2}, "p.pptx", three)
	wantBudget(t, err, rag.CodeTooLarge, "RAGD_MAX_PAGES")

	if _, err := shared.Extract(context.Background(), "bad.pptx", hostile.Zip("ppt/slides/slide1.xml", "<a/>")); rag.ErrorCode(err) != rag.CodeInvalid || !strings.Contains(rag.ErrorMessage(err), "PPTX") {
		t.Errorf("got %v, want invalid_request naming PPTX", err)
	}
}
