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

// gridPDF draws a ruled table: horizontal rules at ys across xs[0]..xs[last] (but for the rules listed in
// gaps, which leave the first column open: a cell spanning two rows there), vertical rules at xs, and the
// texts at their positions. Mode "rects" draws the vertical rules as thin filled rectangles instead of
// lines; "boxes" draws every cell as a stroked rectangle instead of rules (the spanning cell as one).
func gridPDF(xs, ys []int, gaps []int, texts map[[2]int]string, mode string) []byte {
	var c strings.Builder
	c.WriteString("0.5 w\n")
	for at, t := range texts {
		fmt.Fprintf(&c, "BT /F1 10 Tf 1 0 0 1 %d %d Tm (%s) Tj ET\n", at[0], at[1], t)
	}
	if mode == "boxes" {
		for r := 0; r+1 < len(ys); r++ {
			for k := 0; k+1 < len(xs); k++ {
				if k == 0 && slices.Contains(gaps, ys[r]) {
					continue // drawn with the cell above
				}
				bottom := ys[r+1]
				if k == 0 && r+2 < len(ys) && slices.Contains(gaps, ys[r+1]) {
					bottom = ys[r+2]
				}
				fmt.Fprintf(&c, "%d %d %d %d re S\n", xs[k], bottom, xs[k+1]-xs[k], ys[r]-bottom)
			}
		}
		return hostile.PDF(strings.NewReader(c.String()))
	}
	for _, y := range ys {
		x0 := xs[0]
		if slices.Contains(gaps, y) {
			x0 = xs[1]
		}
		fmt.Fprintf(&c, "%d %d m %d %d l S\n", x0, y, xs[len(xs)-1], y)
	}
	for _, x := range xs {
		if mode == "rects" {
			fmt.Fprintf(&c, "%d %d 0.6 %d re f\n", x, ys[len(ys)-1], ys[0]-ys[len(ys)-1])
			continue
		}
		fmt.Fprintf(&c, "%d %d m %d %d l S\n", x, ys[0], x, ys[len(ys)-1])
	}
	return hostile.PDF(strings.NewReader(c.String()))
}

func tableBlocks(x *rag.Extracted, page int) []rag.Block {
	var out []rag.Block
	for _, b := range x.Blocks {
		if b.Kind == rag.BlockTable && (page == 0 || b.Page == page) {
			out = append(out, b)
		}
	}
	return out
}

// A ruled table reads row by row, a cell's wrapped lines together, whatever the heights of the cells'
// lines; a cell two rows tall (no rule under it in its column) holds its text once, in its top row.
func TestPDF_RuledTableCells(t *testing.T) {
	xs := []int{72, 172, 272, 372}
	ys := []int{700, 670, 630, 600}
	texts := map[[2]int]string{
		{80, 682}: "Team", {180, 682}: "Member", {280, 682}: "Work",
		{80, 646}: "Storage", {180, 646}: "Alice", {280, 656}: "writes the", {280, 644}: "page cache",
		{180, 611}: "Bob", {280, 611}: "tests",
	}
	want := [][]string{{"Team", "Member", "Work"}, {"Storage", "Alice", "writes the page cache"}, {"", "Bob", "tests"}}
	for _, mode := range []string{"lines", "rects", "boxes"} {
		t.Run(mode, func(t *testing.T) {
			x, err := shared.Extract(context.Background(), "grid.pdf", gridPDF(xs, ys, []int{630}, texts, mode))
			if err != nil {
				t.Fatal(err)
			}
			tables := tableBlocks(x, 1)
			if len(tables) != 1 {
				t.Fatalf("%d tables, want 1; blocks %+v", len(tables), x.Blocks)
			}
			if got := tables[0].Rows; !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("rows %q, want %q", got, want)
			}
		})
	}
}

