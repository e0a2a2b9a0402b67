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
