package extractive

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/chunk"
)

// maxHeadingChars is the longest line read as a heading when it has no "#": "4. 제출 서류", "부 칙".
const maxHeadingChars = 40

// line is a line of a passage with what the answerer needs to know of its layout.
type line struct {
	text    string // without the markdown marker that opened it
	item    bool   // a list item ("- …", "• …", "1. …" among other numbered lines)
	num     bool   // a numbered item ("1. …", "① …", "가. …"), not a bulleted one
	heading bool   // a heading: "# …", or a short line without closing punctuation that a paragraph follows
	table   bool   // a markdown table row or separator
	blank   bool
}

// listMarker returns the length in bytes of the bullet or number that opens l ("- ", "1. ", "가) "), or 0.
func listMarker(l string) (n int, numbered bool) {
	for _, b := range []string{"- ", "* ", "+ ", "• ", "· ", "○ ", "● ", "▪ ", "■ ", "□ "} {
		if strings.HasPrefix(l, b) {
			return len(b), false
		}
	}
	i := 0
	for i < len(l) && i < 3 && l[i] >= '0' && l[i] <= '9' {
		i++
	}
	if i == 0 {
		// A circled number or a Hangul letter enumerator: "① …", "가. …".
		r, size := utf8.DecodeRuneInString(l)
		switch {
		case r >= '①' && r <= '⑳':
			return size, true
		case strings.ContainsRune("가나다라마바사", r) && size < len(l) && (l[size] == '.' || l[size] == ')'):
			i = size
		default:
			return 0, false
		}
	}
	if i < len(l) && (l[i] == '.' || l[i] == ')') && i+1 < len(l) && l[i+1] == ' ' {
		return i + 2, true
	}
	return 0, false
}

// layout reads the lines of a passage: list items, headings and table rows.
func layout(text string) []line {
	raw := strings.Split(footnoteRe.ReplaceAllString(joinBrokenEndings(text), ""), "\n")
	out := make([]line, len(raw))
	numbered := make([]bool, len(raw))
	for i, r := range raw {
		l := strings.TrimSpace(r)
		switch {
		case l == "":
			out[i].blank = true
			continue
		case strings.HasPrefix(l, "|"):
			out[i] = line{text: l, table: true}
			continue
		case strings.HasPrefix(l, "#"):
			out[i] = line{text: strings.TrimSpace(strings.TrimLeft(l, "#")), heading: true}
			continue
		}
		n, num := listMarker(l)
		switch {
		case num:
			out[i] = line{text: l, item: true, num: true} // the number stays: it orders the steps
		case n > 0:
			out[i] = line{text: strings.TrimSpace(l[n:]), item: true}
		default:
			out[i] = line{text: strings.TrimSpace(strings.TrimLeft(l, ">*+-• "))}
		}
		numbered[i] = num
	}
	for i := range out {
		if out[i].blank || out[i].table || out[i].heading {
			continue
		}
		// A numbered line is an item when a neighbouring line is one too; alone ("4. 제출 서류"), it is
		// a numbered heading.
		if numbered[i] && !neighbourItem(out, i) {
			out[i].item, out[i].num = false, false
		}
		if !out[i].item && headingLike(out[i].text) && followedByText(out, i) {
			out[i].heading = true
		}
	}
	return out
}

func neighbourItem(ls []line, i int) bool {
	for _, d := range []int{-1, 1} {
		for j := i + d; j >= 0 && j < len(ls); j += d {
			if ls[j].blank {
				continue
			}
			if ls[j].item {
				return true
			}
			break
		}
	}
	return false
}