// A frame round text (one column) is not a table, and text outside a grid stays outside it, in order.
func TestPDF_RuledTableAmongText(t *testing.T) {
	var c strings.Builder
	c.WriteString("0.5 w 72 500 m 372 500 l S 72 400 m 372 400 l S 72 500 m 72 400 l S 372 500 m 372 400 l S\n")
	c.WriteString("BT /F1 10 Tf 1 0 0 1 80 450 Tm (A framed note.) Tj ET\n")
	c.WriteString("BT /F1 10 Tf 1 0 0 1 72 720 Tm (Before the table.) Tj ET\n")
	c.WriteString("0.5 w 72 700 m 272 700 l S 72 680 m 272 680 l S 72 660 m 272 660 l S\n")
	c.WriteString("72 700 m 72 660 l S 172 700 m 172 660 l S 272 700 m 272 660 l S\n")
	c.WriteString("BT /F1 10 Tf 1 0 0 1 80 686 Tm (k1) Tj 100 0 Td (v1) Tj ET\n")
	c.WriteString("BT /F1 10 Tf 1 0 0 1 80 666 Tm (k2) Tj 100 0 Td (v2) Tj ET\n")
	c.WriteString("BT /F1 10 Tf 1 0 0 1 72 600 Tm (After the table.) Tj ET\n")
	x, err := shared.Extract(context.Background(), "among.pdf", hostile.PDF(strings.NewReader(c.String())))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range x.Blocks {
		if b.Kind == rag.BlockTable {
			got = append(got, fmt.Sprint(b.Rows))
			continue
		}
		got = append(got, b.Text)
	}
	want := []string{"Before the table.", "[[k1 v1] [k2 v2]]", "After the table.", "A framed note."}
	if !slices.Equal(got, want) {
		t.Errorf("blocks %q, want %q", got, want)
	}
}

// The ruled tables of the Korean minutes (pages 18–19: two tables side by side on each page, cells of
// several lines set at different heights) come out as tables whose rows hold one law each, in order, the
// left table before the right.
func TestPDF_MinutesRuledTables(t *testing.T) {
	x := extractFixture(t, "pdf/assembly_minutes_21_414_1_env_labor.pdf")
	tables := tableBlocks(x, 18)
	if len(tables) != 2 {
		t.Fatalf("page 18: %d tables, want 2", len(tables))
	}
	header := []string{"구분", "공포번호", "행정입법명", "소관부처", "공포일자"}
	for _, tc := range []struct {
		table int
		row   []string
	}{
		{0, []string{"대통령령", "제34045호", "대기환경보전법시행령일부개정령", "환경소관", "2023.12.26."}},
		{0, []string{"대통령령", "제34046호", "대기관리권역의대기환경개선에관한특별법시행령일부개정령", "환경소관", "2023.12.26."}},
		{0, []string{"대통령령", "제34258호", "규제재검토기한정비를위한16개법령의일부개정에관한대통령령※환경부소관2개(먹는물관리법시행령,야생생물보호및관리에관한법률시행령)해당", "환경소관", "2024.2.27."}},
		{1, []string{"대통령령", "제34290호", "실내공기질관리법시행령일부개정령", "환경소관", "2024.3.5."}},
		{1, []string{"대통령령", "제34292호", "폐기물처리시설설치촉진및주변지역지원등에관한법률시행령일부개정령", "환경소관", "2024.3.5."}},
	} {
		tb := tables[tc.table]
		if tb.HeaderRows != 1 || !slices.Equal(squashRow(tb.Rows[0]), header) {
			t.Errorf("table %d: header %q (%d rows)", tc.table, tb.Rows[0], tb.HeaderRows)
		}
		found := slices.ContainsFunc(tb.Rows, func(r []string) bool {
			return slices.Equal(squashRow(r), tc.row)
		})
		if !found {
			t.Errorf("table %d lacks row %q; rows:\n%q", tc.table, tc.row, tb.Rows)
		}
	}
	// Rows keep the order of the page.
	var nums []string
	for _, tb := range tables {
		for _, r := range tb.Rows[1:] {
			nums = append(nums, squashRow(r)[1])
		}
	}
	if !slices.IsSorted(nums) || len(nums) != 27 {
		t.Errorf("page 18 rows out of order or missing: %q", nums)
	}
}

// squashRow is a row's cells without white space (line joins inside a cell may or may not leave a space).
func squashRow(r []string) []string {
	out := make([]string, len(r))
	for i, c := range r {
		out[i] = strings.Join(strings.Fields(c), "")
	}
	return out
}

