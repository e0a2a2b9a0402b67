package chunk

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/rag"
)

// Default sizes, in characters (runes). They start from the seeds' figures (1000 / 200); change them here when
// `ragd eval` measures better ones.
const (
	DefaultSize    = 1000
	DefaultOverlap = 200
)

// Options tune Split. The zero value means the defaults.
type Options struct {
	// Size is the most characters (runes) a chunk may hold; 0 means DefaultSize. Only a single word longer
	// than Size, or a table header with one over-long row, can make a chunk longer.
	Size int
	// Overlap is how many characters of whole sentences at the end of a chunk are repeated at the start of
	// the next one when a section is split by size; 0 means DefaultOverlap, a negative value means none.
	Overlap int
	// MinSection: a chunk shorter than this does not end at a heading below the top level, so that small
	// sections merge with their neighbours; 0 means Size/4, a negative value means every heading starts a
	// new chunk.
	MinSection int
}

// WithDefaults returns o with zero fields replaced by their defaults and the overlap kept below half a chunk.
func (o Options) WithDefaults() Options {
	if o.Size <= 0 {
		o.Size = DefaultSize
	}
	if o.Overlap == 0 {
		o.Overlap = DefaultOverlap
	}
	if o.Overlap < 0 {
		o.Overlap = 0
	}
	if o.Overlap > o.Size/2 {
		o.Overlap = o.Size / 2
	}
	if o.MinSection == 0 {
		o.MinSection = o.Size / 4
	}
	return o
}

// Separator joins the blocks of a document into its text; chunk offsets count in that text.
const Separator = "\n\n"

// DocText returns the document text that chunk offsets refer to: the blocks' texts joined by Separator.
func DocText(ex *rag.Extracted) string {
	texts := make([]string, len(ex.Blocks))
	for i, b := range ex.Blocks {
		texts[i] = b.Text
	}
	return strings.Join(texts, Separator)
}

// Split cuts an extracted document into chunks (see the package documentation). The chunks' DocumentID,
// Version and ID are left for the caller.
func Split(ex *rag.Extracted, opt Options) []rag.Chunk {
	if ex == nil {
		return nil
	}
	s := &splitter{opt: opt.WithDefaults(), doc: []rune(DocText(ex))}
	for _, b := range ex.Blocks {
		if b.Kind == rag.BlockHeading {
			if s.topLevel == 0 || b.Level < s.topLevel {
				s.topLevel = max(b.Level, 1)
			}
		}
	}
	off := 0
	for _, b := range ex.Blocks {
		n := utf8.RuneCountInString(b.Text)
		switch b.Kind {
		case rag.BlockHeading:
			s.heading(b, off)
		case rag.BlockTable:
			if s.captions(b, off, n) {
				break
			}
			s.flush(false)
			s.table(b, off)
		case rag.BlockCode:
			s.flush(false)
			s.code(b, off)
		default:
			s.paragraph(b, off)
		}
		off += n + utf8.RuneCountInString(Separator)
	}
	s.flush(true)
	for i := range s.out {
		s.out[i].Index = i
	}
	return s.out
}

// unit is an indivisible piece of a text chunk: a sentence, a heading, or a piece of an over-long sentence.
type unit struct {
	start, end int // rune offsets in the document text
	page       int
	turns      []rag.PageBreak // later pages the unit goes on to, at rune offsets in the document text
	ocr        ocrMark
	heading    bool
	level      int
	path       []string
}

type splitter struct {
	opt      Options
	doc      []rune
	topLevel int
	path     []heading // the current heading path
	cur      []unit    // text units of the chunk being filled
	out      []rag.Chunk
}

type heading struct {
	level int
	text  string
}

func (s *splitter) pathNames() []string {
	names := make([]string, len(s.path))
	for i, h := range s.path {
		names[i] = h.text
	}
	return names
}

func (s *splitter) curLen() int {
	if len(s.cur) == 0 {
		return 0
	}
	return s.cur[len(s.cur)-1].end - s.cur[0].start
}

func (s *splitter) onlyHeadings() bool { return s.allHeadings(s.cur) }

func (s *splitter) allHeadings(units []unit) bool {
	for _, u := range units {
		if !u.heading {
			return false
		}
	}
	return true
}

func (s *splitter) heading(b rag.Block, off int) {
	level := max(b.Level, 1)
	text := strings.Join(strings.Fields(b.Text), " ")
	if len(s.cur) > 0 && !s.onlyHeadings() &&
		(level <= s.topLevel || s.opt.MinSection < 0 || s.curLen() >= s.opt.MinSection) {
		s.flush(true)
	}
	for len(s.path) > 0 && s.path[len(s.path)-1].level >= level {
		s.path = s.path[:len(s.path)-1]
	}
	if text != "" {
		s.path = append(s.path, heading{level, text})
	}
	path := s.pathNames()
	for _, sp := range trimmedSpan(b.Text) {
		for _, p := range s.pieces(b.Text, sp, off) {
			s.add(unit{start: p.Start, end: p.End, page: b.Page, ocr: markOf(b), heading: true, level: level, path: path})
		}
	}
}

