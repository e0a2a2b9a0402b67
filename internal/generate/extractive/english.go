package extractive

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/textproc"
)

// englishFrames are the analyzer stems of the English frame words (frameWords): "called", "named" and
// "names" frame a question as "call" and "name" do ("What was Firefox originally called?" asks for a name;
// "originally" says which).
var englishFrames = sync.OnceValue(func() map[string]bool {
	out := map[string]bool{}
	for _, f := range frameWords {
		if f[0] < 0x80 {
			if t := textproc.IndexTerms(f); len(t) > 0 {
				out[t[0]] = true
			}
		}
	}
	return out
})

// englishFrame reports whether the English question word w is a form of a frame word.
func englishFrame(w string) bool {
	if w == "" || w[0] >= 0x80 || !isLatin(w) {
		return false
	}
	t := textproc.IndexTerms(w)
	return len(t) > 0 && englishFrames()[t[0]]
}

// howManyRe finds what an English question counts: "how many people …", "How many employees …".
var howManyRe = regexp.MustCompile(`(?i)\bhow many\s+([a-z]+)`)

// englishCounted returns the noun an English how-many question counts, lower-cased ("people"), or "".
func englishCounted(question string) string {
	if m := howManyRe.FindStringSubmatch(question); m != nil {
		return strings.ToLower(m[1])
	}
	return ""
}

var (
	// countNumberRe is a number: "189", "1,500", "2.5" (countAt reads the words after it).
	countNumberRe = regexp.MustCompile(`\d+(?:,\d{3})*(?:\.\d+)?`)
	wordRe        = regexp.MustCompile(`^[\s(]*([A-Za-z]+)`)
)

// labelWords name a thing by its number rather than count it: "Flight 043", "Vol. 85", "page 2".
var labelWords = map[string]bool{"flight": true, "model": true, "no": true, "vol": true, "section": true, "part": true,
	"page": true, "p": true, "pp": true, "chapter": true, "article": true, "item": true, "table": true, "figure": true,
	"fig": true, "rule": true, "docket": true, "room": true, "number": true, "version": true, "route": true,
	"step": true, "phase": true, "level": true, "grade": true, "class": true, "unit": true, "suite": true}

// measureWords are units a number measures in, rather than things it counts; "of" ends the search for the
// counted noun ("189 of the passengers" says a part, not what the number counts).
var measureWords = map[string]bool{"seconds": true, "minutes": true, "hours": true, "days": true, "weeks": true,
	"months": true, "years": true, "feet": true, "foot": true, "meters": true, "metres": true, "miles": true,
	"kilometers": true, "km": true, "knots": true, "pounds": true, "lbs": true, "kilograms": true, "kg": true,
	"tons": true, "inches": true, "degrees": true, "percent": true, "dollars": true, "cents": true, "am": true,
	"pm": true, "of": true}

// countsIn reports whether text states a count: a number the question (its tokens in seen) does not give,
// that is no year, no part of a date, time or code ("07/01/2015", "737–8", "10:30") and no label's number
// ("Flight 043", "Vol. 85"). With noun, the number must count it or another plural noun that is no unit:
// "How many people died …?" is answered by "189 fatalities", not "5 seconds".
func countsIn(text string, seen map[string]bool, noun string) bool {
	return countAt(text, seen, noun) >= 0
}

// countAt is countsIn that returns the byte offset of the count in text, or -1.
func countAt(text string, seen map[string]bool, noun string) int {
	for _, ix := range countNumberRe.FindAllStringIndex(text, -1) {
		tok := text[ix[0]:ix[1]]
		if seen[tok] || isYear(tok) {
			continue
		}
		before, after := text[:ix[0]], text[ix[1]:]
		if b, _ := utf8.DecodeLastRuneInString(before); strings.ContainsRune("/-–—:.$#", b) || unicode.IsLetter(b) {
			continue
		}
		if a, _ := utf8.DecodeRuneInString(after); strings.ContainsRune("/-–—:", a) || unicode.IsLetter(a) {
			continue
		}
		if monthBefore.MatchString(before) {
			continue // "October 29, 2018"
		}
		if f := strings.Fields(before); len(f) > 0 {
			prev := strings.Trim(f[len(f)-1], ".,;:()")
			if labelWords[strings.ToLower(prev)] {
				continue
			}
		}
		if noun == "" {
			return ix[0]
		}
		rest := after
		for k := 0; k < 2; k++ {
			m := wordRe.FindStringSubmatchIndex(rest)
			if m == nil {
				break
			}
			w := strings.ToLower(rest[m[2]:m[3]])
			if measureWords[w] {
				break
			}
			if w == noun || strings.TrimSuffix(w, "s") == strings.TrimSuffix(noun, "s") ||
				len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
				return ix[0]
			}
			rest = rest[m[1]:]
		}
	}
	return -1
}

