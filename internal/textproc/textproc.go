// Package textproc normalises text and holds the keyword analyzer shared by every store, so that the
// embedded and the PostgreSQL store index and query exactly the same terms.
package textproc

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Normalize returns s in NFKC with control characters removed and runs of spaces collapsed (newlines kept).
func Normalize(s string) string {
	s = norm.NFKC.String(s)
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteRune('\n')
			space = false
		case unicode.IsSpace(r):
			if !space {
				b.WriteRune(' ')
			}
			space = true
		case unicode.IsControl(r) || r == '\uFEFF' || r == '\u200B':
		default:
			b.WriteRune(r)
			space = false
		}
	}
	return b.String()
}

// IndexTerms returns the keyword terms of a passage, in order, with repeats (term frequency matters).
// PRELIMINARY: split on non-letters/digits and lower-case; the full analyzer replaces it.
func IndexTerms(text string) []string {
	return strings.FieldsFunc(strings.ToLower(Normalize(text)), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// QueryTerms returns the distinct keyword terms of a query, stop-words removed (unless nothing else is left).
func QueryTerms(text string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range IndexTerms(text) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// DetectLanguage returns "ko" when Hangul makes up a noticeable share of the letters of s, else "en".
func DetectLanguage(s string) string {
	var hangul, letters int
	for _, r := range s {
		if unicode.Is(unicode.Hangul, r) {
			hangul++
			letters++
		} else if unicode.IsLetter(r) {
			letters++
		}
	}
	if letters > 0 && hangul*5 >= letters {
		return "ko"
	}
	return "en"
}
