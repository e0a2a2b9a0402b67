package extractive

import (
	"regexp"
	"strings"
	"unicode"
)

// codeLine reports whether a line of a passage is a line of program code: no Hangul, and it closes a
// statement or block (";", "{", "}", "}}>", "/>") or opens with a declaration ("import …", "export …",
// "const …", "function …", "return …"). A Korean page documenting code holds such lines between its
// sentences ("import { useState } from 'react';", "const [number, setNumber] = useState(0);").
func codeLine(l string) bool {
	l = strings.TrimSpace(l)
	if l == "" || strings.ContainsFunc(l, func(r rune) bool { return unicode.Is(unicode.Hangul, r) }) {
		return false
	}
	for _, end := range []string{";", "{", "}", "}>", "/>", "=> {", "("} {
		if strings.HasSuffix(l, end) {
			return true
		}
	}
	for _, open := range []string{"import ", "export ", "const ", "let ", "var ", "function ", "return ", "<", "}"} {
		if strings.HasPrefix(l, open) {
			return true
		}
	}
	return false
}

// proseKorean reports whether the question is Korean prose that names no code: written in Hangul and
// without the brackets, arrows and operators a question quoting code has ("setNumber(number + 1)을 …",
// "n => n + 1 같은 함수는 …"). Such a question is not answered by a line of code alone.
func proseKorean(question string) bool {
	return strings.ContainsFunc(question, func(r rune) bool { return unicode.Is(unicode.Hangul, r) }) &&
		!strings.ContainsAny(question, "(){}[];=<>")
}

// asksBack reports whether a unit of a passage is itself a question (it ends with a question mark): a
// heading worded as a question, a lecturer's "그럼 학습은 언제 끝날까요?".
func asksBack(text string) bool {
	t := strings.TrimRight(strings.TrimSpace(text), "\"'”’)")
	return strings.HasSuffix(t, "?") || strings.HasSuffix(t, "？")
}

// announcing are the words of a sentence that announces the list after it: "… 세 가지 단계가 있습니다",
// "다음과 같습니다", "as follows", "the following steps".
var announcing = regexp.MustCompile(`(?i)(?:[0-9]+|한|두|세|네|다섯|여섯|일곱|여덟|아홉|열)\s*(?:가지|단계|개)|다음과\s*같|아래와\s*같|as follows|the following`)

// announcesList reports whether text announces the list after it.
func announcesList(text string) bool { return announcing.MatchString(text) }
