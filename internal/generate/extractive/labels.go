package extractive

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/textproc"
)

// A form, a title page or a notice states its facts as labelled values: "일 시 2024년5월7일(화)", "장 소
// 환경노동위원회회의실", "DATES: The FAA must receive comments …". A question asking where, when or who is
// answered by the value whose label names that kind of fact, though the line shares no other word with the
// question: the record's cover says where the meeting was held in two words.

// labelKinds are the question words asking for a kind of fact and the labels that introduce such a fact.
var labelKinds = []struct {
	cues, labels []string
}{
	{[]string{"어디", "어느 곳", "어느곳", "장소", "where"}, []string{"장소", "위치", "소재지", "주소", "place", "location", "address", "venue"}},
	{[]string{"언제", "며칠", "날짜", "일시", "when", "what date", "what day"}, []string{"일시", "일자", "날짜", "일정", "date", "dates", "dated"}},
}

// askedLabels returns the labels that introduce what question asks for (labelKinds), or nil.
func askedLabels(question string) []string {
	q := " " + strings.ToLower(textproc.Normalize(question)) + " "
	for _, k := range labelKinds {
		for _, c := range k.cues {
			if c[0] < 0x80 && strings.Contains(q, " "+c+" ") || c[0] >= 0x80 && strings.Contains(q, c) {
				return k.labels
			}
		}
	}
	return nil
}

// labelsValue reports whether text is a line that gives a value under one of labels: the label opens it —
// letter-spaced as forms set it ("장 소", "일 시") or followed by a colon — and something follows it on the
// line.
func labelsValue(text string, labels []string) bool {
	if len(labels) == 0 {
		return false
	}
	head, rest := labelOf(text)
	if head == "" || strings.TrimSpace(strings.TrimLeft(rest, ":： ")) == "" {
		return false
	}
	for _, l := range labels {
		if head == l {
			return true
		}
	}
	return false
}

// labelOf splits a line into the label that opens it and the rest: a run of one-syllable Korean words
// ("장 소 …" → "장소"), or the words before a colon in the line's first 40 characters ("DATES: …" → "dates",
// "접수 기간 : …" → "접수기간"). "" when the line opens with no label.
func labelOf(text string) (string, string) {
	text = strings.TrimSpace(text)
	if i := strings.IndexAny(text, ":："); i > 0 && utf8.RuneCountInString(text[:i]) <= 40 {
		label := strings.ToLower(strings.Join(strings.Fields(text[:i]), ""))
		if hangul := strings.IndexFunc(label, func(r rune) bool { return unicode.Is(unicode.Hangul, r) }); hangul < 0 {
			// An English label keeps its words apart: "for further information contact" ends with its kind.
			f := strings.Fields(strings.ToLower(text[:i]))
			label = f[len(f)-1]
		}
		return label, text[i:]
	}
	ws := strings.Fields(text)
	n := 0
	for n < len(ws) && utf8.RuneCountInString(ws[n]) == 1 && unicode.Is(unicode.Hangul, []rune(ws[n])[0]) {
		n++
	}
	if n < 2 || n == len(ws) {
		return "", text
	}
	return strings.Join(ws[:n], ""), strings.Join(ws[n:], " ")
}

// An English question asking where ("Where did the airplane take off from?") asks for a place, which a
// sentence gives as a capitalised name after "from", "in", "at" or "near" ("…after takeoff from
// Soekarno-Hatta International Airport") that the question does not name.
var (
	wherePlace = regexp.MustCompile(`\b(?:from|in|at|near)\s+(?:the\s+)?([A-Z][\p{L}-]+)`)
	asksWhere  = regexp.MustCompile(`(?i)^\s*where\b`)
	// asksName is a question for what a thing is called ("무엇이라고 부르나요?", "뭐라고 하나요?", "What is
	// … called?"), and namesThing a sentence that gives a thing its name ("…를 업데이터 함수라고 부릅니다",
	// "… is called a closure", "… known as …").
	asksName   = regexp.MustCompile(`(?i)(?:무엇|뭐|무어|어떻게)(?:이)?라고\s*(?:부르|부릅|불러|불리|하나|합니|해요|하는|칭하)|what\s+(?:is|are|was|were)\b.*\b(?:called|known\s+as|named|termed)\b`)
	namesThing = regexp.MustCompile(`(?i)[\p{L}\p{N})\]]\s*(?:이)?라고\s*(?:부르|부릅|불러|불리|불린|한다|합니다|하며|하고|칭한|칭하)|(?:이)?라\s*(?:부르|부릅|불린|칭한)|\b(?:called|known\s+as|named|termed|referred\s+to\s+as)\b`)
)

// asksForm returns a test of whether a sentence shows the kind of value question asks for by its form, or
// nil when the question asks for none of these.
func asksForm(question string) func(text string) bool {
	q := textproc.Normalize(question)
	switch {
	case asksName.MatchString(q):
		return namesThing.MatchString
	case asksWhere.MatchString(q):
		lower := strings.ToLower(q)
		return func(text string) bool {
			for _, m := range wherePlace.FindAllStringSubmatch(text, -1) {
				if !strings.Contains(lower, strings.ToLower(m[1])) {
					return true // a place the question does not name
				}
			}
			return false
		}
	}
	return nil
}