// headingLike reports whether l reads as a heading: short, without sentence-ending punctuation.
func headingLike(l string) bool {
	if utf8.RuneCountInString(l) > maxHeadingChars {
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(l)
	return !strings.ContainsRune(".!?。:;,)", r) && !unicode.IsDigit(r)
}

// followedByText reports whether a non-blank line follows line i, after a blank line.
func followedByText(ls []line, i int) bool {
	if i+1 >= len(ls) || !ls[i+1].blank {
		return false
	}
	for j := i + 2; j < len(ls); j++ {
		if !ls[j].blank {
			return !ls[j].table
		}
	}
	return false
}

// units splits a passage into candidate sentences: table rows whole (with their table's header), other
// lines by sentence. Each unit knows its line; a sentence that ends a line introducing a list (a lead-in),
// and a heading, carry the lines they introduce in block.
func units(text string) []sentence {
	ls := layout(text)
	var out []sentence
	header := ""
	first := make([]int, len(ls)) // the index in out of each line's first unit
	for i, l := range ls {
		first[i] = len(out)
		if l.table {
			switch {
			case isSeparatorRow(l.text):
			case i+1 < len(ls) && ls[i+1].table && isSeparatorRow(ls[i+1].text):
				header = l.text + "\n" + ls[i+1].text
			default:
				out = append(out, sentence{text: l.text, header: header, line: i})
			}
			continue
		}
		header = ""
		if l.blank {
			continue
		}
		spans := joinNumbers(l.text, chunk.Sentences(l.text))
		cite := citation(l.text)
		for j, sp := range spans {
			text := l.text[sp.Start:sp.End]
			out = append(out, sentence{text: text, line: i, item: l.item, heading: l.heading,
				lineEnd: j == len(spans)-1, whole: len(spans) == 1, cite: cite || citePiece(text), code: codeLine(l.text)})
		}
	}
	for k := range out {
		s := &out[k]
		if s.item && s.lineEnd {
			// "- React 앱의 모든 화면 업데이트는 세 단계로 이루어집니다." over "1. 트리거", "2. 렌더링", …: an item
			// that the items of the other kind follow introduces them, a list nested in its list.
			s.block = nestedAfter(out, ls, s.line)
			s.lead = len(s.block) > 0
			continue
		}
		if !s.lineEnd || s.item || s.header != "" {
			continue
		}
		switch {
		case s.heading:
			s.block = blockAfter(out, ls, s.line, true)
		case nextIsItem(ls, s.line):
			s.block = blockAfter(out, ls, s.line, false)
		case strings.HasSuffix(s.text, ":"):
			// "The agency estimates the following costs …:" announces what follows, a list or not (a
			// table read as lines, short lines one under another).
			s.block = colonBlock(out, k)
		}
		s.lead = len(s.block) > 0
	}
	return out
}

// colonBlock returns the positions of the units after the lead-in at k that ends in a colon: up to the
// first heading that opens prose (a heading-like line followed by a sentence), so that short lines, a
// table's header line and list items stay in it. The answer's length bounds it when it is shown.
func colonBlock(units []sentence, k int) []int {
	var out []int
	for j := k + 1; j < len(units); j++ {
		if u := units[j]; u.heading && (j+1 == len(units) || !units[j+1].heading && endsSentence(units[j+1].text)) {
			break
		}
		out = append(out, j)
	}
	return out
}

// endsSentence reports whether text ends in sentence-closing punctuation.
func endsSentence(text string) bool {
	r, _ := utf8.DecodeLastRuneInString(strings.TrimSpace(text))
	return strings.ContainsRune(".!?。", r)
}

// nextIsItem reports whether the next non-blank line after line i is a list item.
func nextIsItem(ls []line, i int) bool {
	for j := i + 1; j < len(ls); j++ {
		if !ls[j].blank {
			return ls[j].item
		}
	}
	return false
}

// nestedAfter returns the positions (in units) of the items after item line i that are of the other kind
// (numbered under a bulleted item, bulleted under a numbered one), up to the next line that is not one.
func nestedAfter(units []sentence, ls []line, i int) []int {
	var out []int
	for k := range units {
		u := units[k]
		if u.line <= i {
			continue
		}
		if l := ls[u.line]; !l.item || l.num == ls[i].num {
			break
		}
		out = append(out, k)
	}
	return out
}

// blockAfter returns the positions (in units) of what line i introduces: for a lead-in the list items that
// follow it; for a heading its section up to the next heading, ending after the first list in it.
func blockAfter(units []sentence, ls []line, i int, heading bool) []int {
	var out []int
	inList := false
	for k := range units {
		u := units[k]
		if u.line <= i {
			continue
		}
		if u.heading {
			break
		}
		if !heading && !u.item {
			break
		}
		if inList && !u.item {
			break
		}
		inList = inList || u.item
		out = append(out, k)
	}
	return out
}

// leaderDots are the dots that lead a table of contents' entry to its page number.
var leaderDots = regexp.MustCompile(`[.·…‥]{4,}|(\. ){4,}`)

// dottedNumberEnd matches text ending in a number with its period ("발의연월일 : 2023.", "제 3.").
var dottedNumberEnd = regexp.MustCompile(`(^|[^\pL\d])\d{1,4}\.$`)

// joinNumbers joins back the sentences that the sentence splitter cut after a number's period when a number
// follows: a date written "2023. 11. 9." is one value, not three sentences.
func joinNumbers(text string, spans []chunk.Span) []chunk.Span {
	out := spans[:0:0]
	for _, sp := range spans {
		if n := len(out); n > 0 && sp.Start < len(text) && text[sp.Start] >= '0' && text[sp.Start] <= '9' &&
			dottedNumberEnd.MatchString(strings.TrimRight(text[out[n-1].Start:out[n-1].End], " ")) {
			out[n-1].End = sp.End
			continue
		}
		out = append(out, sp)
	}
	return out
}

// answerable reports whether the unit s can be quoted as an answer sentence to a question asking for want:
// not a line without words ("02)6788-5533", "- 3 -") unless the question asks for a value, nor a line that
// is a fragment. A table row is read under its header and always can; so can a sentence of a longer line
// (what the splitter cut inside brackets is prose).
func answerable(s sentence, want ansType) bool {
	switch {
	case s.cite:
		return false // a reference list's entry (refs.go)
	case leaderDots.MatchString(s.text):
		return false // a table of contents' line, numbered or not: "1. … 구성현황 ········· 9"
	case s.whole && asksBack(s.text):
		// A line that is a question the document asks ("state를 교체한 후 업데이트하면 어떻게 되나요?", a
		// heading) answers none; a question inside a paragraph leads into the answer after it.
		return false
	case s.header != "":
		return true
	case wordless(s.text):
		return want != typeNone
	}
	return s.item || !s.whole || !fragment(s.text)
}

// wordless reports whether text has fewer than two letters: a phone number, a page number, a rule.
func wordless(text string) bool {
	n := 0
	for _, r := range text {
		if unicode.IsLetter(r) {
			if n++; n >= 2 {
				return false
			}
		}
	}
	return true
}

// fragment reports whether text is a piece of a line cut from its context: it closes a bracket before
// opening one ("위원회의 설치) 1 ∼ 4 (생 략)", the rest of a table cell read as a line), it is a line of a
// table of contents (leader dots), or it is a single word without closing punctuation ("The", what a page
// break left of a sentence).
func fragment(text string) bool {
	if n, _ := listMarker(text); n > 0 {
		text = text[n:]
	}
	if i := strings.IndexAny(text, ")]）"); i >= 0 && !strings.ContainsAny(text[:i], "([（") {
		return true
	}
	if leaderDots.MatchString(text) {
		return true // a table of contents' line: "I. 제안경위 ········· 1"
	}
	return len(strings.Fields(text)) < 2 && !endsSentence(text)
}