// monthBefore matches a month name just before a day: "October 29".
var monthBefore = regexp.MustCompile(`(?i)\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+$`)

// otherEvent reports whether an English when-question is answered by the date of another event: the
// sentences shown (and their neighbours on their lines) hold names the question gives and none of its
// other focus words, which say what happened ("When did the FAA lift the 737 MAX grounding?" over "On
// November 7, 2018, the FAA issued Emergency AD 2018–23–51 …": the FAA and the 737 MAX, but no lifting and
// no grounding).
func otherEvent(question string, r ranking, shown []sentence) bool {
	if r.want != typeTime || len(shown) == 0 || !englishQuestion(question) {
		return false
	}
	var event, names []int
	for i, w := range r.qw {
		switch {
		case w.history || w.fill || !w.focus:
		case w.name:
			names = append(names, i)
		default:
			event = append(event, i)
		}
	}
	if len(names) == 0 || len(event) == 0 {
		return false
	}
	holds := func(s sentence, words []int) bool {
		return slices.ContainsFunc(words, func(i int) bool { return i < len(s.deg) && s.deg[i] >= 0.5 })
	}
	named := false
	for _, s := range shown {
		for _, u := range append([]sentence{s}, r.lineNeighbours(s)...) {
			if holds(u, event) {
				return false
			}
			named = named || holds(u, names)
		}
	}
	return named
}

// englishQuestion reports whether question is written in Latin letters with no Hangul.
func englishQuestion(question string) bool {
	latin := false
	for _, r := range question {
		if unicode.Is(unicode.Hangul, r) {
			return false
		}
		latin = latin || r < unicode.MaxLatin1 && unicode.IsLetter(r)
	}
	return latin
}

// whichNounRe finds the kind of thing an English which-question asks for: "Which office publishes …?",
// "What agency …?" (not "What is …?", "Which does …?").
var whichNounRe = regexp.MustCompile(`(?i)^\s*(?:which|what)\s+([a-z]{3,})\b`)

// englishClass returns the lower-cased noun an English which-question asks an instance of ("office"), when
// the question words hold it as a focus word, or "".
func englishClass(question string, qw []qword) string {
	m := whichNounRe.FindStringSubmatch(question)
	if m == nil || !englishQuestion(question) {
		return ""
	}
	w := strings.ToLower(m[1])
	if textproc.EnglishStopWord(w) || slices.Contains([]string{"kind", "type", "sort", "part", "year", "date", "time", "day", "month", "number", "way"}, w) {
		return ""
	}
	if !slices.ContainsFunc(qw, func(q qword) bool { return q.focus && !q.frame && strings.HasPrefix(w, q.terms[0]) }) {
		return ""
	}
	return w
}

// namesEnglishInstance reports whether text names an instance of class by a name in capitals that holds
// the class word and a capitalised word the question does not give: "Executive Office for United States
// Trustees" names an office, "Office rent for the standing trustee" does not.
func namesEnglishInstance(text, class, question string) bool {
	asked := map[string]bool{}
	for _, w := range strings.Fields(strings.ToLower(question)) {
		asked[strings.Trim(w, ".,;:?!()\"'")] = true
	}
	words := strings.Fields(text)
	for i, w := range words {
		if t := strings.Trim(w, ".,;:()\"'"); strings.ToLower(t) != class || !titleCase(t) {
			continue // "SAFETY OF OFFICE AND EMPLOYEES" is a heading in capitals, no name
		}
		// The run of capitalised words round it, through "of", "for", "the", "and".
		other := false
		for _, dir := range []int{-1, 1} {
			for j := i + dir; j >= 0 && j < len(words); j += dir {
				c := strings.Trim(words[j], ".,;:()\"'")
				if c == "" {
					break
				}
				if len(c) > 3 && strings.ToUpper(c) == c {
					break
				}
				if r := []rune(c)[0]; !unicode.IsUpper(r) {
					if slices.Contains([]string{"of", "for", "the", "and", "on"}, c) {
						continue
					}
					break
				}
				if !asked[strings.ToLower(c)] && !asked[strings.ToLower(strings.TrimSuffix(c, "s"))] {
					other = true
				}
				if strings.ContainsAny(words[j], ".,;:") && dir > 0 {
					break
				}
			}
		}
		if other {
			return true
		}
	}
	return false
}

// titleCase reports whether w is written with a capital and then small letters: "Office", not "OFFICE".
func titleCase(w string) bool {
	rs := []rune(w)
	return len(rs) > 1 && unicode.IsUpper(rs[0]) && strings.ToLower(string(rs[1:])) == string(rs[1:])
}
