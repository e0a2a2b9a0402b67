package chunk

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/rag"
)

func para(page int, text string) rag.Block {
	return rag.Block{Kind: rag.BlockParagraph, Page: page, Text: text}
}

func head(level int, text string) rag.Block {
	return rag.Block{Kind: rag.BlockHeading, Level: level, Text: text}
}

// checkChunks verifies what every chunk must satisfy: consecutive indexes, a size within the limit, text that
// is the document text between its offsets (a table piece: its header plus that text), and a page span.
func checkChunks(t *testing.T, ex *rag.Extracted, opt Options, chunks []rag.Chunk) {
	t.Helper()
	opt = opt.WithDefaults()
	doc := []rune(DocText(ex))
	for i, c := range chunks {
		if c.Index != i {
			t.Errorf("chunk %d: Index = %d", i, c.Index)
		}
		if n := utf8.RuneCountInString(c.Text); n > opt.Size {
			t.Errorf("chunk %d: %d characters > Size %d: %q", i, n, opt.Size, c.Text)
		}
		if c.StartOffset < 0 || c.EndOffset > len(doc) || c.StartOffset >= c.EndOffset {
			t.Fatalf("chunk %d: offsets [%d, %d) outside the document (%d)", i, c.StartOffset, c.EndOffset, len(doc))
		}
		span := string(doc[c.StartOffset:c.EndOffset])
		if c.Kind == rag.KindTable {
			if !strings.HasSuffix(c.Text, span) {
				t.Errorf("table chunk %d: text %q does not end with its span %q", i, c.Text, span)
			}
		} else if c.Text != span {
			t.Errorf("chunk %d: text %q != document span %q", i, c.Text, span)
		}
		if c.PageStart > c.PageEnd {
			t.Errorf("chunk %d: page span %d-%d", i, c.PageStart, c.PageEnd)
		}
		if strings.TrimSpace(c.Text) == "" || (c.Kind != rag.KindCode && strings.TrimSpace(c.Text) != c.Text) {
			t.Errorf("chunk %d: untrimmed or empty text %q", i, c.Text)
		}
	}
}

// exactly returns sentences of the given language whose total length (joined by spaces) is exactly n runes.
func exactly(n int, ko bool) string {
	sentence := "The wing stalls at a high angle. "
	if ko {
		sentence = "날개는 높은 받음각에서 실속한다. "
	}
	var b strings.Builder
	for utf8.RuneCountInString(b.String())+utf8.RuneCountInString(sentence) <= n {
		b.WriteString(sentence)
	}
	s := strings.TrimRight(b.String(), " ")
	// Pad the last sentence with letters so the text is exactly n runes and still ends with a period.
	pad := n - utf8.RuneCountInString(s)
	fill := "x"
	if ko {
		fill = "가"
	}
	return s[:len(s)-1] + strings.Repeat(fill, pad) + "."
}

func TestSplitSizeBoundary(t *testing.T) {
	t.Parallel()
	for _, ko := range []bool{false, true} {
		for _, tc := range []struct {
			extra, want int
		}{{0, 1}, {1, 2}} {
			t.Run(fmt.Sprintf("ko=%v/Size+%d", ko, tc.extra), func(t *testing.T) {
				t.Parallel()
				opt := Options{Size: 200, Overlap: 40}
				text := exactly(200+tc.extra, ko)
				if n := utf8.RuneCountInString(text); n != 200+tc.extra {
					t.Fatalf("test text has %d runes", n)
				}
				ex := &rag.Extracted{Blocks: []rag.Block{para(1, text)}}
				chunks := Split(ex, opt)
				checkChunks(t, ex, opt, chunks)
				if len(chunks) != tc.want {
					t.Fatalf("%d runes → %d chunks, want %d", 200+tc.extra, len(chunks), tc.want)
				}
			})
		}
	}
}

