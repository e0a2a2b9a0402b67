package extract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/hostile"
	"github.com/ragd/ragd/internal/rag"
)

// fixtures is ../shared/fixtures relative to the repository root (three levels up from this package).
var fixtures = filepath.Join("..", "..", "..", "shared", "fixtures")

var koreanPDFs = []string{
	"pdf/bill_2125318_original.pdf",
	"pdf/bill_2125318_review_report.pdf",
	"pdf/assembly_minutes_21_414_1_env_labor.pdf",
}

// shared is one Extractor for the whole package's tests, as a server has: starting PDFium takes seconds.
// noOCR is one with OCR off, for the fuzz targets (its PDF runtime starts on its first PDF).
var shared, noOCR *Extractor

func TestMain(m *testing.M) {
	var err error
	shared, err = New(Options{})
	if err != nil {
		panic(err)
	}
	noOCR, err = New(Options{OCR: OCROptions{Mode: OCROff}})
	if err != nil {
		panic(err)
	}
	code := m.Run()
	for _, e := range []*Extractor{shared, noOCR} {
		if err := e.Close(); err != nil && code == 0 {
			panic(err)
		}
	}
	os.Exit(code)
}

func readFixture(t testing.TB, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtures, rel))
	if err != nil {
		t.Fatalf("fixture %s: %v (fixtures live in ../shared/fixtures next to the repository)", rel, err)
	}
	return data
}

var (
	cacheMu sync.Mutex
	cache   = map[string]*rag.Extracted{}
)

// extractFixture extracts a fixture once per test binary; several tests look at the same PDFs.
func extractFixture(t testing.TB, rel string) *rag.Extracted {
	t.Helper()
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if x, ok := cache[rel]; ok {
		return x
	}
	x, err := shared.Extract(context.Background(), rel, readFixture(t, rel))
	if err != nil {
		t.Fatalf("extract %s: %v", rel, err)
	}
	cache[rel] = x
	return x
}

