package extractive

import (
	"slices"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

// TestVerbStemsCausative: a verb stem in 애 meets the intransitive 아-지다 verb it is the causative of, so
// that "빼면" (take out) and "빠지면" (be left out) share a stem; the light verbs give no such reading.
func TestVerbStemsCausative(t *testing.T) {
	t.Parallel()
	for _, form := range []string{"빼면", "빼고", "빠지면", "빠졌어요"} {
		if got := verbStems(form); !slices.Contains(got, "빠지") {
			t.Errorf("verbStems(%q) = %q, want 빠지 among them", form, got)
		}
	}
	if got := verbStems("해요"); slices.Contains(got, "하지") {
		t.Errorf("verbStems(해요) = %q: 하다 is a light verb", got)
	}
}

// TestGenerateTwoPartQuestion: "… 꼭 넣어야 되나요? 빼면 어떻게 돼요?" asks whether and what follows. The
// sentence saying what follows uses the other verb of the pair ("빠지면"), and the rule it follows is two
// sentences before it in the same paragraph; both are quoted, as written, rather than a sentence of another
// paragraph that only shares "넣어야".
func TestGenerateTwoPartQuestion(t *testing.T) {
	t.Parallel()
	passages := onePassage("주문 이벤트 설치",
		"기본 코드는 방문만 알려 줍니다. 그래서 중요한 행동마다 이벤트 코드를 따로 넣어야 합니다. 가입 완료는 다른 이름을 씁니다.",
		"주문 이벤트는 특히 조심하세요. 주문 이벤트에는 반드시 가격과 통화를 함께 보내야 해요. 코드로는 track('Order', {value: 100}) "+
			"이렇게 씁니다. 가격이 빠지면 나중에 매출 대비 효율을 계산할 수 없어요. 그리고 가격은 고정값이 아니라 실제 값이어야 합니다.")
	text := answerHolds(t, passages, "주문 이벤트에 가격값 꼭 넣어야 되나요? 빼면 어떻게 돼요?",
		"가격과 통화를 함께 보내야", "가격이 빠지면 나중에 매출 대비 효율을 계산할 수 없어요")
	if i, j := strings.Index(text, "가격과 통화"), strings.Index(text, "가격이 빠지면"); i > j {
		t.Errorf("answer %q does not keep the paragraph's order", text)
	}
}

// TestGenerateAmountGoesOn: "크기 비율은 어느 정도로 …?" asks for an amount. "비율" names the kind of value
// asked, which the answer gives as a number ("2%에서 8%"), so a sentence of another lecture that only says
// "비율" does not outrank it; and the sentences after it that give its amount again ("2%가 …", "처음에는 2%로
// 시작하고 …") go on with it before sentences of other paragraphs.
func TestGenerateAmountGoesOn(t *testing.T) {
	t.Parallel()
	passages := []rag.Passage{
		{N: 1, Title: "관심 타겟 기초", Text: "영상을 일정 비율 이상 본 사람, 게시물에 반응한 사람, 양식을 연 사람 같은 사람들이죠. " +
			"방문자는 최대 180일까지 모을 수 있어요."},
		{N: 2, Title: "확장 타겟 전략", Text: "확장 타겟은 영어로 룩어라이크라고 불러요. 원본에는 최소 100명 이상이 있어야 해요. " +
			"보통 1,000명에서 5만 명 정도의 원본을 권합니다.\n\n" +
			"다음은 크기입니다. 확장 타겟은 인구의 2%에서 8% 사이로 크기를 정해요. 2%가 원본과 가장 닮은 사람들이고, 숫자가 " +
			"커질수록 닮은 정도는 떨어집니다. 그래서 처음에는 2%로 시작하고 성과를 보면서 2%에서 4%처럼 넓혀 가는 방식을 많이 씁니다. " +
			"이렇게 나누면 서로 겹치지 않게 만들 수 있어요."},
	}
	text := answerHolds(t, passages, "룩어라이크 만들 때 크기 비율은 어느 정도로 설정하는 게 좋을까요?",
		"2%에서 8%", "처음에는 2%로 시작")
	if strings.Contains(text, "일정 비율") {
		t.Errorf("answer %q quotes the sentence that only names the ratio", text)
	}
}

// TestWindowOneFact: a question for one fact is not completed by its best sentence's neighbours, and an
// amount the question gives is no answer to repeat ("7가지 … 중 몇 번째").
func TestWindowOneFact(t *testing.T) {
	t.Parallel()
	g := New(Options{})
	passages := onePassage("오온론",
		"결과는 모두 7가지 지분을 말한다. 따라서 결과를 부정하는 것은 7가지 지분을 모두 부정하는 것이다. 그 밖의 지분도 있다.")
	for _, q := range []string{"결과의 7가지 지분 중 촉은 몇 번째 지분인가?", "결과는 몇 가지 지분을 말하는가?"} {
		r := g.rank(q, "", passages)
		best := r.sents[0]
		if got := r.window(q, best, best.value, g.p.window); len(got) > 0 && strings.Contains(q, "7가지") {
			t.Errorf("%q: window %v around %q repeats the question's own amount", q, got, best.text)
		}
	}
}
