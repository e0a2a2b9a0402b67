package extract

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/rag"
)

func TestHWP_Fixtures(t *testing.T) {
	x := extractFormat(t, "hwp/table.hwp")
	if x.MediaType != MediaHWP || x.Pages != 1 {
		t.Errorf("media type %q, pages %d", x.MediaType, x.Pages)
	}
	tbl := findBlock(t, x, "LMN")
	want := "| ABC 123 | DEF | GHI |\n| --- | --- | --- |\n| LMN | OPQ | STR |\n| UVM | 123 | 456 |"
	if tbl.Kind != rag.BlockTable || tbl.Text != want || tbl.Page != 1 {
		t.Errorf("table:\n%s\nwant\n%s", tbl.Text, want)
	}
	// The caption ("표" and its number, a control) comes before the table.
	if x.Blocks[0].Text != "표" {
		t.Errorf("first block %q, want the caption", x.Blocks[0].Text)
	}

	x = extractFormat(t, "hwp/paragraph-numbering.hwp")
	var got []string
	for _, b := range x.Blocks {
		got = append(got, b.Text)
	}
	if g := strings.Join(got, "|"); g != "양쪽 정렬|왼쪽 정렬|중앙정렬|오른쪽 정렬|문단번호|문단번호|문단번호|글머리표|글머리표" {
		t.Errorf("paragraphs: %s", g)
	}

	// Sniffed without an extension.
	if mt := MediaType("noext", mustRead(t, filepath.Join(formats, "hwp/table.hwp"))); mt != MediaHWP {
		t.Errorf("sniffed %q", mt)
	}
}

// hwpRec encodes one record (the long form of the size when it does not fit in 12 bits).
func hwpRec(tag, level int, data []byte) []byte {
	var b bytes.Buffer
	size := len(data)
	h := uint32(tag) | uint32(level)<<10
	if size >= 0xFFF {
		binary.Write(&b, binary.LittleEndian, h|0xFFF<<20)
		binary.Write(&b, binary.LittleEndian, uint32(size))
	} else {
		binary.Write(&b, binary.LittleEndian, h|uint32(size)<<20)
	}
	b.Write(data)
	return b.Bytes()
}

// hwpText encodes paragraph text as PARA_TEXT does; "\x0b" stands for an extended control.
func hwpText(s string) []byte {
	var b bytes.Buffer
	for _, u := range utf16.Encode([]rune(s)) {
		binary.Write(&b, binary.LittleEndian, u)
		if u == 0x0b || u == '\t' { // extended and inline controls (a tab is one) take eight units
			b.Write(make([]byte, 14))
		}
	}
	binary.Write(&b, binary.LittleEndian, uint16(13))
	return b.Bytes()
}

func hwpParaHeader(style byte, pageBreak bool) []byte {
	d := make([]byte, 22)
	d[10] = style
	if pageBreak {
		d[11] = 0x04
	}
	return d
}

func hwpLineSeg(vert ...int) []byte {
	d := make([]byte, 36*len(vert))
	for i, v := range vert {
		binary.LittleEndian.PutUint32(d[36*i+4:], uint32(v))
	}
	return d
}

func hwpCtrl(id string) []byte {
	d := make([]byte, 4)
	binary.LittleEndian.PutUint32(d, ctrlID(id))
	return d
}

func hwpCell(col, row int) []byte {
	d := make([]byte, 34)
	binary.LittleEndian.PutUint16(d[8:], uint16(col))
	binary.LittleEndian.PutUint16(d[10:], uint16(row))
	return d
}

func hwpStyle(name, eng string) []byte {
	var b bytes.Buffer
	for _, s := range []string{name, eng} {
		u := utf16.Encode([]rune(s))
		binary.Write(&b, binary.LittleEndian, uint16(len(u)))
		binary.Write(&b, binary.LittleEndian, u)
	}
	b.Write(make([]byte, 10))
	return b.Bytes()
}

func readHWPRecords(t *testing.T, lim Limits, docInfo, body []byte) (*hwpReader, error) {
	t.Helper()
	b := newBudget(context.Background(), "r.hwp", lim.WithDefaults())
	r := &hwpReader{b: b, out: blockList{budget: b}, styles: map[int]int{}}
	if err := r.readStyles(bufio.NewReader(bytes.NewReader(docInfo))); err != nil {
		return r, err
	}
	r.pages.section()
	return r, r.readSection(bufio.NewReader(bytes.NewReader(body)))
}