func TestExtract_EveryFixture(t *testing.T) {
	var files []string
	err := filepath.WalkDir(fixtures, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(fixtures, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatalf("walk fixtures: %v", err)
	}
	if len(files) < 15 {
		t.Fatalf("found %d fixture files, want the full set", len(files))
	}
	for _, rel := range files {
		t.Run(rel, func(t *testing.T) {
			x := extractFixture(t, rel)
			if x.MediaType != MediaType(rel, nil) {
				t.Errorf("media type %q, want %q", x.MediaType, MediaType(rel, nil))
			}
			chars := 0
			for i, b := range x.Blocks {
				if !utf8.ValidString(b.Text) || strings.TrimSpace(b.Text) == "" {
					t.Fatalf("block %d: empty or invalid text %q", i, b.Text)
				}
				if strings.ContainsAny(b.Text, "\u318D\u2027") {
					t.Errorf("block %d keeps a non-standard middle dot: %q", i, b.Text)
				}
				if x.MediaType == MediaPDF && (b.Page < 1 || b.Page > x.Pages) {
					t.Errorf("block %d: page %d outside 1..%d", i, b.Page, x.Pages)
				}
				if b.Kind == rag.BlockTable && (len(b.Rows) == 0 || b.HeaderRows > len(b.Rows)) {
					t.Errorf("block %d: table with %d rows and %d header rows", i, len(b.Rows), b.HeaderRows)
				}
				chars += utf8.RuneCountInString(b.Text)
			}
			if chars < 200 {
				t.Errorf("only %d characters extracted", chars)
			}
		})
	}
}

// squash is the comparison form of text: normalised like our output, without any whitespace.
func squash(s string) string {
	return strings.Join(strings.Fields(normText(s)), "")
}

func pageText(x *rag.Extracted, page int) string {
	var b strings.Builder
	for _, bl := range x.Blocks {
		if text := bl.TextOn(page); text != "" {
			b.WriteString(text)
			b.WriteString("\n")
		}
	}
	return b.String()
}

var wideGapRe = regexp.MustCompile(`\s{2,}`)

// TestPDF_PagesMatchPdftotext checks every page of each Korean PDF against poppler's pdftotext -layout:
// every word pdftotext shows on page N is on page N of our output (97% per page: we rejoin words pdftotext
// leaves wrapped, whitespace is ignored), and so are its phrases — runs of a line between wide gaps — 85%
// of them over the document and 40% on every page: a phrase that pdftotext's layout glues across two table
// columns cannot match our column-by-column reading of a table, nor, on a page with a ruled table (the
// minutes' last pages), our reading of whole cells row by row. Running headers, which we drop, are not counted.
func TestPDF_PagesMatchPdftotext(t *testing.T) {
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skip("pdftotext not installed (Debian poppler-utils); the test script installs it")
	}
	for _, rel := range koreanPDFs {
		x := extractFixture(t, rel)
		t.Run(filepath.Base(rel), func(t *testing.T) {
			running := runningLines(t, rel, x.Pages)
			var phrasesAll, foundAll, checked int
			for p := 1; p <= x.Pages; p++ {
				out, err := exec.Command("pdftotext", "-layout", "-f", strconv.Itoa(p), "-l", strconv.Itoa(p), filepath.Join(fixtures, rel), "-").Output()
				if err != nil {
					t.Fatalf("pdftotext: %v", err)
				}
				ours := squash(pageText(x, p))
				var words, phrases int
				var missingWords, missingPhrases []string
				for _, ln := range strings.Split(string(out), "\n") {
					if pageNumberRe.MatchString(ln) || running[digitsRe.ReplaceAllString(squash(ln), "#")] {
						continue
					}
					for _, piece := range wideGapRe.Split(strings.TrimSpace(ln), -1) {
						if q := squash(piece); utf8.RuneCountInString(q) >= 6 {
							phrases++
							if !strings.Contains(ours, q) {
								missingPhrases = append(missingPhrases, piece)
							}
						}
						for _, w := range strings.Fields(piece) {
							if q := squash(w); utf8.RuneCountInString(q) >= 2 {
								words++
								if !strings.Contains(ours, q) {
									missingWords = append(missingWords, w)
								}
							}
						}
					}
				}
				if words < 5 {
					continue // a blank or nearly blank page
				}
				checked++
				phrasesAll += phrases
				foundAll += phrases - len(missingPhrases)
				if float64(len(missingWords)) > 0.03*float64(words) {
					t.Errorf("page %d: %d of %d pdftotext words missing: %q", p, len(missingWords), words, missingWords)
				}
				// A page that is mostly tables is read cell by cell: pdftotext's phrases there are pieces of
				// several cells glued by single spaces, which no reading in rows of whole cells has; its
				// words must still all be there.
				var tableChars, allChars int
				for _, b := range x.Blocks {
					if text := b.TextOn(p); text != "" {
						n := utf8.RuneCountInString(text)
						allChars += n
						if b.Kind == rag.BlockTable {
							tableChars += n
						}
					}
				}
				if 2*tableChars < allChars && float64(len(missingPhrases)) > 0.6*float64(phrases) {
					t.Errorf("page %d: %d of %d pdftotext phrases missing: %q", p, len(missingPhrases), phrases, missingPhrases)
				}
			}
			t.Logf("%d pages checked; %d of %d pdftotext phrases found on their page", checked, foundAll, phrasesAll)
			if checked < x.Pages/2 || float64(foundAll) < 0.85*float64(phrasesAll) {
				t.Errorf("%d pages checked, %d of %d phrases found", checked, foundAll, phrasesAll)
			}
		})
	}
}