func TestSplitOverlap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
	}{
		{"English", strings.Repeat("Lift grows with the angle of attack until the wing stalls. Drag rises sharply beyond that point. ", 12)},
		{"Korean", strings.Repeat("양력은 받음각이 커질수록 증가하다가 날개가 실속하면 급격히 줄어든다. 그 이후에는 항력이 크게 늘어난다. ", 12)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opt := Options{Size: 300, Overlap: 100}
			ex := &rag.Extracted{Blocks: []rag.Block{para(0, strings.TrimSpace(tt.text))}}
			chunks := Split(ex, opt)
			checkChunks(t, ex, opt, chunks)
			if len(chunks) < 3 {
				t.Fatalf("got %d chunks, want at least 3", len(chunks))
			}
			for i := 1; i < len(chunks); i++ {
				prev, c := chunks[i-1], chunks[i]
				overlap := prev.EndOffset - c.StartOffset
				if overlap <= 0 || overlap > 100 {
					t.Errorf("chunk %d overlaps the previous one by %d characters, want 1..100", i, overlap)
				}
				// The overlap is whole sentences: the chunk starts where a sentence starts.
				first := Sentences(c.Text)[0]
				if !strings.HasSuffix(prev.Text, c.Text[first.Start:first.End]) && overlap > 0 {
					if !strings.Contains(prev.Text, c.Text[first.Start:first.End]) {
						t.Errorf("chunk %d starts with %q, not a sentence of the previous chunk", i, c.Text[first.Start:first.End])
					}
				}
				if c.EndOffset <= prev.EndOffset {
					t.Errorf("chunk %d does not advance: ends at %d, previous at %d", i, c.EndOffset, prev.EndOffset)
				}
			}
			// Every sentence is in some chunk.
			for _, sp := range Sentences(ex.Blocks[0].Text) {
				s := ex.Blocks[0].Text[sp.Start:sp.End]
				found := false
				for _, c := range chunks {
					found = found || strings.Contains(c.Text, s)
				}
				if !found {
					t.Errorf("sentence %q in no chunk", s)
				}
			}
		})
	}
}

func TestSplitNoOverlap(t *testing.T) {
	t.Parallel()
	opt := Options{Size: 120, Overlap: -1}
	ex := &rag.Extracted{Blocks: []rag.Block{para(0, strings.Repeat("One sentence of text here. ", 20))}}
	chunks := Split(ex, opt)
	checkChunks(t, ex, opt, chunks)
	for i := 1; i < len(chunks); i++ {
		if chunks[i].StartOffset < chunks[i-1].EndOffset {
			t.Errorf("chunk %d overlaps the previous one with Overlap -1", i)
		}
	}
}

func TestSplitLongSentence(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, word string }{{"English", "aerodynamic"}, {"Korean", "공기역학적"}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opt := Options{Size: 100, Overlap: 20}
			text := strings.TrimSpace(strings.Repeat(tt.word+" ", 60)) + "."
			ex := &rag.Extracted{Blocks: []rag.Block{para(3, text)}}
			chunks := Split(ex, opt)
			checkChunks(t, ex, opt, chunks)
			if len(chunks) < 4 {
				t.Fatalf("got %d chunks for %d runes", len(chunks), utf8.RuneCountInString(text))
			}
			for i, c := range chunks {
				for _, w := range strings.Fields(strings.TrimSuffix(c.Text, ".")) {
					if w != tt.word {
						t.Errorf("chunk %d cuts a word: %q", i, w)
					}
				}
				if c.PageStart != 3 || c.PageEnd != 3 {
					t.Errorf("chunk %d pages %d-%d, want 3-3", i, c.PageStart, c.PageEnd)
				}
			}
		})
	}
}

func TestSplitHeadings(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("This section explains the method in detail. ", 12)
	ex := &rag.Extracted{Blocks: []rag.Block{
		head(1, "1. 개요"),
		para(0, "이 문서는 설계를 설명한다."),
		head(2, "1.1 범위"),
		para(0, "범위는 작다."),
		head(2, "1.2 용어"),
		para(0, strings.TrimSpace(long)),
		head(2, "1.3 Notes"),
		para(0, "Short."),
		head(1, "2. 구성"),
		para(0, "구성 요소는 세 가지다."),
	}}
	opt := Options{Size: 400, Overlap: 50, MinSection: 100}
	chunks := Split(ex, opt)
	checkChunks(t, ex, opt, chunks)
	type want struct{ section, starts string }
	wants := []want{
		{"1. 개요", "1. 개요\n\n이 문서는"}, // 1 and 1.1 merge with the start of 1.2: they stay under 100 characters
		{"1. 개요 > 1.2 용어", "This section"},
		{"1. 개요 > 1.3 Notes", "1.3 Notes"},
		{"2. 구성", "2. 구성"}, // a top-level heading always starts a chunk
	}
	if len(chunks) != len(wants) {
		for _, c := range chunks {
			t.Logf("%q: %q", c.Section, c.Text)
		}
		t.Fatalf("got %d chunks, want %d", len(chunks), len(wants))
	}
	for i, w := range wants {
		if chunks[i].Section != w.section || !strings.HasPrefix(chunks[i].Text, w.starts) {
			t.Errorf("chunk %d: section %q text %q; want section %q, text starting %q", i, chunks[i].Section,
				chunks[i].Text, w.section, w.starts)
		}
	}
}

