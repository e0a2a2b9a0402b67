package textproc

import (
	"slices"
	"testing"
)

// TestSpacedWords: the rule's boundaries — two syllables against three, a run beside Korean words, beside
// Latin letters and digits, at a line's edges and inside punctuation.
func TestSpacedWords(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		// two syllables against three
		{"부 칙", nil},
		{"일 시 2024년5월7일(화)", nil},
		{"문 의 처", []string{"문의처"}},
		{"문 의 처 02)6788-5533", []string{"문의처"}},
		{"제 안 이 유\n현행법은 위원을 위촉하도록 함.", []string{"제안이유"}},
		{"환 경 노 동 위 원 회", []string{"환경노동위원회"}},
		// beside Korean words: prose
		{"그 중 몇 개의 게임", nil},
		{"단 한 번 뿐인 기회", nil},
		{"대부분은 이 셋 중 하나에서", nil},
		{"이 우 원 식 윤 건 영 이수진(비)", nil},
		{"첫번째로 움직일 때 두 칸 전진할 수 있다", nil},
		{"발매 첫 주 총 23만 8795장", nil},
		// glued to the word before, or a label after a word, at the line's end: both readings
		{"일부개정법률안검 토 보 고", []string{"검토보고", "토보고"}},
		{"담당 문 의 처", []string{"당문의처", "문의처"}},
		// beside Latin letters and digits
		{"문 의 처 Tel. 02-788-5533", []string{"문의처"}},
		{"TEL 문 의 처", []string{"문의처"}},
		{"2024 년 월 일", []string{"년월일"}},
		{"제 1 호 서식", nil},
		// punctuation at the edges: labels', not prose's
		{"(문 의 처)", []string{"문의처"}},
		{"□ 문 의 처: 02)6788-5533", []string{"문의처"}},
		{"| 현 행 | 개 정 안 |", []string{"개정안"}},
		{"발 의 자 : 이수진(비)·김성환", []string{"발의자"}},
		{"결국 허락해 주었다. 몇 년 뒤, 핀은 사냥을", nil},
		{"36만 명이 동참해 ‘한 달 내 20만 명 이상’", nil},
		{"", nil},
		{"문의처", nil},
	} {
		if got := SpacedWords(c.in, true); !slices.Equal(got, c.want) {
			t.Errorf("SpacedWords(%q, true) = %q, want %q", c.in, got, c.want)
		}
		// Without glued, the readings after a word that ends in Hangul are left out.
		apart := c.want
		if len(c.want) == 2 {
			apart = nil
		}
		if got := SpacedWords(c.in, false); !slices.Equal(got, apart) {
			t.Errorf("SpacedWords(%q, false) = %q, want %q", c.in, got, apart)
		}
	}
}

// TestIndexTermsSpaced: the keyword index holds a letter-spaced label as the word a question writes, and
// prose's one-syllable words are not joined.
func TestIndexTermsSpaced(t *testing.T) {
	got := IndexTerms("※ 참고자료\n문 의 처\n02)6788-5533")
	for _, want := range []string{"문의처", "문의", "의처", "6788-5533"} {
		if !slices.Contains(got, want) {
			t.Errorf("IndexTerms lacks %q: %q", want, got)
		}
	}
	if q := QueryTerms("문의처 전화번호는?"); !slices.Contains(q, "문의처") {
		t.Errorf("QueryTerms = %q, want 문의처 among them", q)
	}
	for _, w := range IndexTerms("그 중 몇 개의 게임은 단 한 번 뿐인 기회였다.") {
		if w == "그중몇" || w == "단한번" {
			t.Errorf("IndexTerms joined prose: %q", w)
		}
	}
}

// TestHasSpacedRun: the quick scan passes every text SpacedWords reads a run in, and rejects prose without
// three one-syllable words in a row on a line.
func TestHasSpacedRun(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"문 의 처", true},
		{"(문 의 처)", true},
		{"일부개정법률안검 토 보 고", true},
		{"| 개 정 안 |", true},
		{"부 칙", false},
		{"문 의\n처", false},
		{"그는 이 일을 할 수 있다", false},
		{"임종석은 1989년 2월 15일 여의도 농민 폭력 시위를 주도했다.", false},
	} {
		if got := hasSpacedRun(c.in); got != c.want {
			t.Errorf("hasSpacedRun(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}
