package extract

import "github.com/ragd/ragd/internal/rag"

// recordedPages numbers the pages of a word-processor document from the line layout the word processor
// saved with it (HWP's PARA_LINE_SEG records, HWPX's hp:lineseg): the vertical position of lines restarts
// at the top of every page, a section starts a page, and a paragraph may force a page break. Only the
// body's own paragraphs count (not table cells, notes or text boxes, which have their own positions).
type recordedPages struct {
	page     int
	lastVert int
	pending  bool // a section started: its first paragraph starts a page
	seen     bool // some paragraph had a recorded layout
}

// section marks the start of a section.
func (p *recordedPages) section() { p.pending = true }

// paragraph records the layout of a body paragraph: the vertical positions of its first and last lines and
// whether it forces a page break. It returns the paragraph's page.
func (p *recordedPages) paragraph(first, last int, pageBreak bool) int {
	if p.page == 0 || p.pending || pageBreak || first < p.lastVert {
		p.page++
	}
	p.pending, p.seen = false, true
	p.lastVert = last
	return p.page
}

// extracted returns the document of blocks with its page count, or without pages when the file recorded no
// layout at all (blocks read before any layout would otherwise claim a page the file never gave).
func (p *recordedPages) extracted(blocks []rag.Block) *rag.Extracted {
	x := &rag.Extracted{Blocks: blocks}
	if p.seen {
		x.Pages = p.page
		return x
	}
	for i := range x.Blocks {
		x.Blocks[i].Page = 0
	}
	return x
}