// runningLines returns the pdftotext lines (squashed, digits masked) that recur on at least half of the
// pages: running headers and footers.
func runningLines(t *testing.T, rel string, pages int) map[string]bool {
	t.Helper()
	out, err := exec.Command("pdftotext", "-layout", filepath.Join(fixtures, rel), "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	count := map[string]int{}
	for _, page := range strings.Split(string(out), "\f") {
		seen := map[string]bool{}
		for _, ln := range strings.Split(page, "\n") {
			if k := digitsRe.ReplaceAllString(squash(ln), "#"); k != "" && !seen[k] {
				seen[k] = true
				count[k]++
			}
		}
	}
	running := map[string]bool{}
	for k, n := range count {
		if n >= max(3, pages/2) {
			running[k] = true
		}
	}
	return running
}

func TestPDF_KoreanWrappedWordsRejoined(t *testing.T) {
	x := extractFixture(t, "pdf/bill_2125318_original.pdf")
	p1 := pageText(x, 1)
	// pdftotext -layout shows "탄소중" at the end of one line and "립기본계획" at the start of the next.
	for _, want := range []string{"탄소중립기본계획 및 주요 정책", "민주적 참여", "탄소중립·녹색성장"} {
		if !strings.Contains(p1, want) {
			t.Errorf("page 1 lacks %q:\n%s", want, p1)
		}
	}
	if strings.Contains(p1, "탄소중 립") || strings.Contains(p1, "탄소중\n립") {
		t.Errorf("page 1 still splits 탄소중립:\n%s", p1)
	}
}

var footerRe = regexp.MustCompile(`(?m)^\s*-\s*\d+\s*-\s*$|-\s\d+\s-`)

func TestPDF_RunningHeadersFootersDropped(t *testing.T) {
	for _, rel := range koreanPDFs {
		x := extractFixture(t, rel)
		for _, b := range x.Blocks {
			if footerRe.MatchString(b.Text) {
				t.Errorf("%s page %d keeps a page footer: %q", rel, b.Page, b.Text)
			}
		}
	}
	x := extractFixture(t, "pdf/federal-register-2020-17221.pdf")
	for _, b := range x.Blocks {
		if strings.Contains(b.Text, "Federal Register / Vol. 85, No. 152") {
			t.Errorf("page %d keeps the running header: %q", b.Page, b.Text)
		}
	}
}

func TestPDF_MultiColumnReadInOrder(t *testing.T) {
	x := extractFixture(t, "pdf/federal-register-2020-17221.pdf")
	// Page 2 is set in three columns; a sentence that wraps inside the first column must come out whole.
	want := "Investigation of the accident has been completed by the Indonesian authorities"
	if !strings.Contains(pageText(x, 2), want) {
		t.Errorf("page 2 lacks %q:\n%s", want, pageText(x, 2))
	}
}

func TestPDF_TableRowsKept(t *testing.T) {
	x := extractFixture(t, "pdf/WARN-Report-for-7-1-2015-to-03-25-2016.pdf")
	var tables int
	for _, b := range x.Blocks {
		if b.Kind == rag.BlockTable {
			tables++
			if len(b.Rows[0]) < 3 {
				t.Errorf("page %d: table of %d columns", b.Page, len(b.Rows[0]))
			}
		}
	}
	if tables < 10 {
		t.Errorf("%d table blocks in a 16-page table, want one per page or so", tables)
	}
	if !strings.Contains(pageText(x, 1), "Maxim Integrated Product") {
		t.Errorf("page 1 lacks a company of the first row")
	}
}

// A forged gridSpan does not make a row of that many cells (it allocated 2×10⁹ strings before).
func TestDOCX_GridSpanBounded(t *testing.T) {
	doc := hostile.DOCXBody(`<w:tbl><w:tr><w:tc><w:tcPr><w:gridSpan w:val="2000000000"/></w:tcPr><w:p><w:r><w:t>a</w:t></w:r></w:p></w:tc>` +
		`<w:tc><w:p><w:r><w:t>b</w:t></w:r></w:p></w:tc></w:tr></w:tbl>`)
	x, err := shared.Extract(context.Background(), "span.docx", doc)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(x.Blocks[0].Rows[0]); n != maxTableCols+1 {
		t.Errorf("row of %d cells, want %d", n, maxTableCols+1)
	}
}

func TestDOCX_HeadingsAndTables(t *testing.T) {
	x := extractFixture(t, "docx/docx-tables.docx")
	var tables []rag.Block
	for _, b := range x.Blocks {
		if b.Kind == rag.BlockTable {
			tables = append(tables, b)
		}
	}
	// Four tables, one nested in a cell of another (its text is in that cell).
	if len(tables) != 3 {
		t.Fatalf("%d tables, want 3", len(tables))
	}
	want := [][]string{{"Header Col 1", "Header Col 2"}, {"Lorem ipsum", "A link example"}}
	if !reflect.DeepEqual(tables[0].Rows, want) || tables[0].HeaderRows != 1 {
		t.Errorf("first table rows %q header %d, want %q header 1", tables[0].Rows, tables[0].HeaderRows, want)
	}
	if !strings.HasPrefix(tables[0].Text, "| Header Col 1 | Header Col 2 |\n| --- | --- |\n") {
		t.Errorf("table markdown %q", tables[0].Text)
	}

	hb := extractFixture(t, "docx/handbook-872p.docx")
	levels := map[int]int{}
	var tableCount int
	var chars int
	for _, b := range hb.Blocks {
		chars += utf8.RuneCountInString(b.Text)
		if b.Kind == rag.BlockHeading {
			levels[b.Level]++
		}
		if b.Kind == rag.BlockTable {
			tableCount++
		}
	}
	if levels[1] < 5 || levels[2] < 10 {
		t.Errorf("heading levels %v, want chapters (1) and sections (2)", levels)
	}
	if !slices.ContainsFunc(hb.Blocks, func(b rag.Block) bool {
		return b.Kind == rag.BlockHeading && b.Level == 1 && b.Text == "CHAPTER 1 – INTRODUCTION"
	}) {
		t.Errorf("no level-1 heading CHAPTER 1 – INTRODUCTION")
	}
	if tableCount < 2 {
		t.Errorf("%d tables, want at least 2", tableCount)
	}
	if chars < 700_000 {
		t.Errorf("%d characters, the handbook has about 809k", chars)
	}
}

func TestHTML_MainContentAndTables(t *testing.T) {
	page := `<!doctype html><html><head><title>Prices &amp; terms</title><style>.x{color:red}</style>
<script>var tracking = "SCRIPT-TEXT";</script></head><body>
<header><a href="/">Home</a> SITE-HEADER</header><nav><ul><li>NAV-LINK</li></ul></nav>
<main><h1>Price list</h1><p>Our prices   for
 2024.</p><h3>Details</h3>
<table><thead><tr><th>Item</th><th>Price</th></tr></thead><tbody><tr><td>Tea</td><td>3</td></tr>
<tr><td colspan="2">Free water</td></tr></tbody></table>
<aside>ASIDE-TEXT</aside><pre>  indented
code</pre></main><footer>FOOTER-TEXT</footer></body></html>`
	x, err := shared.Extract(context.Background(), "prices.html", []byte(page))
	if err != nil {
		t.Fatal(err)
	}
	want := []rag.Block{
		{Kind: rag.BlockHeading, Level: 1, Text: "Price list"},
		{Kind: rag.BlockParagraph, Text: "Our prices for 2024."},
		{Kind: rag.BlockHeading, Level: 3, Text: "Details"},
		{Kind: rag.BlockTable, Rows: [][]string{{"Item", "Price"}, {"Tea", "3"}, {"Free water", ""}}, HeaderRows: 1,
			Text: "| Item | Price |\n| --- | --- |\n| Tea | 3 |\n| Free water |  |"},
		{Kind: rag.BlockCode, Text: "  indented\ncode"},
	}
	if x.Title != "Prices & terms" {
		t.Errorf("title %q", x.Title)
	}
	if !reflect.DeepEqual(x.Blocks, want) {
		t.Errorf("blocks\n%#v\nwant\n%#v", x.Blocks, want)
	}

	wiki := extractFixture(t, "html/en_wikipedia_mozilla.html")
	if wiki.Title != "Mozilla - Wikipedia" {
		t.Errorf("title %q", wiki.Title)
	}
	var all strings.Builder
	tables := 0
	for _, b := range wiki.Blocks {
		all.WriteString(b.Text + "\n")
		if b.Kind == rag.BlockTable {
			tables++
		}
	}
	for _, bad := range []string{"Navigation menu", "Personal tools", "mw.config", "[edit]"} {
		if strings.Contains(all.String(), bad) {
			t.Errorf("wikipedia text keeps %q", bad)
		}
	}
	if tables == 0 || !slices.ContainsFunc(wiki.Blocks, func(b rag.Block) bool {
		return b.Kind == rag.BlockHeading && b.Level == 2 && b.Text == "History"
	}) {
		t.Errorf("wikipedia: %d tables and no History heading", tables)
	}
}

func TestMarkdown_MDXTagsDropped(t *testing.T) {
	x := extractFixture(t, "md/ko_react_render-and-commit.md")
	if x.Title != "렌더링 그리고 커밋" {
		t.Errorf("title %q, want the front matter title", x.Title)
	}
	for _, b := range x.Blocks {
		if b.Kind == rag.BlockCode {
			continue
		}
		for _, bad := range []string{"<Intro", "</Intro>", "<Sandpack", "<Illustration", "{/*", "import ", "title:"} {
			if strings.Contains(b.Text, bad) {
				t.Errorf("%s block keeps %q: %q", b.Kind, bad, b.Text)
			}
		}
	}
	has := func(kind rag.BlockKind, level int, sub string) bool {
		return slices.ContainsFunc(x.Blocks, func(b rag.Block) bool {
			return b.Kind == kind && b.Level == level && strings.Contains(b.Text, sub)
		})
	}
	if !has(rag.BlockHeading, 2, "1단계: 렌더링 트리거") {
		t.Errorf("no level-2 heading 1단계: 렌더링 트리거")
	}
	if !has(rag.BlockParagraph, 0, "컴포넌트를 화면에 표시하기 이전에") {
		t.Errorf("the prose inside <Intro> is lost")
	}
	if !has(rag.BlockCode, 0, "import { createRoot } from 'react-dom/client';") {
		t.Errorf("imports inside fenced code are lost")
	}

	md := "---\ntitle: T\n---\nimport X from 'x';\n\n# Head\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n<Note>\nKept *prose*.\n</Note>\n"
	y, err := shared.Extract(context.Background(), "doc.mdx", []byte(md))
	if err != nil {
		t.Fatal(err)
	}
	want := []rag.Block{
		{Kind: rag.BlockHeading, Level: 1, Text: "Head"},
		{Kind: rag.BlockTable, Rows: [][]string{{"a", "b"}, {"1", "2"}}, HeaderRows: 1, Text: "| a | b |\n| --- | --- |\n| 1 | 2 |"},
		{Kind: rag.BlockParagraph, Text: "Kept prose."},
	}
	if !reflect.DeepEqual(y.Blocks, want) || y.Title != "T" || y.MediaType != MediaMDX {
		t.Errorf("got %q %s %#v", y.Title, y.MediaType, y.Blocks)
	}
}

func TestText_ParagraphsAndBOM(t *testing.T) {
	x, err := shared.Extract(context.Background(), "notes.txt", []byte("\xEF\xBB\xBFFirst line\nsame paragraph\n\n\nSecond ㆍ dot\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []rag.Block{{Kind: rag.BlockParagraph, Text: "First line\nsame paragraph"}, {Kind: rag.BlockParagraph, Text: "Second · dot"}}
	if !reflect.DeepEqual(x.Blocks, want) {
		t.Errorf("blocks %#v", x.Blocks)
	}
}

func TestCode_SplitAtTopLevelDeclarations(t *testing.T) {
	src := "package p\n\nimport \"fmt\"\n\n// A says hi.\nfunc A() {\n\tx := 1\n\n\tfmt.Println(x)\n}\n\nfunc B() {}\n"
	x, err := shared.Extract(context.Background(), "p.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range x.Blocks {
		if b.Kind != rag.BlockCode {
			t.Errorf("kind %s", b.Kind)
		}
		got = append(got, fmt.Sprintf("%s@%d %s", b.Symbol, b.Line, b.Text))
	}
	want := []string{"p@1 package p\n\nimport \"fmt\"", "p.A@5 // A says hi.\nfunc A() {\n\tx := 1\n\n\tfmt.Println(x)\n}", "p.B@12 func B() {}"}
	if !reflect.DeepEqual(got, want) || x.MediaType != "text/x-go" {
		t.Errorf("blocks %q (%s), want %q", got, x.MediaType, want)
	}
}

func TestMediaType(t *testing.T) {
	tests := []struct {
		name string
		data string
		want string
	}{
		{"a.PDF", "", MediaPDF},
		{"a.docx", "", MediaDOCX},
		{"a.HWPX", "", MediaHWPX},
		{"a.hwp", "", MediaHWP},
		{"a.xlsx", "", MediaXLSX},
		{"a.pptx", "", MediaPPTX},
		{"a.xls", "", ""},
		{"a.htm", "", MediaHTML},
		{"a.md", "", MediaMarkdown},
		{"a.mdx", "", MediaMDX},
		{"a.txt", "", MediaText},
		{"a.py", "", "text/x-python"},
		{"a.tsx", "", "text/x-tsx"},
		{"dir/Makefile", "", "text/x-makefile"},
		{"a.exe", "MZ", ""},
		{"a.png", "\x89PNG", ""},
		{"noext", "%PDF-1.7\n", MediaPDF},
		{"noext", "<!DOCTYPE html><html>", MediaHTML},
		{"noext", "just words", MediaText},
		{"noext", "\x00\x01\x02", ""},
	}
	for _, tt := range tests {
		if got := MediaType(tt.name, []byte(tt.data)); got != tt.want {
			t.Errorf("MediaType(%q, %q) = %q, want %q", tt.name, tt.data, got, tt.want)
		}
	}
	for name, want := range map[string]bool{"x.pdf": true, "x.go": true, "Dockerfile": true, "x.hwp": true, "x.hwpx": true, "x.xlsx": true, "x.pptx": true, "x.zip": false, "README": false} {
		if Supported(name) != want {
			t.Errorf("Supported(%q) = %v", name, !want)
		}
	}
}

func TestExtract_BadInput(t *testing.T) {
	small, err := New(Options{MaxBytes: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	testdata := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	tests := []struct {
		name    string
		ex      *Extractor
		file    string
		data    []byte
		code    rag.Code
		message string
	}{
		{"EmptyPDF", shared, "empty.pdf", nil, rag.CodeInvalid, "empty.pdf: empty file"},
		{"EmptyText", shared, "empty.txt", []byte{}, rag.CodeInvalid, "empty.txt: empty file"},
		{"CorruptPDF", shared, "garbage.pdf", []byte("%PDF-1.7\nthis is not a pdf at all\n"), rag.CodeInvalid, "garbage.pdf: corrupt PDF"},
		{"TruncatedPDF", shared, "truncated.pdf", testdata("truncated.pdf"), rag.CodeInvalid, "truncated.pdf: corrupt PDF"},
		{"EncryptedPDF", shared, "encrypted.pdf", testdata("encrypted.pdf"), rag.CodeInvalid, "encrypted.pdf: encrypted PDF"},
		{"NoTextLayer", shared, "scan.pdf", testdata("image-only.pdf"), rag.CodeInvalid, "scan.pdf: PDF has no text layer"},
		{"NotUTF8", shared, "latin1.txt", testdata("latin1.txt"), rag.CodeInvalid, "latin1.txt: text is not UTF-8, UTF-16 (with a byte-order mark) or EUC-KR/CP949"},
		{"NotUTF8Markdown", shared, "latin1.md", testdata("latin1.txt"), rag.CodeInvalid, "latin1.md: text is not UTF-8, UTF-16 (with a byte-order mark) or EUC-KR/CP949"},
		{"Unsupported", shared, "photo.jpg", []byte("\xFF\xD8\xFF\xE0"), rag.CodeUnsupportedMediaType, `photo.jpg: unsupported file type ".jpg"`},
		{"CorruptDOCX", shared, "x.docx", []byte("PK\x03\x04 broken"), rag.CodeInvalid, "x.docx: corrupt DOCX"},
		{"OverLimit", small, "big.txt", bytes.Repeat([]byte("a"), 21), rag.CodePayloadTooLarge, "big.txt: file is 21 bytes, over the limit of 20 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, err := tt.ex.Extract(context.Background(), filepath.Join("some", "dir", tt.file), tt.data)
			if err == nil {
				t.Fatalf("no error; extracted %#v", x)
			}
			var re *rag.Error
			if !errors.As(err, &re) {
				t.Fatalf("error %v is not a *rag.Error", err)
			}
			if re.Code != tt.code || !strings.HasPrefix(re.Message, tt.message) {
				t.Errorf("got %s %q, want %s %q…", re.Code, re.Message, tt.code, tt.message)
			}
		})
	}
	t.Run("AtLimit", func(t *testing.T) {
		x, err := small.Extract(context.Background(), "ok.txt", bytes.Repeat([]byte("a"), 20))
		if err != nil || len(x.Blocks) != 1 {
			t.Fatalf("a file of exactly MaxBytes: %v", err)
		}
	})
	t.Run("GoodSmallPDF", func(t *testing.T) {
		x, err := shared.Extract(context.Background(), "text.pdf", testdata("text.pdf"))
		if err != nil || x.Pages != 1 || len(x.Blocks) != 1 || x.Blocks[0].Text != "Secret quarterly numbers" {
			t.Fatalf("text.pdf (the source of the encrypted one): %v %#v", err, x)
		}
	})
}

func TestPDF_Timeout(t *testing.T) {
	e, err := New(Options{Limits: Limits{Timeout: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	_, err = e.Extract(context.Background(), "minutes.pdf", readFixture(t, "pdf/assembly_minutes_21_414_1_env_labor.pdf"))
	if rag.ErrorCode(err) != rag.CodeTooComplex || !strings.Contains(rag.ErrorMessage(err), "minutes.pdf: took longer than 1ms to extract (limit RAGD_EXTRACT_TIMEOUT)") {
		t.Fatalf("got %v, want a timeout naming the file", err)
	}
	// The next file gets a fresh worker: the timed-out one was discarded, not returned half-used. A one-page
	// PDF may finish inside 1ms on a fast machine (CI did) or time out at the same place with the same
	// message; either shows a working instance, while a broken one errs otherwise or returns wrong text.
	x, err := e.Extract(context.Background(), "text.pdf", mustRead(t, "testdata/text.pdf"))
	switch {
	case err == nil:
		if x.Pages != 1 || len(x.Blocks) != 1 || x.Blocks[0].Text != "Secret quarterly numbers" {
			t.Fatalf("second file extracted wrongly: %#v", x)
		}
	case rag.ErrorCode(err) != rag.CodeTooComplex || !strings.Contains(rag.ErrorMessage(err), "text.pdf: took longer"):
		t.Fatalf("second file: got %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := shared.Extract(ctx, "x.pdf", readFixture(t, "pdf/senate-expenditures.pdf")); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled ctx: got %v", err)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestPDF_Concurrent extracts two PDFs from several goroutines at once through one Extractor (run with
// -race) and checks every result equals the sequential one.
func TestPDF_Concurrent(t *testing.T) {
	files := []string{"pdf/bill_2125318_original.pdf", "pdf/senate-expenditures.pdf"}
	want := map[string]*rag.Extracted{}
	for _, f := range files {
		want[f] = extractFixture(t, f)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 6 {
		f := files[i%len(files)]
		data := readFixture(t, f)
		wg.Go(func() {
			x, err := shared.Extract(context.Background(), f, data)
			if err != nil {
				errs <- err
				return
			}
			if !reflect.DeepEqual(x, want[f]) {
				errs <- errors.New(f + ": concurrent result differs from the sequential one")
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func benchmarkFile(b *testing.B, rel string) {
	data := readFixture(b, rel)
	ctx := context.Background()
	if _, err := shared.Extract(ctx, rel, data); err != nil { // warm the PDF runtime
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := shared.Extract(ctx, rel, data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExtract(b *testing.B) {
	// The HWPX and HWP fixtures of ../shared/formats, by a path from ../shared/fixtures.
	formats := []string{"../formats/hwpx/gangbuk-rfp-2023.hwpx", "../formats/hwp/table.hwp"}
	for _, rel := range append(slices.Clone(koreanPDFs), append(formats, "docx/handbook-872p.docx")...) {
		b.Run(filepath.Base(rel), func(b *testing.B) { benchmarkFile(b, rel) })
	}
}

// BenchmarkPDFPages extracts every PDF of ../shared/fixtures one after another on one goroutine (PDFium
// already started) and reports pages per second of wall time and per second of the process's CPU time
// (the rate of one core whatever else runs on the machine), reading characters through the direct
// function handles (direct) and through go-pdfium's own calls (go-pdfium, the way before them).
//
//	go test -run '^$' -bench PDFPages -benchtime 3x ./internal/extract/
func BenchmarkPDFPages(b *testing.B) {
	paths, err := filepath.Glob(filepath.Join(fixtures, "pdf", "*.pdf"))
	if err != nil || len(paths) == 0 {
		b.Fatalf("no PDF fixture: %v", err)
	}
	data := make([][]byte, len(paths))
	for i, p := range paths {
		if data[i], err = os.ReadFile(p); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	if _, err := shared.Extract(ctx, paths[0], data[0]); err != nil { // warm the PDF runtime
		b.Fatal(err)
	}
	for _, mode := range []string{"direct", "go-pdfium"} {
		b.Run(mode, func(b *testing.B) {
			slowCharReads = mode == "go-pdfium"
			defer func() { slowCharReads = false }()
			pages := 0
			start, cpu := time.Now(), cpuTime()
			for b.Loop() {
				for i, p := range paths {
					got, err := shared.Extract(ctx, filepath.Base(p), data[i])
					if err != nil {
						b.Fatal(err)
					}
					pages += got.Pages
				}
			}
			b.ReportMetric(float64(pages)/time.Since(start).Seconds(), "pages/s")
			b.ReportMetric(float64(pages)/(cpuTime()-cpu).Seconds(), "pages/cpu-s")
		})
	}
}

// cpuTime is the CPU time the process has used (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
