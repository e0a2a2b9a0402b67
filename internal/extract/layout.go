package extract

import (
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// pchar is one character read from a PDF page, with its loose box (font ascent to descent, origin to
// advance) in PDF user space, y pointing up.
type pchar struct {
	r              rune
	x0, x1, y0, y1 float64
	// spaceBefore: the content stream (or PDFium, from the glyph positions) put a space before this char.
	spaceBefore bool
	// idx is the position in the content stream, to tell neighbours in the stream from neighbours on paper.
	idx int
	// angle is the text direction in radians, counter-clockwise (0 = left to right).
	angle float64
}

func (c pchar) h() float64  { return c.y1 - c.y0 }
func (c pchar) cy() float64 { return (c.y0 + c.y1) / 2 }

// pageChars is one page as read: its size, characters and ruling lines.
type pageChars struct {
	w, h  float64
	chars []pchar
	rules []rule
}

// seg is a run of a row's text without a wide gap in it: a line of one column, or one table cell.
type seg struct {
	x0, x1 float64
	text   string
	grid   int // the number (index + 1) of the ruled table this segment stands for; 0 for text
}

// row is a horizontal line of text across the page (all columns); y0..y1 is its vertical extent.
type row struct {
	y0, y1, h float64
	segs      []seg
}

func (r row) text() string {
	parts := make([]string, len(r.segs))
	for i, s := range r.segs {
		parts[i] = s.text
	}
	return strings.Join(parts, " ")
}

// Layout thresholds, in units of the row's character height (the loose box, about 1.2 em).
const (
	segGapH      = 0.8  // a gap wider than this splits a row into segments (columns, cells) ...
	segGapAdjH   = 1.6  // ... or this, between characters adjacent in the content stream (justified text)
	spaceGapH    = 0.15 // a gap wider than this between characters not adjacent in the stream is a space
	smallCharH   = 0.6  // characters smaller than this (of the page median) are attached to a line, not lines
	runningZone  = 0.12 // headers/footers live in this share of the page height at the top and bottom
	minBandRows  = 3    // a column gutter must hold over this many rows to be a column or table boundary
	proseColFrac = 0.18 // every column of multi-column prose is at least this share of the text width
)

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// buildRows groups a page's characters into rows (top to bottom) and each row into segments.
func buildRows(pc pageChars) []row {
	if len(pc.chars) == 0 {
		return nil
	}
	hs := make([]float64, len(pc.chars))
	for i, c := range pc.chars {
		hs[i] = c.h()
	}
	med := median(hs)
	// Characters of one line share a vertical centre (give or take mixed fonts); the next line is a line
	// pitch away. Clustering on centres, unlike merging boxes, cannot chain two tightly set lines together.
	chars := slices.Clone(pc.chars)
	sort.SliceStable(chars, func(i, j int) bool { return chars[i].cy() > chars[j].cy() })
	type cluster struct {
		cy, h  float64 // running mean centre; height of its first character
		y0, y1 float64
		chars  []pchar
	}
	var cls []*cluster
	var cur *cluster
	for _, c := range chars {
		if cur != nil && cur.cy-c.cy() <= 0.3*min(c.h(), cur.h) {
			n := float64(len(cur.chars))
			cur.cy = (cur.cy*n + c.cy()) / (n + 1)
			cur.y0, cur.y1 = min(cur.y0, c.y0), max(cur.y1, c.y1)
			cur.chars = append(cur.chars, c)
			continue
		}
		cur = &cluster{cy: c.cy(), h: c.h(), y0: c.y0, y1: c.y1, chars: []pchar{c}}
		cls = append(cls, cur)
	}
	// Superscripts and other small print join the line whose box holds their centre.
	var kept []*cluster
	for _, cl := range cls {
		if cl.h >= 0.8*med {
			kept = append(kept, cl)
		}
	}
	for _, cl := range cls {
		if cl.h >= 0.8*med {
			continue
		}
		var best *cluster
		bestD := math.Inf(1)
		for _, k := range kept {
			if cl.cy >= k.y0 && cl.cy <= k.y1 && math.Abs(cl.cy-k.cy) < bestD {
				best, bestD = k, math.Abs(cl.cy-k.cy)
			}
		}
		if best == nil {
			kept = append(kept, cl)
			continue
		}
		best.chars = append(best.chars, cl.chars...)
	}
	cls = kept
	sort.SliceStable(cls, func(i, j int) bool { return cls[i].y0+cls[i].y1 > cls[j].y0+cls[j].y1 })
	rows := make([]row, 0, len(cls))
	for _, cl := range cls {
		if r, ok := makeRow(cl.chars, med); ok {
			rows = append(rows, r)
		}
	}
	return rows
}

func makeRow(chars []pchar, pageMed float64) (row, bool) {
	sort.SliceStable(chars, func(i, j int) bool {
		if chars[i].x0 != chars[j].x0 {
			return chars[i].x0 < chars[j].x0
		}
		return chars[i].idx < chars[j].idx
	})
	var hs []float64
	r := row{y0: math.Inf(1), y1: math.Inf(-1)}
	for _, c := range chars {
		if c.h() >= smallCharH*pageMed {
			hs = append(hs, c.h())
			r.y0, r.y1 = min(r.y0, c.y0), max(r.y1, c.y1)
		}
	}
	if len(hs) == 0 {
		for _, c := range chars {
			hs = append(hs, c.h())
			r.y0, r.y1 = min(r.y0, c.y0), max(r.y1, c.y1)
		}
	}
	r.h = median(hs)
	var b strings.Builder
	var s seg
	var prev pchar
	for i, c := range chars {
		if i > 0 {
			// Text drawn twice to fake bold lands on itself.
			if c.r == prev.r && math.Abs(c.x0-prev.x0) < 0.1*r.h {
				continue
			}
			gap := c.x0 - prev.x1
			adjacent := c.idx == prev.idx+1
			if gap > segGapH*r.h && (!adjacent || gap > segGapAdjH*r.h) {
				s.text = b.String()
				r.segs = append(r.segs, s)
				b.Reset()
				s = seg{x0: c.x0}
			} else {
				if c.spaceBefore && (adjacent || gap > 0) || gap > spaceGapH*r.h && (!adjacent || gap > 0.3*r.h) {
					b.WriteByte(' ')
				}
			}
		} else {
			s.x0 = c.x0
		}
		b.WriteRune(c.r)
		s.x1 = max(s.x1, c.x1)
		prev = c
	}
	s.text = b.String()
	r.segs = append(r.segs, s)
	for i := range r.segs {
		r.segs[i].text = strings.TrimSpace(r.segs[i].text)
	}
	return r, len(r.segs) > 0
}

var pageNumberRe = regexp.MustCompile(`(?i)^[\s\-–—−_.]*(?:page|p\.|쪽)?\s*[0-9ivxlc]{1,5}\s*(?:(?:/|of)\s*\d{1,5})?\s*(?:쪽|페이지)?[\s\-–—−_.]*$`)

var digitsRe = regexp.MustCompile(`[0-9]+`)

// dropRunning removes page numbers and running headers/footers: rows near the top or bottom of a page whose
// text, digits masked, recurs on at least half of the pages (and on three or more).
func dropRunning(pages [][]row, heights []float64) {
	type cand struct{ page, idx int }
	keys := map[string][]cand{}
	drop := make([]map[int]bool, len(pages))
	for p, rows := range pages {
		drop[p] = map[int]bool{}
		h := heights[p]
		for i, r := range rows {
			top := i < 3 && h > 0 && r.y0 > h*(1-runningZone)
			bottom := i >= len(rows)-3 && h > 0 && r.y1 < h*runningZone
			if !top && !bottom {
				continue
			}
			t := r.text()
			if pageNumberRe.MatchString(t) && strings.TrimSpace(t) != "" {
				drop[p][i] = true
				continue
			}
			// Word order is ignored: odd and even pages put the page number on opposite sides.
			words := strings.Fields(digitsRe.ReplaceAllString(t, "#"))
			slices.Sort(words)
			key := strings.Join(words, " ")
			if utf8.RuneCountInString(key) >= 2 {
				keys[key] = append(keys[key], cand{p, i})
			}
		}
	}
	n := len(pages)
	need := max(3, (n+1)/2)
	for _, cs := range keys {
		seen := map[int]bool{}
		for _, c := range cs {
			seen[c.page] = true
		}
		if len(seen) >= need {
			for _, c := range cs {
				drop[c.page][c.idx] = true
			}
		}
	}
	for p := range pages {
		if len(drop[p]) == 0 {
			continue
		}
		kept := pages[p][:0]
		for i, r := range pages[p] {
			if !drop[p][i] {
				kept = append(kept, r)
			}
		}
		pages[p] = kept
	}
}

// spacing holds how the document itself spaces Hangul syllables inside lines, to decide whether a line
// break between two syllables was a space or the middle of a word.
type spacing struct {
	adj    map[[2]rune]int // syllable pair written together
	spaced map[[2]rune]int // syllable pair written with one space between
	total  map[rune]int    // occurrences of a syllable followed by something on the same line
	final  map[rune]int    // ... followed by a space or punctuation (a word end)
	// The same after a digit ("10일", "3개"): a counter after a number ends its word far more often than the
	// syllable does elsewhere ("일부", "개정").
	totalNum, finalNum map[rune]int
	// seen counts occurrences of a syllable after something on the same line; initial those after a space
	// (a word start). A particle or a word's second syllable rarely starts a word.
	seen, initial map[rune]int
	// starts and inner total initial and seen − initial over all syllables.
	starts, inner int
}

func isHangul(r rune) bool { return r >= 0xAC00 && r <= 0xD7A3 }

func newSpacing(pages [][]row) *spacing {
	st := &spacing{adj: map[[2]rune]int{}, spaced: map[[2]rune]int{}, total: map[rune]int{}, final: map[rune]int{},
		totalNum: map[rune]int{}, finalNum: map[rune]int{}, seen: map[rune]int{}, initial: map[rune]int{}}
	for _, rows := range pages {
		for _, r := range rows {
			for _, s := range r.segs {
				st.add(s.text)
			}
		}
	}
	return st
}

func (st *spacing) add(text string) {
	rs := []rune(text)
	for i := 0; i+1 < len(rs); i++ {
		a, b := rs[i], rs[i+1]
		if isHangul(b) {
			st.seen[b]++
			if a == ' ' {
				st.initial[b]++
				st.starts++
			} else {
				st.inner++
			}
		}
		if !isHangul(a) {
			continue
		}
		num := i > 0 && unicode.IsDigit(rs[i-1])
		st.total[a]++
		if num {
			st.totalNum[a]++
		}
		switch {
		case isHangul(b):
			st.adj[[2]rune{a, b}]++
		case unicode.IsSpace(b) || unicode.IsPunct(b):
			st.final[a]++
			if num {
				st.finalNum[a]++
			}
			if b == ' ' && i+2 < len(rs) && isHangul(rs[i+2]) {
				st.spaced[[2]rune{a, rs[i+2]}]++
			}
		}
	}
}

// joinHangul decides whether a line ending in syllable a (after a digit when num) continues, without a
// space, in a line starting with syllable b: as the document writes the pair elsewhere (together or spaced)
// when it does. Otherwise by how often a ends a word (p, after a number when a follows one) and b starts
// one (q): a space when p + q ≥ 1 (even odds that the break is between words), or, with too few of b, when a
// mostly ends words; else no, since word processors that break Korean lines by character do so mid-word.
func (st *spacing) joinHangul(a, b rune, num bool) bool {
	pair := [2]rune{a, b}
	if together, apart := st.adj[pair], st.spaced[pair]; together+apart > 0 {
		return together >= apart
	}
	var p float64
	switch total := st.total[a]; {
	case num:
		// A counter after a number ("10일", "3명") ends its word unless a particle follows: a prior of 0.8
		// (worth two occurrences) for documents that write few of them.
		p = (float64(st.finalNum[a]) + 1.6) / (float64(st.totalNum[a]) + 2)
	case total < 3:
		return true
	default:
		p = float64(st.final[a]) / float64(total)
	}
	if n := st.seen[b]; n >= 3 && st.starts > 0 && st.inner > 0 {
		// The odds of a word end after a, times how much likelier b is at a word start than inside a word.
		odds := (p + 0.01) / (1.01 - p) * ((float64(st.initial[b]) + 0.5) / float64(st.starts)) / ((float64(n-st.initial[b]) + 0.5) / float64(st.inner))
		return odds < 1
	}
	return p < 0.5
}

// line is one visual line of a text flow (a column, or the whole page width).
type line struct {
	text           string
	x0, x1, y0, y1 float64
	h              float64
	grid           int // the number of the ruled table this line stands for (seg.grid)
}

var listStartRe = regexp.MustCompile(`^(?:\d{1,3}[.)]\s|\d{1,3}[.)]$|[가나다라마바사아자차카타파하][.)]\s|\(\d{1,3}\)|\([가나다라마바사아자차카타파하]\)|[①-⑳⑴-⒇㉠-㉭㈀-㈍]|[○●◦□■▪◆◇◎※•·∙ㆍ▶▷►-]\s?|[-–—*]\s|[IVX]{1,4}\.\s|[a-z][.)]\s|제\s?\d+\s?[조장절항관편])`)

func isListStart(s string) bool { return listStartRe.MatchString(s) }

func endsSentence(s string) bool {
	s = strings.TrimRight(s, " ”’\")")
	return strings.HasSuffix(s, ".") || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "다") || strings.HasSuffix(s, "음") || strings.HasSuffix(s, "함")
}

