package extractive

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/textproc"
)

// ansType is the kind of thing a question asks for, when its wording says so.
type ansType int

const (
	typeNone ansType = iota
	typeTime
	typeNumber
)

// Question cues, checked in order on the normalised, lower-cased question: time before number, since "몇
// 년" asks for a year.
var typeCues = []struct {
	t    ansType
	cues []string
}{
	{typeTime, []string{"언제", "몇 년", "몇년", "연도", "년도", "날짜", "몇 월", "몇월", "며칠", "시기", "시점", "날은", "기간", "해는", "해에",
		"when", "what year", "which year", "what date", "what day", "what month", "what century", "what time", "what period",
		"which period"}},
	{typeNumber, []string{"몇", "얼마", "수는", "개수", "갯수", "숫자", "인원", "규모", "비율", "퍼센트", "금액", "가격", "번호",
		"오래 걸", "how many", "how much", "what number", "number", "numbers", "what percentage", "how long", "how far", "how old", "how tall",
		"how big", "how large", "how high", "how fast"}},
}

func answerType(question string) ansType {
	q := " " + strings.ToLower(textproc.Normalize(question)) + " "
	if words := splitWords(question); len(words) > 0 && slices.ContainsFunc(copulaEntityWords, func(p string) bool { return strings.HasPrefix(words[len(words)-1], p) }) &&
		!slices.ContainsFunc(words, func(w string) bool {
			return strings.HasPrefix(w, "몇") || strings.HasPrefix(w, "얼마") || strings.HasPrefix(w, "언제")
		}) {
		// "…회담 기간 중 합의하여 … 실시하기로 한 행사는 무엇인가?" asks for a thing, whatever words it says on the way.
		return typeNone
	}
	for _, c := range typeCues {
		for _, cue := range c.cues {
			if strings.Contains(q, cue) {
				if cue[0] < 0x80 && !strings.Contains(q, " "+cue+" ") {
					continue // English cues are whole words
				}
				if wordCues[cue] && !strings.Contains(q, " "+cue) {
					continue // "수는" opens a word: "선수는", "가수는" name people
				}
				return c.t
			}
		}
	}
	return typeNone
}

// priceNouns name an amount of money; a how-much question about one ("월세는 얼마인가요?", "What is the
// fee?") asks for a sum, which a count ("총 96세대") or an area ("전용 26m2") does not give.
var priceNouns = []string{"가격", "값", "비용", "요금", "금액", "임대료", "월세", "전세", "보증금", "관리비", "수수료", "급여", "월급", "연봉",
	"시급", "예산", "세금", "상금", "지원금", "계약금", "납부액", "매출", "price", "cost", "fee", "fees", "rent", "salary", "budget"}

// priceSuffixes end Korean nouns of money: 입장료, 수강료, 교통비, 장학금 (and others: 자료, 준비, 지금, which
// a question asks "얼마" of less often).
var priceSuffixes = []string{"료", "비", "금"}

// asksPrice reports whether question asks how much something costs: a how-much word ("얼마", "how much",
// "몇 원") beside a noun of money, or "몇 원"/"몇 달러" itself.
func asksPrice(question string) bool {
	q := strings.ToLower(textproc.Normalize(question))
	if strings.Contains(q, "몇 원") || strings.Contains(q, "몇원") || strings.Contains(q, "몇 달러") {
		return true
	}
	if !strings.Contains(q, "얼마") && !strings.Contains(q, "how much") {
		return false
	}
	for _, w := range splitWords(q) {
		stem := w
		for _, p := range []string{"은", "는", "이", "가", "을", "를", "도", "의"} {
			if st, ok := strings.CutSuffix(w, p); ok && utf8.RuneCountInString(st) >= 1 {
				stem = st
				break
			}
		}
		if slices.Contains(priceNouns, stem) || slices.Contains(priceNouns, w) {
			return true
		}
		if n := utf8.RuneCountInString(stem); n >= 2 && n <= 4 && unicode.Is(unicode.Hangul, []rune(stem)[0]) &&
			slices.ContainsFunc(priceSuffixes, func(x string) bool { return strings.HasSuffix(stem, x) }) &&
			strings.Contains(strings.ReplaceAll(q, "얼마나", ""), "얼마") {
			// "얼마나" asks how long or how far as well ("준비는 얼마나 걸리나요?"); "입장료는 얼마예요?" asks a price.
			return true
		}
	}
	return false
}

// moneyRe matches a sum of money: "15만원", "150,000원", "950만 원", "$3.5", "€20", "25 dollars", "10,000 KRW".
var moneyRe = regexp.MustCompile(`(?i)\d[\d,.]*\s?(?:[천만억조]\s?)*(?:원|달러|엔|유로|위안)|[$€£¥₩]\s?\d|\d[\d,.]*\s?(?:dollars?|usd|krw|won|euros?|yen)\b`)

// holdsMoney reports whether text states a sum of money.
func holdsMoney(text string) bool { return moneyRe.MatchString(text) }

// wordCues are the Korean cues that must open a word: inside one they are a part of another noun ("선수는",
// "교수는", "대규모", "피해는").
var wordCues = map[string]bool{"수는": true, "규모": true, "해는": true, "해에": true}

