package extractive

import "regexp"

// brokenEnding is a Korean sentence whose last word a page or column break cut: a line of prose ending in
// a Hangul letter without closing punctuation, then, after the break, the rest of the word closing the
// sentence with a sentence ending (다, 요, 까, 죠, 네: "… 기회를 주신 것을 감사드" / "립니다.", "… 것을
// 밝혔습니" / "다. 이에 대해 …"). A word closed by a period that is no such ending ("목적.") is left alone.
var brokenEnding = regexp.MustCompile(`([가-힣 ,]{8}[가-힣])[ \t]*\n(?:[ \t]*\n)*[ \t]*([가-힣]{0,3}[다요까죠네][.!?])(\s|$)`)

// joinBrokenEndings puts the cut words of text back together, so that the sentence is one unit and is
// quoted whole, not as "… 감사드".
func joinBrokenEndings(text string) string {
	return brokenEnding.ReplaceAllString(text, "$1$2$3")
}