// para is a paragraph formed from the lines of one flow.
type para struct {
	text  string
	h     float64
	lines int
	// full: it has two lines or more and the last one runs to the flow's right edge, as a justified
	// paragraph's lines do until its last.
	full bool
}

// formParagraphs joins a flow's lines into paragraphs: a paragraph ends at a wider vertical gap, a change of
// size, a short line, an indented line after a sentence end, or a line that starts a list item. Lines are
// joined with a space, or with nothing when a Korean word or a hyphenated English word was wrapped.
func formParagraphs(lines []line, st *spacing) []para {
	if len(lines) == 0 {
		return nil
	}
	left, right := math.Inf(1), math.Inf(-1)
	full := 0
	for _, l := range lines {
		left, right = min(left, l.x0), max(right, l.x1)
	}
	for _, l := range lines {
		if l.x1 >= right-1.5*l.h {
			full++
		}
	}
	shortAt := func(l line) bool { return l.x1 < right-1.5*l.h }
	if 2*full < len(lines) { // ragged right: only clearly short lines end paragraphs
		shortAt = func(l line) bool { return l.x1 < left+0.7*(right-left) }
	}
	var ds []float64
	for i := 1; i < len(lines); i++ {
		a, b := lines[i-1], lines[i]
		if d := a.y0 - b.y0; d > 0 && d < 3*max(a.h, b.h) {
			ds = append(ds, d)
		}
	}
	pitch := median(ds)

	var out []para
	var b strings.Builder
	cur := para{}
	last := 0 // the index of the line read last
	flush := func() {
		if cur.lines > 0 {
			cur.text = b.String()
			cur.full = cur.lines >= 2 && !shortAt(lines[last])
			out = append(out, cur)
		}
		b.Reset()
		cur = para{}
	}
	for i, l := range lines {
		if i > 0 {
			a := lines[i-1]
			d := a.y0 - l.y0
			hmax := max(a.h, l.h)
			brk := d <= 0 || d > 2.2*hmax || (pitch > 0 && d > 1.4*pitch) ||
				math.Abs(a.h-l.h) > 0.15*hmax ||
				shortAt(a) ||
				isListStart(l.text) ||
				(l.x0 > left+0.8*l.h && a.x0 <= left+0.5*a.h && (cur.lines >= 2 || endsSentence(a.text)))
			if brk {
				flush()
			} else {
				b.WriteString(joinSep(&b, l.text, st))
			}
		}
		if cur.lines == 0 {
			cur.h = l.h
		}
		b.WriteString(l.text)
		cur.lines++
		last = i
	}
	flush()
	return out
}