var (
	// numberRe's group is the unit of a date or length of time: "2023년", "45일", "45 days", "six months"
	// is no number.
	numberRe = regexp.MustCompile(`\d[\d,.]*\s?(?:[천만억]\s?)?(년대|년|개월|월|주|일|세기|시간|시|분|초|days?\b|weeks?\b|months?\b|years?\b|hours?\b|minutes?\b)?`)
	monthRe  = regexp.MustCompile(`(?i)\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d`)
)

// typedTokens returns the numbers (with a date unit when one follows) of text, for telling which ones a
// sentence adds to the question.
func typedTokens(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range numberRe.FindAllString(text, -1) {
		out[strings.ReplaceAll(m, " ", "")] = true
	}
	return out
}

// hasNewType reports whether text holds a token of type t that the question (its tokens in seen) does not.
func hasNewType(text string, t ansType, seen map[string]bool) bool {
	return newTypeAt(text, t, seen) >= 0
}

// newTypeAt is hasNewType that returns the byte offset of the token in text, or -1.
func newTypeAt(text string, t ansType, seen map[string]bool) int {
	for _, ix := range numberRe.FindAllStringSubmatchIndex(text, -1) {
		tok := strings.ReplaceAll(text[ix[0]:ix[1]], " ", "")
		if seen[tok] {
			continue
		}
		switch t {
		case typeNumber:
			if ix[2] < 0 && isYear(strings.TrimRight(tok, ".,")) && nameAfter(text[ix[1]:]) {
				continue // "2050 탄소중립녹색성장위원회" is a name, not a count of it
			}
			return ix[0]
		case typeTime:
			// A bare year names a thing when a Korean noun follows it ("2050 탄소중립위원회"); as a date it
			// takes "년" or stands alone ("in 2014").
			if ix[2] >= 0 || isYear(strings.TrimRight(tok, ".,")) && !beforeHangul(text[ix[1]:]) {
				if m := monthRe.FindStringIndex(text); m != nil && m[0] < ix[0] {
					return m[0] // "October 29, 2018" starts at its month
				}
				return ix[0]
			}
		}
	}
	if m := monthRe.FindStringIndex(text); t == typeTime && m != nil {
		return m[0]
	}
	return -1
}

// hasNewCount reports whether text holds a number the question (its tokens in seen) does not, as
// hasNewType does for typeNumber, a year opening a name ("2050 탄소중립위원회") aside; with skipDates, a
// number with a unit of time ("2023년", "9일", "45 days") does not count either.
func hasNewCount(text string, seen map[string]bool, skipDates bool) bool {
	for _, ix := range numberRe.FindAllStringSubmatchIndex(text, -1) {
		tok := strings.ReplaceAll(text[ix[0]:ix[1]], " ", "")
		if seen[tok] || skipDates && ix[2] >= 0 || ix[2] < 0 && isYear(strings.TrimRight(tok, ".,")) && nameAfter(text[ix[1]:]) {
			continue
		}
		return true
	}
	return false
}

// thingCounter reports whether u counts people or things, which no date gives the number of. The general
// counter 개 is not one: it opens counts of months (개월) and of countries or states (개국, 개주), which a
// question may ask beside something else ("몇개주에서 … 법을 뭐라고 하나요?").
func thingCounter(u string) bool {
	return slices.Contains([]string{"명", "건", "가지", "곳", "세대", "가구", "권", "마리", "채", "표", "석"}, u)
}

// nameAfter reports whether rest (the text after a number) goes on with a Hangul word of three syllables or
// more: the rest of a name the number opens ("2050 탄소중립위원회"), not a counter ("명", "세대", "달러").
func nameAfter(rest string) bool {
	rest = strings.TrimLeft(rest, " ")
	n := 0
	for _, r := range rest {
		if !unicode.Is(unicode.Hangul, r) {
			break
		}
		n++
	}
	return n >= 3
}

// beforeHangul reports whether rest (the text after a number) goes on with a Hangul word after a space.
func beforeHangul(rest string) bool {
	rest = strings.TrimLeft(rest, " ")
	r, _ := utf8.DecodeRuneInString(rest)
	return unicode.Is(unicode.Hangul, r)
}

func isYear(s string) bool {
	if len(s) != 4 {
		return false
	}
	return (s[0] == '1' && s[1] >= '0') || (s[0] == '2' && s[1] == '0')
}

// frameWords name what a question asks for ("the name of …", "…한 인물은?") rather than what it is about;
// they say little about which sentence answers it.
var frameWords = []string{"이름", "인물", "사람", "곳", "장소", "시기", "날짜", "연도", "년도", "때", "종류", "제목",
	"숫자", "개수", "갯수", "명칭", "단어", "용어", "나라", "도시", "지역", "누구", "무엇", "얼마", "몇", "필요",
	"name", "person", "year", "date", "place", "type", "kind", "call", "number", "term", "word", "need", "needed",
	"required"}

// isFrame reports whether the question word w (lower-cased) is a frame word, possibly with a particle.
func isFrame(w string) bool {
	for _, f := range frameWords {
		if w == f {
			return true
		}
		if rest, ok := strings.CutPrefix(w, f); ok && f[0] >= 0x80 && len([]rune(rest)) <= 2 {
			return true
		}
	}
	return false
}
