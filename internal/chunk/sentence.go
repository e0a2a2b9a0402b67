package chunk

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Span is a half-open byte range [Start, End) of a string.
type Span struct{ Start, End int }

// abbreviations end with a period that does not end a sentence (compared lower-cased, without the final
// period). Words with an inner period ("e.g", "u.s") are recognised without being listed.
var abbreviations = map[string]bool{
	"mr": true, "mrs": true, "ms": true, "dr": true, "prof": true, "sr": true, "jr": true, "st": true,
	"vs": true, "cf": true, "al": true, "fig": true, "figs": true, "no": true, "nos": true, "vol": true,
	"pp": true, "p": true, "inc": true, "ltd": true, "co": true, "corp": true, "approx": true, "dept": true,
	"est": true, "eq": true, "eqs": true, "ref": true, "refs": true, "sec": true, "ch": true, "art": true,
	"gen": true, "gov": true, "rev": true, "jan": true, "feb": true, "mar": true, "apr": true, "jun": true,
	"jul": true, "aug": true, "sep": true, "sept": true, "oct": true, "nov": true, "dec": true, "ca": true,
	"ed": true, "eds": true, "op": true, "viz": true,
}

// maxQuote is how far (in bytes) from its opening mark a quotation keeps sentences from ending inside it.
const maxQuote = 600

// closers may follow a sentence's final punctuation and still belong to the sentence.
const closers = "\"'”’)]}」』》〉›»"

func isTerminator(r rune) bool {
	switch r {
	case '.', '?', '!', '。', '？', '！', '…', '‼', '⁇':
		return true
	}
	return false
}

// Sentences splits s into sentences and returns their spans, trimmed of surrounding white space, in order.
// A sentence ends at a line break, or after '.', '?', '!', '。' (and their full-width forms) followed by
// white space or the end of s; Korean sentences also end at '.' directly followed by Hangul ("했다.그"). A
// period does not end a sentence inside a number ("3.14"), after a list number that opens the sentence
// ("1."), after an initial ("J."), an abbreviation ("e.g.", "Mr.", "etc." before a lower-case word), or when
// a lower-case Latin word follows, nor inside a short quotation.
func Sentences(s string) []Span {
	var out []Span
	start := -1 // byte offset of the current sentence's first non-space rune
	emit := func(end int) {
		if start >= 0 {
			e := end
			for e > start {
				r, n := utf8.DecodeLastRuneInString(s[:e])
				if !unicode.IsSpace(r) {
					break
				}
				e -= n
			}
			if e > start {
				out = append(out, Span{start, e})
			}
		}
		start = -1
	}
	quote := -1 // byte offset of an open quotation mark
	track := func(r rune, i int) {
		switch {
		case r == '"' && quote < 0, r == '“' || r == '「' || r == '『':
			quote = i
		case r == '"', r == '”' || r == '」' || r == '』':
			quote = -1
		}
	}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == '\n' || r == '\r' {
			emit(i)
			quote = -1
			i += n
			continue
		}
		if start < 0 {
			if unicode.IsSpace(r) {
				i += n
				continue
			}
			start = i
		}
		if !isTerminator(r) {
			track(r, i)
			i += n
			continue
		}
		// Take the whole run of terminators ("?!", "...") and the closing quotes or brackets after it.
		j := i + n
		for j < len(s) {
			r2, n2 := utf8.DecodeRuneInString(s[j:])
			if !isTerminator(r2) {
				break
			}
			j += n2
		}
		k := j
		quoted := quote >= 0 && i-quote < maxQuote
		for k < len(s) {
			r2, n2 := utf8.DecodeRuneInString(s[k:])
			if !strings.ContainsRune(closers, r2) {
				break
			}
			track(r2, k)
			k += n2
		}
		// Inside a quotation a sentence only ends where the quotation does ("stop." She left); a long
		// quotation (or a stray quotation mark) stops counting as one.
		if (!quoted || quote < 0) && endsSentence(s, start, i, j, k) {
			emit(k)
		}
		i = k
	}
	emit(len(s))
	return out
}

// endsSentence decides whether the terminator run s[i:j] (followed by closers up to k) ends the sentence
// that starts at start.
func endsSentence(s string, start, i, j, k int) bool {
	if k >= len(s) {
		return true
	}
	next, _ := utf8.DecodeRuneInString(s[k:])
	prev, _ := utf8.DecodeLastRuneInString(s[:i])
	single := s[i:j] == "."
	if strings.ContainsAny(s[i:j], "。？！") {
		return true // CJK full-width punctuation is not followed by a space
	}
	if !unicode.IsSpace(next) {
		// "했다.그리고": Korean text sometimes omits the space after a sentence.
		return single && k == j && isHangul(prev) && isHangul(next)
	}
	if !single || unicode.IsSpace(prev) {
		return true // "?!", "...", or a period set apart from its sentence ("the results .")
	}
	// A lower-case Latin word after the period continues the sentence ("approx. three", "etc. and").
	if w := nextWord(s[k:]); w != "" {
		r, _ := utf8.DecodeRuneInString(w)
		if r < utf8.RuneSelf && unicode.IsLower(r) {
			return false
		}
	}
	if k != j { // a closer ("다.\"", "end.)") after the period
		return true
	}
	word := prevWord(s[start:i])
	if word == "" {
		return true
	}
	lw := strings.ToLower(word)
	if abbreviations[lw] || (strings.Contains(word, ".") && strings.IndexFunc(word, unicode.IsLetter) >= 0) {
		return false
	}
	first, size := utf8.DecodeRuneInString(word)
	if size == len(word) && unicode.IsUpper(first) && first < utf8.RuneSelf {
		return false // an initial: "J. R. R. Tolkien"
	}
	if len(strings.TrimSpace(s[start:i])) == len(word) && isListMarker(word) {
		return false // "1. Install", "a. Preface", "iv. Results"
	}
	return true
}

// prevWord returns the run of letters, digits and periods just before the end of s.
func prevWord(s string) string {
	e := len(s)
	b := e
	for b > 0 {
		r, n := utf8.DecodeLastRuneInString(s[:b])
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '.' {
			break
		}
		b -= n
	}
	return s[b:e]
}

// nextWord returns the first word after the white space at the start of s.
func nextWord(s string) string {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	e := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if e < 0 {
		return s
	}
	return s[:e]
}

func isListMarker(w string) bool {
	if len(w) <= 3 && strings.Trim(w, "0123456789") == "" {
		return true
	}
	if len(w) == 1 && w[0] < utf8.RuneSelf && unicode.IsLetter(rune(w[0])) {
		return true
	}
	return strings.Trim(strings.ToLower(w), "ivx") == "" && len(w) <= 4
}

func isHangul(r rune) bool { return unicode.Is(unicode.Hangul, r) }