func (s *splitter) paragraph(b rag.Block, off int) {
	path := s.pathNames()
	for _, sp := range Sentences(b.Text) {
		for _, p := range s.pieces(b.Text, sp, off) {
			u := unit{start: p.Start, end: p.End, page: b.Page, ocr: markOf(b), path: path}
			// A paragraph that runs on across a page break: each piece is on the page it starts on and
			// notes the pages it turns to.
			for _, t := range b.PageTurns {
				at := off + t.Offset
				switch {
				case at <= u.start:
					u.page = t.Page
				case at < u.end:
					u.turns = append(u.turns, rag.PageBreak{Offset: at, Page: t.Page})
				}
			}
			s.add(u)
		}
	}
}

// pieces converts the byte span sp of text (a block starting at rune offset off) into rune spans of the
// document, cutting it at word boundaries when it is longer than a chunk.
func (s *splitter) pieces(text string, sp Span, off int) []Span {
	start := off + utf8.RuneCountInString(text[:sp.Start])
	end := start + utf8.RuneCountInString(text[sp.Start:sp.End])
	return s.cutWords(start, end, s.opt.Size)
}

// cutWords splits the document span [start, end) into spans of at most limit runes, at white space where
// possible, each trimmed of white space.
func (s *splitter) cutWords(start, end, limit int) []Span {
	limit = max(limit, 1)
	var out []Span
	for start < end {
		for start < end && unicode.IsSpace(s.doc[start]) {
			start++
		}
		if start >= end {
			break
		}
		if end-start <= limit {
			out = append(out, Span{start, end})
			break
		}
		cut := start + limit
		for c := cut; c > start; c-- {
			if unicode.IsSpace(s.doc[c]) {
				cut = c
				break
			}
		}
		e := cut
		for e > start && unicode.IsSpace(s.doc[e-1]) {
			e--
		}
		out = append(out, Span{start, e})
		start = cut
	}
	return out
}

// add appends u to the chunk being filled, closing the chunk first when u would not fit — or when u starts
// or turns to a new page and the chunk is already half full: a chunk then cites one page rather than two, and the next one
// starts on the page without repeating the previous page's last sentences.
func (s *splitter) add(u unit) {
	// A sentence that runs on to the next page opens the chunk of that page rather than closing a full one
	// (the title page's chunk stays on the title page).
	if s.pageBreak(u) || len(u.turns) > 0 && len(s.cur) > 0 {
		n := len(s.cur)
		for n > 0 && s.cur[n-1].heading {
			n--
		}
		if n > 0 && (s.cur[n-1].end-s.cur[0].start >= s.opt.Size/2 || titlePage(s.cur[:n], u)) {
			moved := append([]unit(nil), s.cur[n:]...)
			s.emitText(s.cur[:n])
			s.cur = append(moved, u)
			return
		}
	}
	if len(s.cur) == 0 || u.end-s.cur[0].start <= s.opt.Size {
		s.cur = append(s.cur, u)
		return
	}
	// Headings at the end of the full chunk belong to what follows them.
	n := len(s.cur)
	for n > 0 && s.cur[n-1].heading {
		n--
	}
	if n == 0 {
		n = len(s.cur)
	}
	moved := append([]unit(nil), s.cur[n:]...)
	done := s.cur[:n]
	s.emitText(done)
	var next []unit
	if len(moved) == 0 {
		// Repeat the last whole sentences of the chunk, as many as fit in Overlap and leave room for u.
		first := len(done)
		for first > 1 {
			c := done[first-1]
			if c.heading || done[len(done)-1].end-c.start > s.opt.Overlap || u.end-c.start > s.opt.Size {
				break
			}
			first--
		}
		next = append(next, done[first:]...)
	}
	next = append(next, moved...)
	for len(next) > 0 && u.end-next[0].start > s.opt.Size {
		next = next[1:]
	}
	s.cur = append(next, u)
}

// captionChars is the longest text before a table that the table's chunk takes in with it (captions).
const captionChars = 250

// captions closes the chunk being filled with table b (n runes at rune offset off) in it, when what the
// chunk holds so far is short — a caption or lead-in ("Simple uniform table", "[ 위원 비교 ]", "다음 서류를
// 제출합니다.") with any headings above it — on the table's page, and both fit in a chunk. A caption
// alone is no passage to retrieve or answer from: the table says what it introduces. It reports whether it
// did.
func (s *splitter) captions(b rag.Block, off, n int) bool {
	if len(s.cur) == 0 || s.onlyHeadings() || s.curLen() > captionChars || off+n-s.cur[0].start > s.opt.Size {
		return false
	}
	for _, u := range s.cur {
		if u.page != b.Page && !u.heading {
			return false
		}
	}
	s.cur = append(s.cur, unit{start: off, end: off + n, page: b.Page, ocr: markOf(b), path: s.pathNames()})
	s.flush(true)
	return true
}

