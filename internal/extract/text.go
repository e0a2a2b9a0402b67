package extract

import (
	"strings"

	"github.com/ragd/ragd/internal/rag"
)

// extractText splits plain text into paragraphs at blank lines.
func extractText(name string, data []byte, b *budget) (*rag.Extracted, error) {
	s, err := decodeText(name, data)
	if err != nil {
		return nil, err
	}
	l := blockList{budget: b}
	for _, p := range splitParagraphs(s) {
		l.paragraph(0, p)
		if l.err() != nil {
			break
		}
	}
	return &rag.Extracted{Blocks: l.blocks}, l.err()
}

func splitParagraphs(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	var out []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.Join(cur, "\n"))
			cur = cur[:0]
		}
	}
	for _, line := range strings.Split(s, "\n") {
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		cur = append(cur, line)
	}
	flush()
	return out
}

// maxCodeBlock is the size above which a code block is split again at blank lines inside it, so that one
// huge declaration does not become one block the chunker must cut blindly.
const maxCodeBlock = 4000

// plainCode splits source code of a language without a declaration splitter (see code.go) into blocks at
// top-level boundaries: a new block starts at a line that is not indented and follows a blank line, so a
// function stays with its comment and its body (blank lines inside an indented body do not split it).
func plainCode(l *blockList, s string) {
	var cur []string
	blank := false
	flush := func() {
		if len(cur) == 0 {
			return
		}
		text := strings.Join(cur, "\n")
		if len(text) > maxCodeBlock {
			for _, part := range splitLong(cur) {
				l.code(0, part)
			}
		} else {
			l.code(0, text)
		}
		cur = cur[:0]
	}
	for _, line := range strings.Split(s, "\n") {
		if strings.TrimSpace(line) == "" {
			blank = true
			cur = append(cur, line)
			continue
		}
		topLevel := line[0] != ' ' && line[0] != '\t' && !isCloser(line)
		if blank && topLevel {
			flush()
		}
		blank = false
		cur = append(cur, line)
	}
	flush()
}

// isCloser reports lines that close a construct (`}`, `);`, `end`) and so belong to the block above.
func isCloser(line string) bool {
	t := strings.TrimSpace(line)
	return strings.HasPrefix(t, "}") || strings.HasPrefix(t, ")") || strings.HasPrefix(t, "]") || t == "end" || strings.HasPrefix(t, "</")
}

// splitLong cuts lines into parts of at most maxCodeBlock bytes, at blank lines where possible.
func splitLong(lines []string) []string {
	var parts []string
	var cur []string
	size := 0
	lastBlank := -1
	for _, line := range lines {
		cur = append(cur, line)
		size += len(line) + 1
		if strings.TrimSpace(line) == "" {
			lastBlank = len(cur) - 1
		}
		if size > maxCodeBlock {
			cut := len(cur)
			if lastBlank > 0 {
				cut = lastBlank
			}
			parts = append(parts, strings.Join(cur[:cut], "\n"))
			cur = append([]string(nil), cur[cut:]...)
			size = 0
			for _, c := range cur {
				size += len(c) + 1
			}
			lastBlank = -1
		}
	}
	if len(cur) > 0 {
		parts = append(parts, strings.Join(cur, "\n"))
	}
	return parts
}