func TestSplitHeadingMovesToItsText(t *testing.T) {
	t.Parallel()
	sentence := strings.Repeat("가", 193) + "다."
	ex := &rag.Extracted{Blocks: []rag.Block{head(1, "A"), para(0, "x."), head(2, "B"), para(0, sentence)}}
	opt := Options{Size: 200, MinSection: 100}
	chunks := Split(ex, opt)
	checkChunks(t, ex, opt, chunks)
	if len(chunks) != 2 || chunks[0].Text != "A\n\nx." || chunks[1].Text != "B\n\n"+sentence || chunks[1].Section != "A > B" {
		t.Errorf("got %+v, want the heading B moved to the chunk of its text", chunks)
	}
}

func TestSplitEveryHeading(t *testing.T) {
	t.Parallel()
	ex := &rag.Extracted{Blocks: []rag.Block{
		head(1, "Guide"), head(2, "Install"), para(0, "Run the installer."),
		head(2, "Use"), para(0, "Open the app."),
	}}
	opt := Options{MinSection: -1}
	chunks := Split(ex, opt)
	checkChunks(t, ex, opt, chunks)
	got := make([]string, len(chunks))
	for i, c := range chunks {
		got[i] = c.Section + "|" + c.Text
	}
	want := []string{"Guide > Install|Guide\n\nInstall\n\nRun the installer.", "Guide > Use|Use\n\nOpen the app."}
	if strings.Join(got, "#") != strings.Join(want, "#") {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestSplitPages(t *testing.T) {
	t.Parallel()
	ex := &rag.Extracted{Pages: 3, Blocks: []rag.Block{
		para(1, "탄소중립 기본계획은 국가 전략이다. 정부는 이를 5년마다 수립한다."),
		para(2, "계획에는 부문별 감축 목표가 포함된다."),
		para(3, strings.Repeat("온실가스 감축 목표는 해마다 점검한다. ", 10)),
	}}
	opt := Options{Size: 150, Overlap: 30}
	chunks := Split(ex, opt)
	checkChunks(t, ex, opt, chunks)
	// The first page is a chunk of its own, however short (a title page); a later page that ends a chunk
	// under half full runs on into the next.
	if chunks[0].PageStart != 1 || chunks[0].PageEnd != 1 {
		t.Errorf("first chunk pages %d-%d, want 1-1: %q", chunks[0].PageStart, chunks[0].PageEnd, chunks[0].Text)
	}
	if len(chunks) < 2 || chunks[1].PageStart != 2 || chunks[1].PageEnd < 3 {
		t.Errorf("chunks %q: want the second to run from page 2 onto page 3", chunkTexts(chunks))
	}
	last := chunks[len(chunks)-1]
	if last.PageStart != 3 || last.PageEnd != 3 {
		t.Errorf("last chunk pages %d-%d, want 3-3", last.PageStart, last.PageEnd)
	}
}

// TestSplitOCR: a chunk holding text read by OCR is marked so, with the lowest confidence of its blocks; a
// chunk of text-layer pages only is not, and a table from an OCR page carries its page's mark.
func TestSplitOCR(t *testing.T) {
	t.Parallel()
	scanned := func(page int, conf float64, text string) rag.Block {
		b := para(page, text)
		b.OCR, b.OCRConfidence = true, conf
		return b
	}
	table := markdownTable([]string{"a", "b"}, [][]string{{"1", "2"}})
	table.Page, table.OCR, table.OCRConfidence = 4, true, 0.7
	ex := &rag.Extracted{Pages: 4, Blocks: []rag.Block{
		para(1, strings.Repeat("본문은 텍스트 층에서 읽었다. ", 8)),
		scanned(2, 0.9, "스캔한 쪽의 글이다. "),
		scanned(3, 0.8, strings.Repeat("다음 스캔 쪽이다. ", 10)),
		table,
	}}
	opt := Options{Size: 150, Overlap: -1}
	chunks := Split(ex, opt)
	checkChunks(t, ex, opt, chunks)
	if len(chunks) != 3 {
		t.Fatalf("%d chunks, want 3 (page 1, pages 2–3, the table): %+v", len(chunks), chunks)
	}
	if c := chunks[0]; c.OCR || c.OCRConfidence != 0 {
		t.Errorf("first chunk (page 1 only) marked as OCR: %+v", c)
	}
	if c := chunks[1]; c.PageStart != 2 || c.PageEnd != 3 || !c.OCR || c.OCRConfidence != 0.8 {
		t.Errorf("chunk of pages 2–3: %+v, want OCR with the lower confidence, 0.8", c)
	}
	if tc := chunks[len(chunks)-1]; tc.Kind != rag.KindTable || !tc.OCR || tc.OCRConfidence != 0.7 {
		t.Errorf("table chunk: %+v, want OCR with confidence 0.7", tc)
	}
}

func markdownTable(header []string, rows [][]string) rag.Block {
	var b strings.Builder
	b.WriteString("| " + strings.Join(header, " | ") + " |\n|")
	for range header {
		b.WriteString(" --- |")
	}
	for _, r := range rows {
		b.WriteString("\n| " + strings.Join(r, " | ") + " |")
	}
	return rag.Block{Kind: rag.BlockTable, Page: 2, Text: b.String(), Rows: append([][]string{header}, rows...), HeaderRows: 1}
}

func TestSplitTables(t *testing.T) {
	t.Parallel()
	header := []string{"공종", "규격", "단위", "수량"}
	var rows [][]string
	for i := range 40 {
		rows = append(rows, []string{fmt.Sprintf("콘크리트 타설 %d", i), fmt.Sprintf("D%d", 10+i), "m³", fmt.Sprint(i * 3)})
	}
	tests := []struct {
		name      string
		rows      int
		wantWhole bool
	}{
		{"ShortStaysWhole", 3, true},
		{"LongSplitsByRows", 40, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			table := markdownTable(header, rows[:tt.rows])
			ex := &rag.Extracted{Blocks: []rag.Block{
				head(1, "단가표"), para(2, "아래 표는 공종별 수량이다."), table, para(3, "표 끝."),
			}}
			opt := Options{Size: 300, Overlap: 50}
			chunks := Split(ex, opt)
			checkChunks(t, ex, opt, chunks)
			var tables []rag.Chunk
			for _, c := range chunks {
				if c.Kind == rag.KindTable {
					tables = append(tables, c)
				}
			}
			if tt.wantWhole {
				// A short table and the lead-in before it are one chunk: the lead-in alone says nothing.
				if len(chunks) != 2 || !strings.HasSuffix(chunks[0].Text, table.Text) || !strings.Contains(chunks[0].Text, "아래 표는 공종별 수량이다.\n\n|") {
					t.Fatalf("short table: chunks %q, want the lead-in and the whole table in the first", chunkTexts(chunks))
				}
				return
			} else if len(tables) < 2 {
				t.Fatalf("long table: got %d table chunks, want several", len(tables))
			}
			headerText := strings.SplitN(table.Text, "\n", 3)
			seen := map[string]int{}
			for i, c := range tables {
				if !strings.HasPrefix(c.Text, headerText[0]+"\n"+headerText[1]+"\n") {
					t.Errorf("table piece %d does not start with the header: %q", i, c.Text)
				}
				if c.Section != "단가표" || c.PageStart != 2 {
					t.Errorf("table piece %d: section %q page %d", i, c.Section, c.PageStart)
				}
				for _, l := range strings.Split(c.Text, "\n")[2:] {
					seen[l]++
				}
			}
			for _, l := range strings.Split(table.Text, "\n")[2:] {
				if seen[l] != 1 {
					t.Errorf("row %q is in %d pieces, want 1", l, seen[l])
				}
			}
			// The pieces' offsets cover the table's rows in order, without gaps.
			for i := 1; i < len(tables); i++ {
				if tables[i].StartOffset != tables[i-1].EndOffset+1 {
					t.Errorf("table piece %d starts at %d, previous ends at %d", i, tables[i].StartOffset, tables[i-1].EndOffset)
				}
			}
		})
	}
}

func chunkTexts(chunks []rag.Chunk) []string {
	out := make([]string, len(chunks))
	for i, c := range chunks {
		out[i] = c.Text
	}
	return out
}

// TestSplitTableCaption: a caption or lead-in before a table joins the table's chunk when both fit, on the
// table's page; longer text before a table, or text on another page, stays a chunk of its own.
func TestSplitTableCaption(t *testing.T) {
	t.Parallel()
	table := markdownTable([]string{"Header Col 1", "Header Col 2"}, [][]string{{"Lorem ipsum", "A link example"}})
	opt := Options{Size: 1000, Overlap: 200}
	for _, tc := range []struct {
		name   string
		before []rag.Block
		joined bool
	}{
		{"Caption", []rag.Block{para(2, "Simple uniform table")}, true},
		{"HeadingAndLeadIn", []rag.Block{{Kind: rag.BlockHeading, Level: 1, Page: 1, Text: "4. 제출 서류"}, para(2, "다음 서류를 제출합니다.")}, true},
		{"OtherPage", []rag.Block{para(1, "Simple uniform table")}, false},
		{"LongText", []rag.Block{para(2, strings.Repeat("A paragraph that says a good deal before the table. ", 6))}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex := &rag.Extracted{Blocks: append(append([]rag.Block{}, tc.before...), table, para(2, "After the table."))}
			chunks := Split(ex, opt)
			checkChunks(t, ex, opt, chunks)
			last := tc.before[len(tc.before)-1].Text
			var with []string
			for _, c := range chunks {
				if strings.Contains(c.Text, table.Text) {
					with = append(with, c.Text)
				}
			}
			if len(with) != 1 {
				t.Fatalf("the table is in %d chunks: %q", len(with), chunkTexts(chunks))
			}
			if got := strings.Contains(with[0], last+"\n\n"+table.Text); got != tc.joined {
				t.Errorf("table chunk %q holds %q before the table: %v, want %v", with[0], last, got, tc.joined)
			}
			if tc.joined && slices.ContainsFunc(chunks, func(c rag.Chunk) bool { return c.Text == last }) {
				t.Errorf("the caption is still a chunk of its own: %q", chunkTexts(chunks))
			}
		})
	}
}