// continues reports whether next, a paragraph of the same size as prev, goes on with prev's sentence: the
// text flowed on into the next column or page. prev ends no sentence and either runs full to its last line
// and is followed by a line that opens no list item and no sentence of its own (lower case, a digit, or an
// acronym going on with an English sentence: "… per sensed high" | "AOA event."), or ends with an English
// function word ("… A subsequent activation of" | "MCAS would be possible …").
func continues(prev, next para, prevText, nextText string) bool {
	// Sizes are compared loosely: a line's size is its characters' median box, which a column's last line
	// of capitals and short words measures smaller ("AOA event. A subsequent activation of").
	if math.Abs(prev.h-next.h) > 0.25*max(prev.h, next.h) || isListStart(nextText) || endsSentence(prevText) {
		return false
	}
	pr, _ := utf8.DecodeLastRuneInString(prevText)
	nr, _ := utf8.DecodeRuneInString(nextText)
	if !unicode.IsLetter(pr) && pr != ',' || !unicode.IsLetter(nr) && !unicode.IsDigit(nr) || footnoteStartRe.MatchString(nextText) {
		return false
	}
	words := strings.Fields(prevText)
	lastWord := strings.ToLower(strings.TrimRight(words[len(words)-1], ","))
	latin := pr < unicode.MaxLatin1 && nr < unicode.MaxLatin1
	first := strings.TrimRight(strings.Fields(nextText)[0], ".,;:")
	// goesOn: next opens as the middle of a sentence does — lower case, a number, an acronym ("AOA"), not a
	// line in capitals ("ESTIMATED COSTS").
	goesOn := unicode.IsLower(nr) || unicode.IsDigit(nr) || acronym(first) && strings.ToUpper(nextText) != nextText
	if latin && len(words) >= 4 && textproc.EnglishStopWord(lastWord) && lastWord != "i" &&
		(goesOn || lastWord == "of" || lastWord == "the") {
		return true // "… A subsequent activation of" | "MCAS would …", "U.S. Department of" | "Transportation"
	}
	if !prev.full {
		return false
	}
	switch {
	case isHangul(pr) && isHangul(nr):
		return true // endsSentence has ruled out "…다", "…음", "…함"
	case latin:
		return goesOn && unicode.IsLower(pr)
	}
	return false
}