// titlePage reports whether units, the chunk so far, are the first page of a document that u goes on
// past: a title page (a report's title, committee and date; a bill's number and sponsors) is a passage of
// its own, however short, rather than the head of one that runs on into the table of contents or the body.
func titlePage(units []unit, u unit) bool {
	return units[0].page == 1 && units[len(units)-1].lastPage() == 1 && u.lastPage() > 1
}

// pageBreak reports whether u is on a later page than the chunk being filled, or follows a sentence that
// turned the page: a chunk then ends with the sentence that runs on to the next page.
func (s *splitter) pageBreak(u unit) bool {
	if len(s.cur) == 0 || u.page <= 0 {
		return false
	}
	last := s.cur[len(s.cur)-1]
	return last.page > 0 && (u.page != last.lastPage() || len(last.turns) > 0)
}

// lastPage is the page u ends on.
func (u unit) lastPage() int {
	if len(u.turns) > 0 {
		return u.turns[len(u.turns)-1].Page
	}
	return u.page
}

// flush closes the chunk being filled. A chunk of nothing but headings is dropped unless keepHeadings: before
// a table or code block the headings live on in that block's section path.
func (s *splitter) flush(keepHeadings bool) {
	if len(s.cur) > 0 && (keepHeadings || !s.onlyHeadings()) {
		s.emitText(s.cur)
	}
	s.cur = nil
}

// ocrMark says whether text was read by OCR, and the engine's confidence in it.
type ocrMark struct {
	ocr  bool
	conf float64
}

func markOf(b rag.Block) ocrMark { return ocrMark{b.OCR, b.OCRConfidence} }

// join is the mark of text made of m's and o's: read by OCR when either was, with the lower confidence.
func (m ocrMark) join(o ocrMark) ocrMark {
	switch {
	case !o.ocr:
		return m
	case !m.ocr:
		return o
	}
	return ocrMark{true, min(m.conf, o.conf)}
}

func (m ocrMark) set(c *rag.Chunk) { c.OCR, c.OCRConfidence = m.ocr, m.conf }

func (s *splitter) emitText(units []unit) {
	if len(units) == 0 {
		return
	}
	start, end := units[0].start, units[len(units)-1].end
	c := rag.Chunk{
		Kind:        rag.KindText,
		Text:        string(s.doc[start:end]),
		PageStart:   units[0].page,
		PageEnd:     units[0].page,
		StartOffset: start,
		EndOffset:   end,
	}
	// The section is the path all of the chunk's sentences share; the headings that open the chunk only
	// count when it holds nothing else.
	var common []string
	first := true
	var mark ocrMark
	for _, u := range units {
		c.PageStart = minPage(c.PageStart, u.page)
		c.PageEnd = max(c.PageEnd, u.lastPage())
		mark = mark.join(u.ocr)
		if u.heading && !s.allHeadings(units) {
			continue
		}
		if first {
			common, first = u.path, false
		} else {
			common = commonPrefix(common, u.path)
		}
	}
	c.Section = strings.Join(common, " > ")
	mark.set(&c)
	c.PageBreaks = pageBreaks(units, start)
	s.out = append(s.out, c)
}

// pageBreaks says where the text of units (starting at rune offset start of the document) turns a page:
// nothing when they are all on one page, else the first page at offset 0 and every sentence on another
// page than the sentence before it.
func pageBreaks(units []unit, start int) []rag.PageBreak {
	var out []rag.PageBreak
	turn := func(at, page int) {
		if page <= 0 || len(out) > 0 && out[len(out)-1].Page == page {
			return
		}
		off := 0
		if len(out) > 0 {
			off = at - start
		}
		out = append(out, rag.PageBreak{Offset: off, Page: page})
	}
	for _, u := range units {
		turn(u.start, u.page)
		for _, t := range u.turns {
			turn(t.Offset, t.Page)
		}
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

func minPage(a, b int) int {
	if a == 0 {
		return b
	}
	if b == 0 {
		return a
	}
	return min(a, b)
}

func commonPrefix(a, b []string) []string {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return a[:n]
}

// trimmedSpan returns the span of text without surrounding white space, or nothing for blank text.
func trimmedSpan(text string) []Span {
	l := len(text) - len(strings.TrimLeftFunc(text, unicode.IsSpace))
	r := len(strings.TrimRightFunc(text, unicode.IsSpace))
	if r <= l {
		return nil
	}
	return []Span{{l, r}}
}