func TestSplitTableLongRow(t *testing.T) {
	t.Parallel()
	table := markdownTable([]string{"name", "description"}, [][]string{
		{"a", "short"},
		{"b", strings.TrimSpace(strings.Repeat("a very long description ", 30))},
	})
	ex := &rag.Extracted{Blocks: []rag.Block{table}}
	opt := Options{Size: 200}
	chunks := Split(ex, opt)
	checkChunks(t, ex, opt, chunks)
	if len(chunks) < 3 {
		t.Fatalf("got %d chunks, want the long row cut into several", len(chunks))
	}
	for i, c := range chunks {
		if !strings.HasPrefix(c.Text, "| name | description |\n| --- | --- |\n") {
			t.Errorf("piece %d lacks the header: %q", i, c.Text)
		}
	}
}

func TestSplitCode(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 8 {
		fmt.Fprintf(&b, "func f%d(x int) int {\n\treturn x * %d\n}\n", i, i)
		if i%2 == 1 {
			b.WriteString("\n")
		}
	}
	code := strings.TrimSpace(b.String())
	ex := &rag.Extracted{Blocks: []rag.Block{head(1, "Code"), {Kind: rag.BlockCode, Text: code}}}
	opt := Options{Size: 100}
	chunks := Split(ex, opt)
	checkChunks(t, ex, opt, chunks)
	if len(chunks) < 3 {
		t.Fatalf("got %d chunks, want several", len(chunks))
	}
	for i, c := range chunks {
		if c.Kind != rag.KindCode || c.Section != "Code" {
			t.Errorf("chunk %d: kind %s section %q", i, c.Kind, c.Section)
		}
		if !strings.HasPrefix(c.Text, "func ") || !strings.HasSuffix(c.Text, "}") {
			t.Errorf("chunk %d is not whole functions: %q", i, c.Text)
		}
	}
}

