package extract

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/hostile"
	"github.com/ragd/ragd/internal/rag"
)

// formats is ../shared/formats: fixtures of the formats added after ../shared/fixtures.
var formats = filepath.Join("..", "..", "..", "shared", "formats")

func extractFormat(t *testing.T, rel string) *rag.Extracted {
	t.Helper()
	p := filepath.Join(formats, rel)
	x, err := shared.Extract(context.Background(), p, mustRead(t, p))
	if err != nil {
		t.Fatalf("extract %s: %v", rel, err)
	}
	return x
}

// findBlock returns the first block whose text contains s, or fails.
func findBlock(t *testing.T, x *rag.Extracted, s string) rag.Block {
	t.Helper()
	for _, b := range x.Blocks {
		if strings.Contains(b.Text, s) {
			return b
		}
	}
	t.Fatalf("no block contains %q", s)
	return rag.Block{}
}

func TestHWPX_Fixtures(t *testing.T) {
	x := extractFormat(t, "hwpx/table-grades.hwpx")
	if x.MediaType != MediaHWPX {
		t.Errorf("media type %q", x.MediaType)
	}
	tbl := findBlock(t, x, "개똥이")
	want := [][]string{{"이름", "국어", "영어", "수학"}, {"개똥이", "89", "65", "78"}}
	if tbl.Kind != rag.BlockTable || tbl.HeaderRows != 1 || len(tbl.Rows) < 2 ||
		strings.Join(tbl.Rows[0], "|") != strings.Join(want[0], "|") || strings.Join(tbl.Rows[1], "|") != strings.Join(want[1], "|") {
		t.Errorf("grades table: %+v", tbl)
	}
	// The title is in a text box (a rectangle's drawText), read into its paragraph.
	findBlock(t, x, "C반 기말고사")

	x = extractFormat(t, "hwpx/mcst-press-2024-01-02.hwpx")
	if b := findBlock(t, x, "장미란 제2차관은 1월 2일(화)"); b.Kind != rag.BlockParagraph || b.Page != 1 {
		t.Errorf("press release body: %+v", b)
	}
	// The contact table is on the second page; the phone numbers stay in their rows.
	if b := findBlock(t, x, "최준규"); b.Kind != rag.BlockTable || b.Page != 2 || x.Pages != 2 || !strings.Contains(b.Text, "| 최준규 | (044-203-3129) |") {
		t.Errorf("contact table: page %d of %d: %s", b.Page, x.Pages, b.Text)
	}

	// The request for proposals prints its table of contents (page numbers counted from the body's first
	// page, which follows a cover and the contents page): each chapter is found on its page.
	x = extractFormat(t, "hwpx/gangbuk-rfp-2023.hwpx")
	for _, c := range []struct {
		heading string
		page    int
	}{{"I. 과업안내", 1}, {"II. 과업 세부내용", 2}, {"III. 입찰 및 계약", 5}, {"IV. 제안서 및 입찰서류 작성 지침", 13}, {"V. 과업의 일반지침", 16}} {
		found := false
		for _, b := range x.Blocks {
			if b.Text == c.heading {
				found = true
				if b.Page != c.page+2 {
					t.Errorf("%s: page %d, want %d", c.heading, b.Page, c.page+2)
				}
			}
		}
		if !found {
			t.Errorf("no paragraph %q", c.heading)
		}
	}
	if b := findBlock(t, x, "음악축제 2부"); b.Kind != rag.BlockTable || !strings.Contains(b.Text, "| 음악축제 2부 | 19:20 ~ 20:40 | 국내 최정상급 가수 3팀 |") {
		t.Errorf("schedule table: %+v", b)
	}
	prev := 0
	for _, b := range x.Blocks {
		if b.Page < prev || b.Page < 1 || b.Page > x.Pages {
			t.Fatalf("block on page %d after page %d (of %d): %q", b.Page, prev, x.Pages, b.Text)
		}
		prev = b.Page
	}
}

// hwpxDoc returns an HWPX package whose header defines an outline style (id 2, "개요 1") and an outline
// paragraph shape (id 7, level 1 → heading 2), and whose sections are the given bodies.
func hwpxDoc(sections ...string) []byte {
	members := []string{"mimetype", "application/hwp+zip",
		"Contents/header.xml", `<hh:head xmlns:hh="h"><hh:refList><hh:paraProperties>` +
			`<hh:paraPr id="7"><hh:heading type="OUTLINE" idRef="0" level="1"/></hh:paraPr>` +
			`<hh:paraPr id="8"><hh:heading type="NONE" idRef="0" level="0"/></hh:paraPr></hh:paraProperties>` +
			`<hh:styles><hh:style id="0" type="PARA" name="바탕글" engName="Normal"/>` +
			`<hh:style id="2" type="PARA" name="개요 1" engName="Outline 1"/></hh:styles></hh:refList></hh:head>`}
	for i, s := range sections {
		members = append(members, "Contents/section"+string(rune('0'+i))+".xml",
			`<hs:sec xmlns:hs="s" xmlns:hp="p">`+s+`</hs:sec>`)
	}
	return hostile.Zip(members...)
}

