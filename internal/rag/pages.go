package rag

import (
	"fmt"
	"strconv"
	"strings"
)

// PagesOf returns the pages the runes [start, end) of the chunk's text are on: the chunk's own span when it
// has no page breaks.
func (c Chunk) PagesOf(start, end int) (first, last int) {
	end = max(end, start+1)
	for i, b := range c.PageBreaks {
		next := end
		if i+1 < len(c.PageBreaks) {
			next = c.PageBreaks[i+1].Offset
		}
		// The text [b.Offset, next) is on b.Page.
		if b.Offset >= end || next <= start || b.Page <= 0 {
			continue
		}
		if first == 0 || b.Page < first {
			first = b.Page
		}
		last = max(last, b.Page)
	}
	if first == 0 {
		return c.PageStart, c.PageEnd
	}
	return first, last
}

// EncodePageBreaks writes page breaks as the stores keep them: "offset:page" pairs joined by commas.
func EncodePageBreaks(bs []PageBreak) string {
	parts := make([]string, len(bs))
	for i, b := range bs {
		parts[i] = strconv.Itoa(b.Offset) + ":" + strconv.Itoa(b.Page)
	}
	return strings.Join(parts, ",")
}

// DecodePageBreaks reads what EncodePageBreaks wrote.
func DecodePageBreaks(s string) ([]PageBreak, error) {
	if s == "" {
		return nil, nil
	}
	var out []PageBreak
	for _, part := range strings.Split(s, ",") {
		o, p, ok := strings.Cut(part, ":")
		off, err1 := strconv.Atoi(o)
		page, err2 := strconv.Atoi(p)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("page breaks %q: bad pair %q", s, part)
		}
		out = append(out, PageBreak{Offset: off, Page: page})
	}
	return out, nil
}

// TextOn returns the part of the block's text that is on page: all of it for a block on that one page,
// "" for a block elsewhere, and for a paragraph running on across pages (PageTurns) that page's part.
func (b Block) TextOn(page int) string {
	if len(b.PageTurns) == 0 {
		if b.Page == page {
			return b.Text
		}
		return ""
	}
	rs := []rune(b.Text)
	var out []rune
	at, on := 0, b.Page
	for _, t := range append(b.PageTurns, PageBreak{Offset: len(rs)}) {
		end := min(max(t.Offset, at), len(rs))
		if on == page {
			out = append(out, rs[at:end]...)
		}
		at, on = end, t.Page
	}
	return strings.TrimSpace(string(out))
}