func TestSplitEmpty(t *testing.T) {
	t.Parallel()
	if got := Split(&rag.Extracted{}, Options{}); len(got) != 0 {
		t.Errorf("empty document → %d chunks", len(got))
	}
	if got := Split(&rag.Extracted{Blocks: []rag.Block{para(1, "  "), para(1, "")}}, Options{}); len(got) != 0 {
		t.Errorf("blank document → %d chunks", len(got))
	}
}

func TestOptionsWithDefaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want Options
	}{
		{Options{}, Options{Size: DefaultSize, Overlap: DefaultOverlap, MinSection: DefaultSize / 4}},
		{Options{Size: 100, Overlap: 90}, Options{Size: 100, Overlap: 50, MinSection: 25}},
		{Options{Size: 100, Overlap: -1, MinSection: -1}, Options{Size: 100, Overlap: 0, MinSection: -1}},
	}
	for _, tt := range tests {
		if got := tt.in.WithDefaults(); got != tt.want {
			t.Errorf("%+v.WithDefaults() = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestSplitTableTwoHeaderRows(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("| 구분 | 2023 | 2024 |\n| --- | --- | --- |\n| (단위) | 억원 | 억원 |")
	for i := range 30 {
		fmt.Fprintf(&b, "\n| 항목 %d | %d | %d |", i, i*10, i*11)
	}
	table := rag.Block{Kind: rag.BlockTable, Page: 4, Text: b.String(), HeaderRows: 2}
	ex := &rag.Extracted{Blocks: []rag.Block{table}}
	opt := Options{Size: 200}
	chunks := Split(ex, opt)
	checkChunks(t, ex, opt, chunks)
	if len(chunks) < 3 {
		t.Fatalf("got %d chunks, want several", len(chunks))
	}
	for i, c := range chunks {
		if !strings.HasPrefix(c.Text, "| 구분 | 2023 | 2024 |\n| --- | --- | --- |\n| (단위) | 억원 | 억원 |\n| 항목 ") {
			t.Errorf("piece %d does not start with both header rows: %q", i, c.Text)
		}
	}
}

// BenchmarkSplit splits about 800,000 characters of the seed documents (the size of handbook-872p.docx).
func BenchmarkSplit(b *testing.B) {
	var blocks []rag.Block
	files, _ := filepath.Glob("../../../shared/seeds/0*.txt")
	for len(blocks) == 0 || runeTotal(blocks) < 800_000 {
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				b.Fatal(err)
			}
			blocks = append(blocks, markdownBlocks(string(data))...)
		}
	}
	ex := &rag.Extracted{Blocks: blocks}
	b.ReportAllocs()
	for b.Loop() {
		Split(ex, Options{})
	}
	b.ReportMetric(float64(runeTotal(blocks)), "chars/op")
}