// hwpxPara is a top-level paragraph with its layout: one line at vertical position vert.
func hwpxPara(attrs, body string, vert int) string {
	return `<hp:p ` + attrs + `><hp:run>` + body + `</hp:run><hp:linesegarray><hp:lineseg textpos="0" vertpos="` +
		itoa(vert) + `"/></hp:linesegarray></hp:p>`
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestHWPX_HeadingsTablesNotesPages(t *testing.T) {
	cell := func(addr, text string, header bool) string {
		h := "0"
		if header {
			h = "1"
		}
		return `<hp:tc header="` + h + `"><hp:subList><hp:p><hp:run><hp:t>` + text + `</hp:t></hp:run></hp:p></hp:subList>` +
			`<hp:cellAddr colAddr="` + addr + `" rowAddr="0"/></hp:tc>`
	}
	doc := hwpxDoc(
		hwpxPara(`styleIDRef="2"`, `<hp:t>사업 개요</hp:t>`, 0)+
			hwpxPara(`paraPrIDRef="7"`, `<hp:t>추진 배경</hp:t>`, 1000)+
			hwpxPara(``, `<hp:t>본문<hp:tab/>첫 문장.</hp:t><hp:ctrl><hp:footNote><hp:subList><hp:p><hp:run><hp:t>각주 내용</hp:t></hp:run></hp:p></hp:subList></hp:footNote></hp:ctrl><hp:t> 이어서.</hp:t>`, 2000)+
			`<hp:p><hp:run><hp:ctrl><hp:header><hp:subList><hp:p><hp:run><hp:t>머리말 텍스트</hp:t></hp:run></hp:p></hp:subList></hp:header></hp:ctrl></hp:run></hp:p>`+
			hwpxPara(``, `<hp:tbl><hp:tr>`+cell("0", "구분", true)+cell("1", "금액", true)+`</hp:tr>`+
				`<hp:tr>`+cell("0", "인건비", false)+cell("2", "3,000", false)+`</hp:tr></hp:tbl><hp:t>표 뒤</hp:t>`, 500),
		hwpxPara(`pageBreak="0"`, `<hp:t>둘째 구역</hp:t>`, 0)+
			hwpxPara(`pageBreak="1"`, `<hp:t>쪽 나눔 뒤</hp:t>`, 3000),
	)
	x, err := shared.Extract(context.Background(), "h.hwpx", doc)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range x.Blocks {
		got = append(got, string(b.Kind)+"/"+itoa(b.Level)+"/p"+itoa(b.Page)+": "+b.Text)
	}
	want := []string{
		"heading/1/p1: 사업 개요",
		"heading/2/p1: 추진 배경",
		"paragraph/0/p1: 본문 첫 문장. 이어서.",
		"paragraph/0/p1: 각주 내용",
		"table/0/p2: | 구분 | 금액 |  |\n| --- | --- | --- |\n| 인건비 |  | 3,000 |",
		"paragraph/0/p2: 표 뒤",
		"paragraph/0/p3: 둘째 구역",
		"paragraph/0/p4: 쪽 나눔 뒤",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if x.Pages != 4 {
		t.Errorf("pages %d, want 4", x.Pages)
	}

	// Without recorded layout there are no pages; a forged cell address does not widen the table.
	doc = hwpxDoc(`<hp:p><hp:run><hp:tbl><hp:tr>` + cell("0", "a", false) + cell("999999999", "b", false) + `</hp:tr></hp:tbl></hp:run></hp:p>`)
	x, err = shared.Extract(context.Background(), "h.hwpx", doc)
	if err != nil {
		t.Fatal(err)
	}
	if x.Pages != 0 || x.Blocks[0].Page != 0 || len(x.Blocks[0].Rows[0]) != 2 {
		t.Errorf("got pages %d, blocks %+v", x.Pages, x.Blocks)
	}

	for _, bad := range [][]byte{hostile.Zip("Contents/header.xml", "<a/>"), []byte("PK\x03\x04 not a zip"), hwpxDoc(`<hp:p><hp:run><hp:t>x<`)} {
		if _, err := shared.Extract(context.Background(), "bad.hwpx", bad); rag.ErrorCode(err) != rag.CodeInvalid || !strings.Contains(rag.ErrorMessage(err), "HWPX") {
			t.Errorf("got %v, want invalid_request naming HWPX", err)
		}
	}
}