// continuesPage reports whether next, the first paragraph of a page, goes on with prev, the last one of
// the page before, in Latin script: as continues, or prev runs full to its last line, ends with a letter and no sentence,
// and next opens with a word in capitals that is no heading in capitals (a name wrapped at its hyphen,
// "… takeoff from Soekarno-" | "Hatta International Airport …"). Running heads and feet are gone by then.
func continuesPage(prev, next para, prevText, nextText string) bool {
	pr, _ := utf8.DecodeLastRuneInString(prevText)
	nr, _ := utf8.DecodeRuneInString(nextText)
	if pr >= unicode.MaxLatin1 || nr >= unicode.MaxLatin1 {
		// Korean pages stay apart: measured on the assembly minutes, a speech joined across its page
		// break moved the answers of questions about either page to the wrong sentence.
		return false
	}
	if continues(prev, next, prevText, nextText) {
		return true
	}
	if !prev.full || math.Abs(prev.h-next.h) > 0.25*max(prev.h, next.h) || isListStart(nextText) ||
		endsSentence(prevText) || footnoteStartRe.MatchString(nextText) {
		return false
	}
	return unicode.IsLower(pr) && unicode.IsUpper(nr) && strings.ToUpper(nextText) != nextText && len(strings.Fields(prevText)) >= 8
}

