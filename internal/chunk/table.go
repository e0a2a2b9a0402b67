package chunk

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/rag"
)

// line is a rune span [start, end) relative to a block's text.
type line struct{ start, end int }

// lines splits text into lines (rune spans, without the line breaks).
func lines(text []rune) []line {
	var out []line
	start := 0
	for i, r := range text {
		if r == '\n' {
			out = append(out, line{start, i})
			start = i + 1
		}
	}
	return append(out, line{start, len(text)})
}

// isSeparatorRow reports whether l is a markdown table's header separator ("|---|:--:|").
func isSeparatorRow(l string) bool {
	l = strings.TrimSpace(l)
	if !strings.Contains(l, "-") {
		return false
	}
	return strings.Trim(l, "|-: ") == ""
}

// table emits a table block as one chunk when it fits, otherwise as pieces of whole rows, each starting with
// the header row(s).
func (s *splitter) table(b rag.Block, off int) {
	text := []rune(b.Text)
	if len(strings.TrimSpace(b.Text)) == 0 {
		return
	}
	path := strings.Join(s.pathNames(), " > ")
	emit := func(body string, start, end int) {
		c := rag.Chunk{Kind: rag.KindTable, Text: body, PageStart: b.Page, PageEnd: b.Page,
			Section: path, StartOffset: start, EndOffset: end}
		markOf(b).set(&c)
		s.out = append(s.out, c)
	}
	if len(text) <= s.opt.Size {
		emit(b.Text, off, off+len(text))
		return
	}
	// Rows are lines; in a pipe table a line that does not start with '|' continues the row above it.
	var rows []line
	pipes := strings.HasPrefix(strings.TrimSpace(b.Text), "|")
	for _, l := range lines(text) {
		str := strings.TrimSpace(string(text[l.start:l.end]))
		if str == "" {
			continue
		}
		if pipes && len(rows) > 0 && !strings.HasPrefix(str, "|") {
			rows[len(rows)-1].end = l.end
			continue
		}
		rows = append(rows, l)
	}
	headerRows := b.HeaderRows
	if headerRows == 0 && len(rows) > 1 && isSeparatorRow(string(text[rows[1].start:rows[1].end])) {
		headerRows = 1
	}
	h, seen := 0, 0
	for h < len(rows) && (seen < headerRows || isSeparatorRow(string(text[rows[h].start:rows[h].end]))) {
		if !isSeparatorRow(string(text[rows[h].start:rows[h].end])) {
			seen++
		}
		h++
	}
	header := ""
	if h > 0 && h < len(rows) {
		header = string(text[rows[0].start:rows[h-1].end])
	}
	room := s.opt.Size // characters left for rows in a piece
	if header != "" {
		room -= utf8.RuneCountInString(header) + 1
	}
	if header != "" && room < s.opt.Size/4 {
		// A header that fills most of a chunk is not repeated: the rows would be cut too thin.
		header, h, room = "", 0, s.opt.Size
	}
	piece := func(body string) string {
		if header == "" {
			return body
		}
		return header + "\n" + body
	}
	first := true
	for i := h; i < len(rows); {
		r := rows[i]
		if r.end-r.start > room {
			// A row longer than a chunk: its words are cut into pieces, each under the header.
			for _, sp := range cutRunes(text, r.start, r.end, room) {
				emit(piece(string(text[sp.Start:sp.End])), off+sp.Start, off+sp.End)
			}
			first = false
			i++
			continue
		}
		j := i + 1
		for j < len(rows) && rows[j].end-r.start <= room {
			j++
		}
		start := off + r.start
		if first && h > 0 && header != "" {
			start = off + rows[0].start
		}
		emit(piece(string(text[r.start:rows[j-1].end])), start, off+rows[j-1].end)
		first = false
		i = j
	}
}

