package answer

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/chunk"
	"github.com/ragd/ragd/internal/rag"
)

// minPageMatch is the least share of an answer sentence's words a passage sentence must hold to be the
// sentence it rests on (an extractive answer quotes it whole or abridged; a generated one rewords it).
const minPageMatch = 0.6

// citedPages narrows the pages of a cited source whose chunk crosses a page to those of the passage
// sentences that the answer's sentences citing it rest on, so that the source names the page of what was
// cited rather than every page the chunk touches. A source whose cited sentences cannot be told (a
// reworded answer) keeps its chunk's pages.
func citedPages(answer string, src rag.Source) (first, last int) {
	first, last = src.PageStart, src.PageEnd
	if len(src.PageBreaks) == 0 {
		return first, last
	}
	passage := src.Text
	spans := chunk.Sentences(passage)
	words := make([]map[string]bool, len(spans))
	for i, sp := range spans {
		words[i] = wordSet(passage[sp.Start:sp.End])
	}
	found := false
	for _, cited := range citedTexts(answer, src.N) {
		for _, sp := range chunk.Sentences(cited) {
			aw := wordSet(cited[sp.Start:sp.End])
			if len(aw) == 0 {
				continue
			}
			best, bestScore := -1, minPageMatch
			for i := range spans {
				n := 0
				for w := range aw {
					if words[i][w] {
						n++
					}
				}
				if score := float64(n) / float64(len(aw)); score >= bestScore {
					best, bestScore = i, score
				}
			}
			if best < 0 {
				continue
			}
			start := utf8.RuneCountInString(passage[:spans[best].Start])
			end := start + utf8.RuneCountInString(passage[spans[best].Start:spans[best].End])
			p, q := src.PagesOf(start, end)
			if !found {
				first, last, found = p, q, true
				continue
			}
			first, last = min(first, p), max(last, q)
		}
	}
	return first, last
}

// citedTexts returns the pieces of answer that cite passage n: the text before each "[n]" marker back to
// the previous marker or line break (markers side by side, "[1][2]", share their text).
func citedTexts(answer string, n int) []string {
	var out []string
	from, prevText := 0, ""
	for _, m := range markerRe.FindAllStringSubmatchIndex(answer, -1) {
		text := answer[from:m[0]]
		if k := strings.LastIndexByte(text, '\n'); k >= 0 {
			text = text[k+1:]
		}
		if strings.TrimSpace(text) == "" {
			text = prevText
		}
		if num, err := strconv.Atoi(answer[m[2]:m[3]]); err == nil && num == n && strings.TrimSpace(text) != "" {
			out = append(out, text)
		}
		from, prevText = m[1], text
	}
	return out
}

var markerRe = regexp.MustCompile(`\[(\d+)\]`)

// wordSet is the set of a text's words, lower-cased, without punctuation and citation markers.
func wordSet(s string) map[string]bool {
	out := map[string]bool{}
	s = markerRe.ReplaceAllString(s, " ")
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		out[w] = true
	}
	return out
}