// footnoteStartRe matches a footnote set below a column ("1Preliminary KNKT.18.10.35.04 …", "5Stall warning
// …") or a footnote number on a line of its own ("12").
var footnoteStartRe = regexp.MustCompile(`^\d{1,3}(?:\p{Lu}|$)`)

// acronym reports whether w is written in capitals, two to five of them: "AOA", "MCAS", "FAA".
func acronym(w string) bool {
	n := 0
	for _, r := range w {
		if !unicode.IsUpper(r) && !unicode.IsDigit(r) {
			return false
		}
		n++
	}
	return n >= 2 && n <= 5
}

// joinSep returns what goes between the text so far and the next line: "" to rejoin a wrapped word, " "
// otherwise. It may trim a trailing hyphen off the builder's text.
func joinSep(b *strings.Builder, next string, st *spacing) string {
	prevText := b.String()
	pr, _ := utf8.DecodeLastRuneInString(prevText)
	nr, _ := utf8.DecodeRuneInString(next)
	switch {
	case isHangul(pr) && isHangul(nr):
		rs := []rune(prevText)
		num := len(rs) >= 2 && unicode.IsDigit(rs[len(rs)-2])
		if st.joinHangul(pr, nr, num) {
			return ""
		}
	case pr == '-' || pr == '\u00AD':
		rs := []rune(prevText)
		if len(rs) >= 2 && unicode.IsLower(rs[len(rs)-2]) && unicode.IsLower(nr) {
			b.Reset()
			b.WriteString(string(rs[:len(rs)-1]))
			return ""
		}
		if len(rs) >= 2 && unicode.IsLetter(rs[len(rs)-2]) || unicode.IsDigit(nr) {
			return ""
		}
	case pr == '–' || pr == '—' || pr == '/':
		return ""
	}
	return " "
}

// joinText appends next to text the way lines of a paragraph are joined.
func joinText(text, next string, st *spacing) string {
	if text == "" {
		return next
	}
	if next == "" {
		return text
	}
	var b strings.Builder
	b.WriteString(text)
	sep := joinSep(&b, next, st)
	return b.String() + sep + next
}

