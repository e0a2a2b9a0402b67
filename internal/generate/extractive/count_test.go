package extractive

import (
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

// TestGenerateCountSpelling: a count the question writes in digits ("2배로") is the one the text writes with a
// native numeral ("두 배로"); another amount of the same number ("2만 원") is not. Before counts were read
// as number and counter, "2배로" was the number 2 with a particle, and the 2만 원 sentence matched it wholly.
func TestGenerateCountSpelling(t *testing.T) {
	t.Parallel()
	passages := []rag.Passage{
		{N: 1, Title: "재고 관리", Text: "창고를 옮기면 보관 비용이 두 배로 늘어납니다. 이사 전에 재고를 정리해 두세요."},
		{N: 2, Title: "배송 정책", Text: "배송비는 2만 원 이상 사면 무료입니다. 제주 지역은 추가 요금이 붙습니다."},
	}
	text := answerHolds(t, passages, "보관 요금이 2배로 올랐는데 왜 그래요?", "두 배로")
	if strings.Contains(text, "2만 원") {
		t.Errorf("answer %q quotes the 2만 원 sentence, another amount of the number", text)
	}
}

// TestGenerateRemedy: a question asking what to do about a problem ("… 두 번 돼요 ㅠㅠ 어떻해요") matches the
// sentence describing the problem, at the end of its paragraph; the answer must also give what the
// paragraph says to do, an instruction two sentences before it.
func TestGenerateRemedy(t *testing.T) {
	t.Parallel()
	passages := []rag.Passage{
		{N: 1, Title: "결제 연동", Text: strings.Join([]string{
			"재시도 처리의 원리는 간단해요. 결제 서버는 같은 요청 키가 오면 한 번만 처리합니다. " +
				"앱에서는 주문마다 요청 키를 하나 만들고, 재시도할 때도 같은 요청 키를 보내면 돼요. " +
				"예를 들어 주문이 B77이라면 요청 키도 B77로 두는 거예요. " +
				"흔한 실수가 재시도할 때 새 키를 만드는 건데, 이러면 카드 결제가 두 번 됩니다.",
			"연동 방식은 세 가지가 있어요. 호스팅 결제창을 쓰는 방법이 가장 쉽고, 직접 API를 부르는 방법도 있습니다.",
		}, "\n\n")},
	}
	answerHolds(t, passages, "앱 연동하고 나서 카드 결제가 딱 2번씩 돼요 ㅠㅠ 어떻해요", "두 번 됩니다", "같은 요청 키를 보내면 돼요")
}

// TestGenerateCountUnit: a how-many question asks for a number in the counter after "몇" ("몇 개의 동으로": 동,
// "몇가구로": 가구); the sentence stating a number in it comes first, before one that gives another number
// beside more of the question's words.
func TestGenerateCountUnit(t *testing.T) {
	t.Parallel()
	passages := []rag.Passage{
		{N: 1, Title: "여의도", Text: "여의도 시범아파트는 1971년에 12층 높이로 지어졌다."},
		{N: 2, Title: "아파트의 역사", Text: "여의도 시범아파트는 1790가구와 24개동으로 지어졌다."},
	}
	for q, want := range map[string]string{
		"여의도 시범아파트는 몇 개의 동으로 구성되었나?": "24개동",
		"여의도 시범아파트는 몇가구로 구성되었나?":     "1790가구",
	} {
		text := generateStreamed(t, New(Options{}), rag.GenerateRequest{Question: q, Passages: passages})
		if !strings.HasPrefix(text, "여의도 시범아파트는 1790가구와") || !strings.Contains(text, want) {
			t.Errorf("%q: answer %q does not open with the sentence giving %q", q, text, want)
		}
	}
}