// cutRunes splits text[start:end] into spans of at most limit runes at white space where possible.
func cutRunes(text []rune, start, end, limit int) []Span {
	sub := splitter{doc: text}
	return sub.cutWords(start, end, limit)
}

// declaration reports whether a code line at the left margin starts a new top-level declaration, a good
// place to cut code that has no blank lines.
func declaration(l string) bool {
	if l == "" || unicode.IsSpace(rune(l[0])) {
		return false
	}
	for _, kw := range []string{"func ", "def ", "class ", "type ", "fn ", "pub ", "impl ", "struct ",
		"interface ", "function ", "export ", "public ", "private ", "protected ", "static ", "async ",
		"const ", "var ", "let ", "package ", "module ", "@", "#include", "CREATE ", "create "} {
		if strings.HasPrefix(l, kw) {
			return true
		}
	}
	return false
}

// commentLine reports a line that is only a comment.
func commentLine(l string) bool {
	t := strings.TrimSpace(l)
	for _, p := range []string{"//", "#", "/*", "*", "--", ";"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// code emits a code block as chunks of whole segments: a segment ends at a blank line or before a
// declaration at the left margin; a segment longer than a chunk is cut at lines, then at words.
func (s *splitter) code(b rag.Block, off int) {
	text := []rune(b.Text)
	if len(strings.TrimSpace(b.Text)) == 0 {
		return
	}
	path := strings.Join(s.pathNames(), " > ")
	var segs []line
	open, comments := false, false
	all := lines(text)
	for _, l := range all {
		str := string(text[l.start:l.end])
		if strings.TrimSpace(str) == "" {
			open = false
			continue
		}
		// A declaration starts a segment, unless the segment so far is the comment that documents it.
		if open && (!declaration(str) || comments) {
			segs[len(segs)-1].end = l.end
			comments = comments && commentLine(str)
			continue
		}
		segs = append(segs, l)
		open, comments = true, commentLine(str)
	}
	// Over-long segments become their lines; over-long lines are cut at words.
	var units []line
	for _, sg := range segs {
		if sg.end-sg.start <= s.opt.Size {
			units = append(units, sg)
			continue
		}
		for _, l := range all {
			if l.start < sg.start || l.end > sg.end || strings.TrimSpace(string(text[l.start:l.end])) == "" {
				continue
			}
			for _, sp := range cutRunes(text, l.start, l.end, s.opt.Size) {
				units = append(units, line{sp.Start, sp.End})
			}
		}
	}
	for i := 0; i < len(units); {
		j := i + 1
		for j < len(units) && units[j].end-units[i].start <= s.opt.Size {
			j++
		}
		start, end := units[i].start, units[j-1].end
		section := path
		if b.Line > 0 {
			section = codeSection(b.Symbol, b.Line+countLines(text[:start]), b.Line+countLines(text[:end]))
		}
		s.out = append(s.out, rag.Chunk{Kind: rag.KindCode, Text: string(text[start:end]), PageStart: b.Page,
			PageEnd: b.Page, Section: section, StartOffset: off + start, EndOffset: off + end})
		i = j
	}
}

// codeSection is the section of a piece of a source file's declaration: its symbol path and line range,
// "extract.Extractor.Extract (lines 97–160)"; every piece of a long declaration keeps the symbol.
func codeSection(symbol string, first, last int) string {
	lines := fmt.Sprintf("lines %d–%d", first, last)
	if first == last {
		lines = fmt.Sprintf("line %d", first)
	}
	if symbol == "" {
		return lines
	}
	return symbol + " (" + lines + ")"
}

// CodeSymbol returns the symbol path of a code chunk's section made by codeSection, "" for any other section.
func CodeSymbol(section string) string {
	i := strings.LastIndex(section, " (line")
	if i <= 0 || !strings.HasSuffix(section, ")") {
		return ""
	}
	return section[:i]
}

func countLines(r []rune) int {
	n := 0
	for _, c := range r {
		if c == '\n' {
			n++
		}
	}
	return n
}
