package chunk

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/rag"
)

// A chunk that crosses pages records where each page's sentences start, so that a sentence of it gives its
// own page; a chunk on one page records nothing.
func TestSplitPageBreaks(t *testing.T) {
	// Pages 2–4: the first page is a chunk of its own (a title page).
	ex := &rag.Extracted{Pages: 4, Blocks: []rag.Block{
		{Kind: rag.BlockParagraph, Page: 2, Text: "The harbour opened in 1901. Its pier is stone."},
		{Kind: rag.BlockParagraph, Page: 3, Text: "The keeper retired in 1987."},
		{Kind: rag.BlockParagraph, Page: 3, Text: "A lamp replaced him."},
		{Kind: rag.BlockParagraph, Page: 4, Text: "The museum opened in 2001."},
	}}
	cs := Split(ex, Options{})
	if len(cs) != 1 {
		t.Fatalf("%d chunks, want 1", len(cs))
	}
	c := cs[0]
	if c.PageStart != 2 || c.PageEnd != 4 {
		t.Fatalf("pages %d–%d", c.PageStart, c.PageEnd)
	}
	at := func(s string) int { return utf8.RuneCountInString(c.Text[:strings.Index(c.Text, s)]) }
	want := []rag.PageBreak{{Offset: 0, Page: 2}, {Offset: at("The keeper"), Page: 3}, {Offset: at("The museum"), Page: 4}}
	if !slices.Equal(c.PageBreaks, want) {
		t.Fatalf("page breaks %v, want %v", c.PageBreaks, want)
	}
	checkPagesOf(t, c, []sentencePages{
		{"Its pier is stone.", 2, 2},
		{"The keeper retired in 1987.", 3, 3},
		{"A lamp replaced him.", 3, 3},
		{"The museum opened in 2001.", 4, 4},
		{"Its pier is stone.\n\nThe keeper", 2, 3},
	})
	one := Split(&rag.Extracted{Pages: 1, Blocks: ex.Blocks[:1]}, Options{})
	if len(one) != 1 || one[0].PageBreaks != nil {
		t.Errorf("a chunk on one page: %+v", one)
	}
	if got, err := rag.DecodePageBreaks(rag.EncodePageBreaks(c.PageBreaks)); err != nil || !slices.Equal(got, c.PageBreaks) {
		t.Errorf("encoded and decoded: %v %v", got, err)
	}
	if _, err := rag.DecodePageBreaks("0:1,x"); err == nil {
		t.Error("a bad pair decodes")
	}
}

// A paragraph that runs on across a page break (rag.Block.PageTurns) makes a chunk of both pages whose page
// breaks fall inside the sentence that turns the page; a chunk half full when such a sentence comes ends
// before it, so that the sentence opens the next page's chunk whole.
func TestSplitParagraphAcrossPages(t *testing.T) {
	text := "The harbour opened in 1901. Its pier runs from the old town to the lighthouse on the point. The keeper retired in 1987."
	turn := utf8.RuneCountInString(text[:strings.Index(text, "lighthouse")])
	ex := &rag.Extracted{Pages: 3, Blocks: []rag.Block{
		{Kind: rag.BlockParagraph, Page: 2, Text: text, PageTurns: []rag.PageBreak{{Offset: turn, Page: 3}}},
		{Kind: rag.BlockParagraph, Page: 3, Text: "A lamp replaced him."},
	}}
	cs := Split(ex, Options{})
	if len(cs) != 1 {
		t.Fatalf("%d chunks, want 1", len(cs))
	}
	c := cs[0]
	if c.PageStart != 2 || c.PageEnd != 3 {
		t.Fatalf("pages %d–%d, want 2–3", c.PageStart, c.PageEnd)
	}
	at := func(s string) int { return utf8.RuneCountInString(c.Text[:strings.Index(c.Text, s)]) }
	want := []rag.PageBreak{{Offset: 0, Page: 2}, {Offset: at("lighthouse"), Page: 3}}
	if !slices.Equal(c.PageBreaks, want) {
		t.Fatalf("page breaks %v, want %v", c.PageBreaks, want)
	}
	checkPagesOf(t, c, []sentencePages{
		{"The harbour opened in 1901.", 2, 2},
		{"Its pier runs from the old town to the lighthouse on the point.", 2, 3},
		{"The keeper retired in 1987.", 3, 3},
		{"A lamp replaced him.", 3, 3},
	})

	// With chunks of 60 characters, the first sentence fills half of one: the turning sentence opens the
	// next chunk, which runs on to page 3.
	cs = Split(ex, Options{Size: 60, Overlap: -1})
	if len(cs) < 2 || cs[0].Text != "The harbour opened in 1901." || cs[0].PageEnd != 2 {
		t.Fatalf("chunks %+v", cs)
	}
	if c := cs[1]; !strings.HasPrefix(c.Text, "Its pier runs") || c.PageStart != 2 || c.PageEnd != 3 {
		t.Errorf("second chunk %q on pages %d–%d, want the turning sentence on 2–3", c.Text, c.PageStart, c.PageEnd)
	}
}

// sentencePages is a sentence of a chunk and the pages it is on.
type sentencePages struct {
	sentence    string
	first, last int
}

// checkPagesOf checks the pages c.PagesOf gives each sentence of cases.
func checkPagesOf(t *testing.T, c rag.Chunk, cases []sentencePages) {
	t.Helper()
	for _, tc := range cases {
		start := utf8.RuneCountInString(c.Text[:strings.Index(c.Text, tc.sentence)])
		if p, q := c.PagesOf(start, start+utf8.RuneCountInString(tc.sentence)); p != tc.first || q != tc.last {
			t.Errorf("%q: pages %d–%d, want %d–%d", tc.sentence, p, q, tc.first, tc.last)
		}
	}
}
