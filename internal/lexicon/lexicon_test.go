package lexicon_test

import (
	"testing"

	"github.com/ragd/ragd/internal/lexicon"
)

func TestHasWords(t *testing.T) {
	words := []string{"날씨 알려줘", "파스타 맛있게 만드는 법 알려줘", "서울 날씨", "주식 투자 어떻게 해?", "what is the weather today",
		"오늘 저녁 메뉴 추천해줘", "콘크리트 타설 비용",
		// Questions about something else, written as people write them: no spaces, inflected verbs and
		// adjectives (만들→만드는, 알리→알려, 고맙→고마워), names, loanwords.
		"비트코인 시세", "손흥민 골 넣었어?", "점심 뭐 먹지", "노래 틀어줘", "안녕하세요", "고마워", "배고파", "지금 몇 시야",
		"여행 가고 싶다", "오늘 주식 시장 어때?", "아이폰 가격", "환율얼마야", "강아지산책시간"}
	noise := []string{"xyzzy", "asdf qwer", "뷁쉙뛟", "ㅁㄴㅇㄹ", "zxcvbnm", "qwpeoriu", "1234 5678", "?!",
		"ㅋㅋㅋㅋ", "ㅂㅈㄷㄱ", "햏햏", "쀍똛쉛", "뀱뀱뀱", "웱쉛 븗쁣", "뷁 쉙 뛟", "dkssud"}
	for _, q := range words {
		if !lexicon.HasWords(q) {
			t.Errorf("HasWords(%q) = false, want true", q)
		}
	}
	for _, q := range noise {
		if lexicon.HasWords(q) {
			t.Errorf("HasWords(%q) = true, want false", q)
		}
	}
}

// BenchmarkHasWords measures a lookup once the list is unpacked.
func BenchmarkHasWords(b *testing.B) {
	lexicon.HasWords("날씨")
	b.ReportAllocs()
	for b.Loop() {
		lexicon.HasWords("파스타 맛있게 만드는 법 알려줘 뷁쉙뛟")
	}
}
