package extract

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// dots maps the middle dots Korean documents mix (U+318D HANGUL LETTER ARAEA used as a separator, U+2027
// HYPHENATION POINT, katakana middle dots) to U+00B7, which NFKC leaves alone.
var dots = strings.NewReplacer("\u318D", "\u00B7", "\u2027", "\u00B7", "\u30FB", "\u00B7", "\uFF65", "\u00B7", "\u2219", "\u00B7")

// normText normalises prose: middle dots unified, NFKC, spaces collapsed, trimmed.
func normText(s string) string {
	return strings.TrimSpace(textproc.Normalize(dots.Replace(s)))
}

// normInline normalises a single line (a heading, a table cell): newlines become spaces.
func normInline(s string) string {
	return strings.Join(strings.Fields(normText(s)), " ")
}

// normCode normalises code: NFKC and unified line ends, but indentation and spacing kept.
func normCode(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	s = norm.NFKC.String(dots.Replace(s))
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if unicode.IsControl(r) || r == '\uFEFF' {
			return -1
		}
		return r
	}, s)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRightFunc(l, unicode.IsSpace)
	}
	return strings.Trim(strings.Join(lines, "\n"), "\n")
}

// blockList accumulates blocks, dropping empty ones. With a budget, it counts their characters and stops
// adding blocks once a limit is crossed (err says which).
type blockList struct {
	blocks []rag.Block
	budget *budget
}

// add appends b unless the budget is spent.
func (l *blockList) add(b rag.Block) {
	if l.budget.addChars(utf8.RuneCountInString(b.Text)) == nil {
		l.blocks = append(l.blocks, b)
	}
}

// err is the budget's error (a limit crossed, the time limit), or nil.
func (l *blockList) err() error {
	if l.budget == nil {
		return nil
	}
	if l.budget.err != nil {
		return l.budget.err
	}
	if err := l.budget.ctx.Err(); err != nil {
		return l.budget.timeout(err)
	}
	return nil
}

// extend replaces the text of block i with text, which holds it and more (a paragraph going on).
func (l *blockList) extend(i int, text string) {
	if l.budget.addChars(utf8.RuneCountInString(text)-utf8.RuneCountInString(l.blocks[i].Text)) == nil {
		l.blocks[i].Text = text
	}
}

// extendPage is extend for a paragraph going on at the top of page: more, the text on that page, ends text.
func (l *blockList) extendPage(i int, text, more string, page int) {
	old := l.blocks[i].Text
	l.extend(i, text)
	if l.blocks[i].Text == old {
		return // the budget is spent
	}
	off := max(utf8.RuneCountInString(text)-utf8.RuneCountInString(more), 0)
	l.blocks[i].PageTurns = append(l.blocks[i].PageTurns, rag.PageBreak{Offset: off, Page: page})
}

func (l *blockList) paragraph(page int, text string) {
	if t := normText(text); t != "" {
		l.add(rag.Block{Kind: rag.BlockParagraph, Page: page, Text: t})
	}
}

func (l *blockList) heading(page, level int, text string) {
	if level < 1 {
		level = 1
	}
	if t := normInline(text); t != "" {
		l.add(rag.Block{Kind: rag.BlockHeading, Page: page, Level: level, Text: t})
	}
}

func (l *blockList) code(page int, text string) {
	if t := normCode(text); strings.TrimSpace(t) != "" {
		l.add(rag.Block{Kind: rag.BlockCode, Page: page, Text: t})
	}
}

// codeAt adds a declaration of a source file: its symbol path and the line it starts on. text must not
// start with a blank line, so that line stays the line of the block's first line.
func (l *blockList) codeAt(symbol string, line int, text string) {
	if t := normCode(text); strings.TrimSpace(t) != "" {
		l.add(rag.Block{Kind: rag.BlockCode, Text: t, Symbol: symbol, Line: line})
	}
}

// table adds a table block; rows are normalised, empty rows dropped and short rows padded so that every
// row has as many cells as the widest. A table of one column is not a table: its cells become paragraphs.
func (l *blockList) table(page int, rows [][]string, headerRows int) {
	var out [][]string
	width := 0
	for i, r := range rows {
		cells := make([]string, len(r))
		empty := true
		for j, c := range r {
			cells[j] = normInline(c)
			if cells[j] != "" {
				empty = false
			}
		}
		if empty {
			if i < headerRows {
				headerRows--
			}
			continue
		}
		out = append(out, cells)
		width = max(width, len(cells))
	}
	if len(out) == 0 {
		return
	}
	if width < 2 {
		for _, r := range out {
			l.paragraph(page, strings.Join(r, " "))
		}
		return
	}
	for i := range out {
		for len(out[i]) < width {
			out[i] = append(out[i], "")
		}
	}
	headerRows = min(max(headerRows, 0), len(out))
	l.add(rag.Block{Kind: rag.BlockTable, Page: page, Rows: out, HeaderRows: headerRows, Text: markdownTable(out, headerRows)})
}

// markdownTable renders rows as a markdown table. With no header row the rows are rendered without the
// separator line (a header would be invented otherwise); with several, the first is the markdown header and
// the others follow it.
func markdownTable(rows [][]string, headerRows int) string {
	var b strings.Builder
	for i, r := range rows {
		b.WriteString("|")
		for _, c := range r {
			b.WriteString(" ")
			b.WriteString(strings.ReplaceAll(c, "|", "\\|"))
			b.WriteString(" |")
		}
		b.WriteString("\n")
		if i == 0 && headerRows > 0 {
			b.WriteString("|")
			for range r {
				b.WriteString(" --- |")
			}
			b.WriteString("\n")
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}
