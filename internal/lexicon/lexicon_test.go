package lexicon_test

import (
	"testing"

	"github.com/ragd/ragd/internal/lexicon"
)

func TestHasWords(t *testing.T) {
	words := []string{"날씨 알려줘", "파스타 맛있게 만드는 법 알려줘", "서울 날씨", "주식 투자 어떻게 해?", "what is the weather today",
		"오늘 저녁 메뉴 추천해줘", "콘크리트 타설 비용"}
	noise := []string{"xyzzy", "asdf qwer", "뷁쉙뛟", "ㅁㄴㅇㄹ", "zxcvbnm", "qwpeoriu", "1234 5678", "?!"}
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