// layoutDocument turns the characters of every page into blocks.
func layoutDocument(name string, doc *pdfDoc, b *budget) (*rag.Extracted, error) {
	pages := make([][]row, len(doc.pages))
	grids := make([][]grid, len(doc.pages))
	heights := make([]float64, len(doc.pages))
	chars := 0
	for i, pc := range doc.pages {
		// Ruled tables are read cell by cell; the rest of the page stands round them.
		var rest []pchar
		grids[i], rest = findGrids(pc)
		pages[i] = withGrids(buildRows(pageChars{w: pc.w, h: pc.h, chars: rest}), grids[i])
		heights[i] = pc.h
		for _, c := range pc.chars {
			if !unicode.IsSpace(c.r) {
				chars++
			}
		}
	}
	if chars == 0 {
		return nil, rag.Errorf(rag.CodeInvalid, "%s: PDF has no text layer (scanned or image-only pages)", name)
	}
	dropRunning(pages, heights)
	st := newSpacing(pages)
	for _, gs := range grids {
		for _, g := range gs {
			g.addSpacing(st)
		}
	}
	body := bodyHeight(pages)

	l := blockList{budget: b}
	type headCand struct {
		idx int
		h   float64
	}
	var heads []headCand
	var cont continued
	type openPara struct {
		idx  int // the block it became
		para para
	}
	prev := openPara{idx: -1}
	for p, rows := range pages {
		for _, it := range pageItems(rows, st) {
			if it.table != nil {
				l.table(p+1, it.table, it.headerRows)
				continue
			}
			for _, part := range splitGrids(it.flow) {
				if part.grid > 0 {
					rows, head := cont.rows(p, grids[p][part.grid-1], st)
					l.table(p+1, rows, head)
					continue
				}
				for _, pa := range formParagraphs(part.lines, st) {
					t := normText(pa.text)
					if t == "" {
						continue
					}
					if it.plain && body > 0 && pa.h >= 1.12*body && pa.lines <= 2 && utf8.RuneCountInString(t) <= 100 && !strings.HasSuffix(t, ".") {
						heads = append(heads, headCand{len(l.blocks), pa.h})
						l.heading(p+1, 1, t)
						continue
					}
					if n := len(l.blocks); n > 0 && prev.idx == n-1 && l.blocks[n-1].Kind == rag.BlockParagraph {
						last := l.blocks[n-1]
						lastPage := last.Page
						if k := len(last.PageTurns); k > 0 {
							lastPage = last.PageTurns[k-1].Page
						}
						switch {
						case lastPage == p+1 && continues(prev.para, pa, last.Text, t):
							// The sentence flowed on into the next column: one paragraph.
							l.extend(n-1, normText(joinText(last.Text, t, st)))
							prev.para = pa
							continue
						case lastPage == p && continuesPage(prev.para, pa, last.Text, t):
							// It flowed on from the foot of the previous page: one paragraph, whose
							// sentences say the page they start on.
							l.extendPage(n-1, normText(joinText(last.Text, t, st)), t, p+1)
							prev.para = pa
							continue
						}
					}
					l.paragraph(p+1, t)
					prev = openPara{len(l.blocks) - 1, pa}
				}
			}
		}
	}
	if err := l.err(); err != nil {
		return nil, err // heads index blocks that a spent budget did not add
	}
	// A table of contents is not a section the body sits in, and neither is the front matter before it
	// (a cover page's committee or publisher): their headings become paragraphs.
	if k := slices.IndexFunc(heads, func(h headCand) bool { return tocHeading(l.blocks, h.idx) }); k >= 0 {
		for _, h := range heads[:k+1] {
			l.blocks[h.idx].Kind, l.blocks[h.idx].Level = rag.BlockParagraph, 0
		}
		heads = heads[k+1:]
	}
	// Heading levels by size: the largest is 1.
	var sizes []float64
	for _, h := range heads {
		sz := math.Round(h.h)
		if !slices.Contains(sizes, sz) {
			sizes = append(sizes, sz)
		}
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(sizes)))
	for _, h := range heads {
		l.blocks[h.idx].Level = min(slices.Index(sizes, math.Round(h.h))+1, 6)
	}
	return &rag.Extracted{Title: normInline(doc.title), Pages: len(doc.pages), Blocks: l.blocks}, nil
}