func runeTotal(blocks []rag.Block) int {
	n := 0
	for _, bl := range blocks {
		n += utf8.RuneCountInString(bl.Text)
	}
	return n
}

// A chunk at least half full ends at a page break (and the next starts there without overlap); a shorter
// one runs on into the next page, but for the first page, which is a chunk of its own (a title page).
func TestSplitEndsAtPageBreak(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("첫 쪽의 문장은 여기에서 이어진다. ", 4) // 80 runes
	ex := &rag.Extracted{Pages: 3, Blocks: []rag.Block{
		para(1, long),
		para(2, "둘째 쪽의 첫 문장이다. 둘째 쪽의 둘째 문장이다."),
		para(2, strings.Repeat("둘째 쪽은 짧은 문장으로 끝난다. ", 3)),
		para(3, "셋째 쪽의 문장이다."),
	}}
	opt := Options{Size: 150, Overlap: 40}
	chunks := Split(ex, opt)
	checkChunks(t, ex, opt, chunks)
	var spans []string
	for _, c := range chunks {
		spans = append(spans, fmt.Sprintf("%d-%d", c.PageStart, c.PageEnd))
	}
	// Page 1 fills over half a chunk: it ends there. Page 2 (86 runes) is over half a chunk too.
	if got := strings.Join(spans, " "); got != "1-1 2-2 3-3" {
		t.Errorf("page spans %s, want 1-1 2-2 3-3", got)
	}
	if !strings.HasPrefix(chunks[1].Text, "둘째 쪽의 첫 문장이다.") {
		t.Errorf("second chunk repeats the previous page: %q", chunks[1].Text)
	}
	small := &rag.Extracted{Pages: 3, Blocks: []rag.Block{para(1, "표지."), para(2, "짧은 둘째 쪽이다."), para(3, "셋째 쪽이다.")}}
	c := Split(small, opt)
	if len(c) != 2 || c[1].PageStart != 2 || c[1].PageEnd != 3 {
		t.Errorf("a short page should run on into the next: %+v", c)
	}
	// … but for the first, a title page.
	if len(c) == 0 || c[0].Text != "표지." {
		t.Errorf("the first page should be a chunk of its own: %+v", c)
	}
}
