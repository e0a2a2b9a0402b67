package extractive

import (
	"strings"
	"unicode"
)

// scopeParticles mark a word of a Korean question as the scope the question is asked in ("React에서 state를
// …", "메타 광고에서는 …", "엑셀의 경우"), not the thing it asks about.
var scopeParticles = []string{"에서는", "에서도", "에서", "에선"}

// scopeName reports whether the question word w is a Latin-script name written with a scope particle
// ("react에서"): the product or field the question is asked in, which a page of its documentation need not
// name in every passage ("컴포넌트를 다른 파일로 이동하려면 세 가지 단계가 있습니다." on React's page on
// import and export). Its absence from the answer's passage is no sign that the answer is about another
// thing, as a year or a name asked about would be (missingName).
func scopeName(w qword) bool {
	for _, p := range scopeParticles {
		if stem, ok := strings.CutSuffix(w.terms[0], p); ok && stem != "" &&
			!strings.ContainsFunc(stem, func(r rune) bool { return unicode.Is(unicode.Hangul, r) }) {
			return true
		}
	}
	return false
}
