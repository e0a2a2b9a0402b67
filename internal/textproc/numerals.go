package textproc

import (
	"strconv"
	"strings"
	"unicode"
)

// Korean counts things with two sets of numerals: digits or Sino-Korean numerals before units ("2만 원",
// "3년"), and native numerals before counters ("두 배", "세 가지", "한 번"), which are also written in digits
// ("2배", "3가지"). A question and a text that count the same thing in the two spellings share no term: the
// analyzer reads "2배로" as the number 2 and "배로", and "두 배로" as the words "두" and "배로". CountTerm
// gives both spellings one term, "2배": the number and its counter.

// nativeNumerals are the native numerals in the form they take before a counter, and their values.
// 11–19 are "열" and a unit ("열두 개"); twenty is "스무".
var nativeNumerals = map[string]int{
	"한": 1, "두": 2, "세": 3, "석": 3, "네": 4, "넉": 4, "다섯": 5, "여섯": 6, "일곱": 7,
	"여덟": 8, "아홉": 9, "열": 10, "스무": 20,
}

// counters are the counters native numerals count with, longest first so that "주일" is not read as "주".
// A counter taken by Sino-Korean numerals only ("년", "원", "개월") is not one: "2년" has no native spelling.
var counters = []string{"시간", "가지", "군데", "차례", "사람", "마리", "주일", "켤레", "송이", "그루",
	"배", "개", "번", "명", "달", "살", "장", "권", "대", "곳", "주", "잔", "벌", "줄", "칸", "쪽", "시"}

// counterSuffixes may follow a counter: an ordinal "째" ("네 번째"), "씩" or "간" ("두 달간"), then a
// particle ("배로", "가지를", "번째로는"). Any other rest makes another word that opens like a counter ("대표").
var counterSuffixes = []string{"째", "씩", "간", "쯤"}

var counterParticles = setOf("", "로", "으로", "를", "을", "가", "이", "는", "은", "에", "에서", "에는", "의", "도", "만",
	"까지", "부터", "이나", "나", "와", "과", "랑", "이랑", "보다", "이면", "면", "로는", "으로는", "이라", "라", "이에요",
	"예요", "입니다", "이다", "다")

// counterRest reports whether rest may follow a counter (counterSuffixes, counterParticles).
func counterRest(rest string) bool {
	for _, s := range counterSuffixes {
		if r, ok := strings.CutPrefix(rest, s); ok {
			rest = r
			break
		}
	}
	return counterParticles[rest]
}

// NativeNumeral returns the value of w read as a native numeral before a counter ("두" → 2, "열두" → 12,
// "스무" → 20), or 0 when w is not one.
func NativeNumeral(w string) int {
	if n := nativeNumerals[w]; n > 0 {
		return n
	}
	if rest, ok := strings.CutPrefix(w, "열"); ok {
		if n := nativeNumerals[rest]; n > 0 && n < 10 {
			return 10 + n
		}
	}
	return 0
}

// Counter returns the counter w opens with, when the rest of w is what may follow a counter ("배로" → "배",
// "가지를" → "가지", "번째" → "번"), or "".
func Counter(w string) string {
	for _, c := range counters {
		if rest, ok := strings.CutPrefix(w, c); ok && counterRest(rest) {
			return c
		}
	}
	return ""
}

// CountTerm returns the term of a count: the number and its counter ("2배"), for a word written in digits
// with its counter ("2배로", "3가지를"), or for a native numeral word followed by a counter word ("두", "배로";
// pass next = "" for the digit spelling). It returns "" when the words are no count.
func CountTerm(w, next string) string {
	if n := NativeNumeral(w); n > 0 && next != "" {
		if c := Counter(next); c != "" {
			return strconv.Itoa(n) + c
		}
		return ""
	}
	i := strings.IndexFunc(w, func(r rune) bool { return !('0' <= r && r <= '9') })
	if i <= 0 || i > 4 || w[0] == '0' {
		return ""
	}
	if c := Counter(w[i:]); c != "" {
		return w[:i] + c
	}
	return ""
}

// CountTerms returns the count terms (CountTerm) of the words of text, in either spelling: "구매가 두 배로
// 잡힙니다" and "구매가 2배로" both give "2배".
func CountTerms(text string) []string {
	words := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	var out []string
	for i, w := range words {
		next := ""
		if i+1 < len(words) {
			next = words[i+1]
		}
		if t := CountTerm(w, next); t != "" {
			out = append(out, t)
		}
	}
	return out
}
