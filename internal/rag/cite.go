package rag

import (
	"fmt"
	"strings"
)

// CitationLine names a passage for a reader: its title (else its source), the file it came from when that
// differs, its pages and its section — "bill (bill.pdf), pp. 4–5 — 부칙". The OpenAI-compatible API and the
// MCP server list an answer's sources with it.
func CitationLine(h Hit) string {
	line := strings.TrimSpace(h.Title)
	if line == "" {
		line = h.Source
	}
	if h.Source != "" && h.Source != line {
		line += " (" + h.Source + ")"
	}
	switch {
	case h.PageStart > 0 && h.PageEnd > h.PageStart:
		line += fmt.Sprintf(", pp. %d–%d", h.PageStart, h.PageEnd)
	case h.PageStart > 0:
		line += fmt.Sprintf(", p. %d", h.PageStart)
	}
	if h.Section != "" {
		line += " — " + h.Section
	}
	return line
}

// CitationList is a markdown list of sources, one "- [n] CitationLine" item each, by their numbers.
func CitationList(sources []Source) string {
	var b strings.Builder
	for i, src := range sources {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "- [%d] %s", src.N, CitationLine(src.Hit))
	}
	return b.String()
}