// A ruled table whose column rules run on past its last row rule (rows not ruled off, the body going on
// onto the next page) still reads as a table: its rows begin where every column starts a paragraph (a
// list item) at the same height, its header is the row ruled off at the top, and the next page's part
// (column rules only, no row rule) reads as the same table under the same header.
func TestPDF_RuledTableOpenAcrossPages(t *testing.T) {
	page := func(rules string, texts map[[2]int]string) *strings.Reader {
		var c strings.Builder
		c.WriteString("0.5 w\n" + rules)
		for at, s := range texts {
			fmt.Fprintf(&c, "BT /F1 10 Tf 1 0 0 1 %d %d Tm (%s) Tj ET\n", at[0], at[1], s)
		}
		return strings.NewReader(c.String())
	}
	one := page("72 700 m 472 700 l S 72 680 m 472 680 l S 72 700 m 72 400 l S 272 700 m 272 400 l S 472 700 m 472 400 l S\n",
		map[[2]int]string{
			{80, 686}: "Old", {280, 686}: "New",
			{80, 660}: "1. The first old rule", {80, 648}: "goes on here.", {280, 660}: "1. The first new rule", {280, 648}: "also goes on.",
			{80, 630}: "2. Second old rule", {280, 630}: "2. Second new rule",
			{72, 380}: "Below the table.",
		})
	two := page("72 750 m 72 500 l S 272 750 m 272 500 l S 472 750 m 472 500 l S\n",
		map[[2]int]string{
			{80, 730}: "3. Third old rule", {280, 730}: "3. Third new rule", {280, 718}: "with more.",
			{80, 700}: "4. Fourth old rule", {280, 700}: "4. Fourth new rule",
		})
	x, err := shared.Extract(context.Background(), "open.pdf", hostile.PDF(one, two))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		page int
		want [][]string
	}{
		{1, [][]string{{"Old", "New"}, {"1. The first old rule goes on here.", "1. The first new rule also goes on."}, {"2. Second old rule", "2. Second new rule"}}},
		{2, [][]string{{"Old", "New"}, {"3. Third old rule", "3. Third new rule with more."}, {"4. Fourth old rule", "4. Fourth new rule"}}},
	} {
		tables := tableBlocks(x, tc.page)
		if len(tables) != 1 {
			t.Fatalf("page %d: %d tables, want 1; blocks %+v", tc.page, len(tables), x.Blocks)
		}
		if got := tables[0].Rows; !slices.EqualFunc(got, tc.want, slices.Equal) || tables[0].HeaderRows != 1 {
			t.Errorf("page %d: rows %q (header %d), want %q (header 1)", tc.page, got, tables[0].HeaderRows, tc.want)
		}
	}
	if !slices.ContainsFunc(x.Blocks, func(b rag.Block) bool { return b.Page == 1 && b.Text == "Below the table." }) {
		t.Errorf("text below the column rules lost: %+v", x.Blocks)
	}
}

// The bill's comparison table of old and new text (신·구조문대비표, pages 7–10) has a ruled header and
// column rules but no rule under its last row on any page: it reads as one table per page, each under
// the header 현행 | 개정안, a row per article, paragraph or new item, the old text beside the new.
func TestPDF_BillComparisonTable(t *testing.T) {
	x := extractFixture(t, "pdf/bill_2125318_original.pdf")
	header := []string{"현행", "개정안"}
	for _, tc := range []struct {
		page int
		row  []string
	}{
		{7, []string{"제15조(2050탄소중립녹색성장위원회의설치)1∼4(생략)", "제15조(2050탄소중립녹색성장위원회의설치)1∼4(현행과같음)"}},
		{7, []string{"<신설>", "2.「노동조합및노동관계조정법」제10조제2항에따른총연합단체,전국적규모의산업별연합단체및산업별노동조합"}},
		{8, []string{"<신설>", "5.「비영리민간단체지원법」제2조에따른비영리민간단체"}},
		{8, []string{"6∼9(생략)", "6∼9(현행과같음)"}},
		{9, []string{"<신설>", "1.아동·청년·여성을각각대표할수있는대통령령으로정하는요건을갖춘전국적규모의단체"}},
		{10, []string{"4(생략)", "4(현행과같음)"}},
	} {
		tables := tableBlocks(x, tc.page)
		if len(tables) != 1 {
			t.Errorf("page %d: %d tables, want 1", tc.page, len(tables))
			continue
		}
		tb := tables[0]
		if tb.HeaderRows != 1 || !slices.Equal(squashRow(tb.Rows[0]), header) {
			t.Errorf("page %d: header %q (%d rows)", tc.page, tb.Rows[0], tb.HeaderRows)
		}
		if !slices.ContainsFunc(tb.Rows, func(r []string) bool { return slices.Equal(squashRow(r), tc.row) }) {
			t.Errorf("page %d lacks row %q; rows:\n%q", tc.page, tc.row, tb.Rows)
		}
	}
	// The review report quotes the table: on its page 6 the column of old text holds only `<신 설>`s, far
	// apart; each is still a row of its own, beside its new item.
	var items []string
	for _, tb := range tableBlocks(extractFixture(t, "pdf/bill_2125318_review_report.pdf"), 6) {
		for _, r := range tb.Rows {
			if squashRow(r)[0] == "<신설>" {
				items = append(items, strings.SplitN(r[1], " ", 2)[0])
			}
		}
	}
	if want := []string{"2.", "3.", "4.", "5."}; !slices.Equal(items, want) {
		t.Errorf("review report p. 6: rows of <신 설> begin %q, want %q", items, want)
	}
}