// tocEntryRe is a line of a table of contents: a title, a dot leader, a page number.
var tocEntryRe = regexp.MustCompile(`(?:[.·…․‥_]\s*){4,}\s*\d{1,4}$`)

// tocHeading reports whether the heading at blocks[i] titles a table of contents: two or more of the three
// blocks after it are entries with dot leaders.
func tocHeading(blocks []rag.Block, i int) bool {
	n := 0
	for _, b := range blocks[i+1 : min(i+4, len(blocks))] {
		if b.Kind == rag.BlockParagraph && tocEntryRe.MatchString(b.Text) {
			n++
		}
	}
	return n >= 2
}

// bodyHeight is the line height most text is set in: the median row height weighted by characters.
func bodyHeight(pages [][]row) float64 {
	var hs []float64
	for _, rows := range pages {
		for _, r := range rows {
			n := utf8.RuneCountInString(r.text())
			for range min(n, 200) {
				hs = append(hs, r.h)
			}
		}
	}
	return median(hs)
}

// item is a piece of a page in reading order: a flow of lines (one column, or full-width text) or a table.
type item struct {
	flow       []line
	plain      bool // full-width text, not a column of a multi-column band (headings are looked for here)
	table      [][]string
	headerRows int
}

type span struct{ lo, hi float64 }

// freeSpans returns the horizontal gaps of a row within [left, right] at least minW wide.
func freeSpans(r row, left, right, minW float64) []span {
	var out []span
	x := left
	for _, s := range r.segs {
		if s.x0-x >= minW {
			out = append(out, span{x, s.x0})
		}
		x = max(x, s.x1)
	}
	if right-x >= minW {
		out = append(out, span{x, right})
	}
	return out
}

func intersectSpans(a, b []span, minW float64) []span {
	var out []span
	for _, x := range a {
		for _, y := range b {
			lo, hi := max(x.lo, y.lo), min(x.hi, y.hi)
			if hi-lo >= minW {
				out = append(out, span{lo, hi})
			}
		}
	}
	return out
}

// pageItems orders a page's rows into items. Runs of rows that share a vertical gutter form a band: prose
// columns (few, wide) are read column by column; anything else in a band is a table, read row by row.
func pageItems(rows []row, st *spacing) []item {
	if len(rows) == 0 {
		return nil
	}
	left, right := math.Inf(1), math.Inf(-1)
	var hs []float64
	for _, r := range rows {
		left, right = min(left, r.segs[0].x0), max(right, r.segs[len(r.segs)-1].x1)
		hs = append(hs, r.h)
	}
	minW := segGapH * median(hs)
	interior := func(ss []span) []span {
		var out []span
		for _, s := range ss {
			if s.lo > left+0.5 && s.hi < right-0.5 {
				out = append(out, s)
			}
		}
		return out
	}
	var items []item
	var plain []line
	flushPlain := func() {
		if len(plain) > 0 {
			items = append(items, item{flow: plain, plain: true})
			plain = nil
		}
	}
	for i := 0; i < len(rows); {
		gut := interior(freeSpans(rows[i], left, right, minW))
		j := i + 1
		for j < len(rows) && len(gut) > 0 {
			next := interior(intersectSpans(gut, freeSpans(rows[j], left, right, minW), minW))
			// Columns of prose that have stood for a few rows end where one of their gutters does (a
			// table or heading spanning some of them) rather than lose the gutter and read two columns
			// as one.
			if len(next) == 0 || len(next) < len(gut) && j-i >= minBandRows && proseGutters(gut, left, right) {
				break
			}
			gut = next
			j++
		}
		if j-i >= minBandRows && len(gut) > 0 {
			flushPlain()
			items = append(items, bandItems(rows[i:j], gut, left, right, st)...)
			i = j
			continue
		}
		plain = append(plain, rowLine(rows[i]))
		i++
	}
	flushPlain()
	return items
}

// proseGutters reports whether gutters split [left, right] into at most four columns, each at least
// proseColFrac of the width: columns of prose rather than of a table.
func proseGutters(gut []span, left, right float64) bool {
	if len(gut) > 3 {
		return false
	}
	x := left
	for _, g := range append(slices.Clone(gut), span{right, right}) {
		if g.lo-x < proseColFrac*(right-left) {
			return false
		}
		x = g.hi
	}
	return true
}