func TestHWP_Records(t *testing.T) {
	docInfo := bytes.Join([][]byte{hwpRec(hwpTagStyle, 1, hwpStyle("바탕글", "Normal")), hwpRec(hwpTagStyle, 1, hwpStyle("개요 2", "Outline 2"))}, nil)
	body := bytes.Join([][]byte{
		hwpRec(hwpTagParaHeader, 0, hwpParaHeader(1, false)), hwpRec(hwpTagParaText, 1, hwpText("추진 배경")), hwpRec(hwpTagLineSeg, 1, hwpLineSeg(0)),
		hwpRec(hwpTagParaHeader, 0, hwpParaHeader(0, false)), hwpRec(hwpTagParaText, 1, hwpText("본문\t첫 문장.\x0b")), hwpRec(hwpTagLineSeg, 1, hwpLineSeg(1000, 2000)),
		hwpRec(hwpTagCtrlHeader, 1, hwpCtrl("fn  ")), hwpRec(hwpTagListHeader, 2, make([]byte, 8)),
		hwpRec(hwpTagParaHeader, 2, hwpParaHeader(0, false)), hwpRec(hwpTagParaText, 3, hwpText("각주 내용")),
		hwpRec(hwpTagParaHeader, 0, hwpParaHeader(0, false)), hwpRec(hwpTagParaText, 1, hwpText("\x0b")), hwpRec(hwpTagLineSeg, 1, hwpLineSeg(500)),
		hwpRec(hwpTagCtrlHeader, 1, hwpCtrl("head")), hwpRec(hwpTagListHeader, 2, make([]byte, 8)),
		hwpRec(hwpTagParaHeader, 2, hwpParaHeader(0, false)), hwpRec(hwpTagParaText, 3, hwpText("머리말")),
		hwpRec(hwpTagCtrlHeader, 1, hwpCtrl("tbl ")), hwpRec(hwpTagTable, 2, make([]byte, 20)),
		hwpRec(hwpTagListHeader, 2, hwpCell(0, 0)), hwpRec(hwpTagParaHeader, 2, nil), hwpRec(hwpTagParaText, 3, hwpText("구분")),
		hwpRec(hwpTagListHeader, 2, hwpCell(1, 0)), hwpRec(hwpTagParaHeader, 2, nil), hwpRec(hwpTagParaText, 3, hwpText("금액")),
		hwpRec(hwpTagListHeader, 2, hwpCell(0, 1)), hwpRec(hwpTagParaHeader, 2, nil), hwpRec(hwpTagParaText, 3, hwpText("인건비")),
		hwpRec(hwpTagListHeader, 2, hwpCell(60000, 1)), hwpRec(hwpTagParaHeader, 2, nil), hwpRec(hwpTagParaText, 3, hwpText("3,000")),
		hwpRec(hwpTagParaHeader, 0, hwpParaHeader(0, true)), hwpRec(hwpTagParaText, 1, hwpText(strings.Repeat("긴 문단 ", 600))), hwpRec(hwpTagLineSeg, 1, hwpLineSeg(9000)),
	}, nil)
	r, err := readHWPRecords(t, Limits{}, docInfo, body)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range r.out.blocks {
		got = append(got, string(b.Kind)+"/"+itoa(b.Level)+"/p"+itoa(b.Page)+": "+string([]rune(b.Text)[:min(utf8.RuneCountInString(b.Text), 50)]))
	}
	want := []string{
		"heading/2/p1: 추진 배경",
		"paragraph/0/p1: 본문 첫 문장.",
		"paragraph/0/p1: 각주 내용",
		"table/0/p2: | 구분 | 금액 |\n| --- | --- |\n| 인건비 | 3,000 |", // a forged column: the next cell
		"paragraph/0/p3: " + strings.Repeat("긴 문단 ", 10),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// A record whose size field claims 4 GiB is read as far as the stream goes: an error, no allocation of
	// the claimed size.
	huge := append(binary.LittleEndian.AppendUint32(nil, hwpTagParaText|1<<10|0xFFF<<20), 0xFF, 0xFF, 0xFF, 0xFF, 'a', 0)
	if _, err := readHWPRecords(t, Limits{}, nil, append(hwpRec(hwpTagParaHeader, 0, nil), huge...)); err == nil {
		t.Error("truncated record read without error")
	}
	// The characters budget holds for record text.
	text := hwpRec(hwpTagParaHeader, 0, nil)
	text = append(text, hwpRec(hwpTagParaText, 1, hwpText(strings.Repeat("가", 1000)))...)
	if _, err := readHWPRecords(t, Limits{MaxChars: 1000}, nil, text); err != nil {
		t.Errorf("at the limit: %v", err)
	}
	_, err = readHWPRecords(t, Limits{MaxChars: 999}, nil, text)
	wantBudget(t, err, rag.CodeTooLarge, "RAGD_MAX_CHARS")
}

func TestHWP_BadInput(t *testing.T) {
	data := mustRead(t, filepath.Join(formats, "hwp/table.hwp"))
	// The sections' streams are read through the member budget.
	_, err := extractWith(t, Limits{MaxMemberBytes: 1000}, "t.hwp", data)
	wantBudget(t, err, rag.CodeTooLarge, "RAGD_MAX_MEMBER_BYTES")

	for name, bad := range map[string][]byte{
		"not OLE":   []byte("HWP Document File V3.00 \x1a\x01\x02\x03\x04\x05"),
		"truncated": data[:len(data)/2],
		"zeroed":    append(append([]byte{}, data[:512]...), make([]byte, len(data)-512)...),
	} {
		if _, err := shared.Extract(context.Background(), "bad.hwp", bad); rag.ErrorCode(err) != rag.CodeInvalid || !strings.Contains(rag.ErrorMessage(err), "HWP") {
			t.Errorf("%s: got %v, want invalid_request naming HWP", name, err)
		}
	}
}
