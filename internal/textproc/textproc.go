package textproc

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Joiners are the characters besides letters and digits that a term may contain. A store's full-text
// tokenizer must treat them as token characters so that every term is exactly one token.
const Joiners = ".-/_+#%"

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

// TermsVersion is the version of IndexTerms' output. A store records the version its keyword entries were
// made with and, when it opens a database indexed by an older one, derives every chunk's and document's terms
// again (docs/retrieval.md "Keyword analyzer"). Raise it with any change to the terms a text gives.
// 1: up to letter-spaced words; 2: with them (SpacedWords).
const TermsVersion = 2

// IndexTerms returns the keyword terms of a passage, in order, with repeats (term frequency matters),
// followed by the terms of the words it writes letter-spaced (SpacedWords: `문 의 처` also gives `문의처`,
// `문의`, `의처`). Stop-words are kept so that a query made only of stop-words can still match.
func IndexTerms(text string) []string {
	out := make([]string, 0, len(text)/3)
	add := func(t Term) { out = append(out, t.Text) }
	Analyze(text, add)
	for _, w := range SpacedWords(text, true) {
		Analyze(w, add)
	}
	return out
}

// QueryTerms returns the distinct keyword terms of a query, stop-words removed (unless nothing else is left).
func QueryTerms(text string) []string {
	seen := map[string]bool{}
	var out, stops []string
	Analyze(text, func(t Term) {
		if seen[t.Text] {
			return
		}
		seen[t.Text] = true
		if t.Stop {
			stops = append(stops, t.Text)
			return
		}
		out = append(out, t.Text)
	})
	if len(out) == 0 {
		return stops
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

// HyphenCompound reports whether term is alphabet words joined by hyphens ("boundari-layer" of
// "boundary-layer", "non-linear"). The analyzer gives such a token whole and as its parts; the whole form
// is a spelling — the same documents write "boundary layer" — whose rarity in the index would reward the
// hyphen rather than the words, so searches use the parts alone (docs/retrieval.md, branch cran).
func HyphenCompound(term string) bool {
	hyphen, letter := false, false
	for i, r := range term {
		switch {
		case r == '-':
			if i == 0 || !letter {
				return false
			}
			hyphen, letter = true, false
		case unicode.IsLetter(r) && !unicode.Is(unicode.Hangul, r) && !isCJK(r):
			letter = true
		default:
			return false
		}
	}
	return hyphen && letter
}