func rowLine(r row) line {
	l := line{text: r.text(), x0: r.segs[0].x0, x1: r.segs[len(r.segs)-1].x1, y0: r.y0, y1: r.y1, h: r.h}
	if len(r.segs) == 1 {
		l.grid = r.segs[0].grid
	}
	return l
}

func bandItems(rows []row, gut []span, left, right float64, st *spacing) []item {
	sort.Slice(gut, func(i, j int) bool { return gut[i].lo < gut[j].lo })
	// Merge gutters that overlap (intersections can yield pieces of one gap).
	var gs []span
	for _, g := range gut {
		if len(gs) > 0 && g.lo <= gs[len(gs)-1].hi {
			gs[len(gs)-1].hi = max(gs[len(gs)-1].hi, g.hi)
			continue
		}
		gs = append(gs, g)
	}
	ncol := len(gs) + 1
	colOf := func(x float64) int {
		c := 0
		for c < len(gs) && x > (gs[c].lo+gs[c].hi)/2 {
			c++
		}
		return c
	}
	// cells[row][col] collects the segments of each row by column.
	cells := make([][][]seg, len(rows))
	colRows := make([]int, ncol)
	colX0 := make([]float64, ncol)
	colX1 := make([]float64, ncol)
	for c := range ncol {
		colX0[c], colX1[c] = math.Inf(1), math.Inf(-1)
	}
	for i, r := range rows {
		cells[i] = make([][]seg, ncol)
		for _, s := range r.segs {
			c := colOf((s.x0 + s.x1) / 2)
			cells[i][c] = append(cells[i][c], s)
			colX0[c], colX1[c] = min(colX0[c], s.x0), max(colX1[c], s.x1)
		}
		for c := range ncol {
			if len(cells[i][c]) > 0 {
				colRows[c]++
			}
		}
	}
	prose := ncol <= 4
	for c := range ncol {
		if colRows[c] < 2 || colX1[c]-colX0[c] < proseColFrac*(right-left) {
			prose = false
		}
	}
	if prose {
		var items []item
		for c := range ncol {
			var flow []line
			for i, r := range rows {
				ss := cells[i][c]
				if len(ss) == 0 {
					continue
				}
				parts := make([]string, len(ss))
				for k, s := range ss {
					parts[k] = s.text
				}
				l := line{text: strings.Join(parts, " "), x0: ss[0].x0, x1: ss[len(ss)-1].x1, y0: r.y0, y1: r.y1, h: r.h}
				if len(ss) == 1 {
					l.grid = ss[0].grid
				}
				flow = append(flow, l)
			}
			items = append(items, item{flow: flow})
		}
		return items
	}
	// A ruled table standing in the band comes after it.
	var after []item
	for _, r := range rows {
		for _, s := range r.segs {
			if s.grid > 0 {
				after = append(after, item{flow: []line{{grid: s.grid}}})
			}
		}
	}
	table := make([][]string, len(rows))
	for i := range rows {
		table[i] = make([]string, ncol)
		for c := range ncol {
			parts := make([]string, len(cells[i][c]))
			for k, s := range cells[i][c] {
				parts[k] = s.text
			}
			table[i][c] = strings.Join(parts, " ")
		}
	}
	// A row with nothing in the first column continues the cells of the row above (text wrapped in a cell).
	var merged [][]string
	for _, r := range table {
		filled := 0
		for _, c := range r {
			if c != "" {
				filled++
			}
		}
		if filled == 0 {
			continue
		}
		if len(merged) > 0 && r[0] == "" && filled < ncol {
			last := merged[len(merged)-1]
			for c := range ncol {
				last[c] = joinText(last[c], r[c], st)
			}
			continue
		}
		merged = append(merged, r)
	}
	return append([]item{{table: merged, headerRows: guessHeader(merged)}}, after...)
}

var numericCellRe = regexp.MustCompile(`^[\s$€₩£¥%()+\-–.,:/0-9]+$`)

// guessHeader says whether a PDF table's first row is a header: it is when none of its cells is a number
// or a date and some later row has one.
func guessHeader(rows [][]string) int {
	if len(rows) < 2 {
		return 0
	}
	for _, c := range rows[0] {
		if c != "" && numericCellRe.MatchString(c) {
			return 0
		}
	}
	for _, r := range rows[1:] {
		for _, c := range r {
			if c != "" && numericCellRe.MatchString(c) {
				return 1
			}
		}
	}
	return 0
}
