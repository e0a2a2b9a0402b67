package extractive

import (
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/generate"
	"github.com/ragd/ragd/internal/rag"
)

// metricPassages are a lecture's page on CTR, CPM and ROAS: the formula of each, a worked example, and
// ROAS's break-even rule, which says "계산합니다" (TestGenerateHowTopic, TestGenerateFollowUpTopic).
func metricPassages() []rag.Passage {
	return onePassage("성과 지표 읽기: CTR, CPM, ROAS",
		"오늘은 CTR, CPM, ROAS를 정리해 볼게요. 먼저 공식부터 보여 드릴게요.",
		"- CTR, 클릭률 = 클릭 수 ÷ 노출 수 × 100",
		"- CPM, 1,000회 노출당 비용 = 지출 금액 ÷ 노출 수 × 1,000",
		"예시로 계산해 볼게요. 광고비 10만 원을 써서 노출이 2만 회 나왔다고 해 봅시다. CPM은 10만 원을 2만으로 나누고 "+
			"1,000을 곱하니까 5,000원이에요. CPM이 높다면 경쟁이 치열한 시기예요.",
		"ROAS는 높을수록 좋아요. 손익분기 ROAS는 1 ÷ 마진율로 계산합니다.")
}

// TestGenerateFollowUpTopic: "그건 어떻게 계산하나요?" after "CPM이 뭔가요?" is answered as "CPM은 어떻게
// 계산하나요?" — with CPM's formula first, not with the ROAS sentence that shares the verb. An English
// follow-up's pronoun likewise stands for its topic.
func TestGenerateFollowUpTopic(t *testing.T) {
	t.Parallel()
	req := rag.GenerateRequest{Question: "그건 어떻게 계산하나요?", Passages: metricPassages(),
		History: []rag.Turn{{Role: rag.RoleUser, Content: "CPM이 뭔가요?"}, {Role: rag.RoleAssistant, Content: "CPM은 노출당 비용입니다 [1]."}}}
	text := generateStreamed(t, New(Options{}), req)
	if !strings.HasPrefix(text, "- CPM, 1,000회") {
		t.Errorf("answer %q, want CPM's formula first", text)
	}

	passages := []rag.Passage{
		{N: 1, Title: "Mozilla", Text: "Gecko is a layout engine that supports web pages written using HTML. Gecko is written in C++."},
		{N: 2, Title: "Mozilla", Text: "Rhino is a JavaScript engine. It is developed entirely in Java."},
	}
	req = rag.GenerateRequest{Question: "What language is it written in?", Passages: passages,
		History: []rag.Turn{{Role: rag.RoleUser, Content: "What is Gecko?"}}}
	if text := generateStreamed(t, New(Options{}), req); !strings.Contains(text, "Gecko is written in C++") || strings.Contains(text, "Java") {
		t.Errorf("answer %q, want Gecko's language", text)
	}
}

// TestGenerateFollowUpNotCovered: a follow-up asking what the passages do not say of its topic is not
// covered though they name the topic all along: the topic is what they were found by, not an answer.
func TestGenerateFollowUpNotCovered(t *testing.T) {
	t.Parallel()
	passages := onePassage("노원구 상계동 국민임대주택 입주자 모집공고",
		"상계 푸른언덕은 서울특별시 노원구 상계동에 자리한 국민임대 단지이며, 이번 공고로 총 150세대를 공급합니다.",
		"- 임대조건: 임대보증금 1,850만원, 월 임대료 24만 5,000원",
		"임대 기간은 2년 단위로 재계약합니다.")
	for _, q := range []string{"거기 관리비는 한 달에 얼마예요?", "그 단지의 주차 대수는요?"} {
		req := rag.GenerateRequest{Question: q, Passages: passages,
			History: []rag.Turn{{Role: rag.RoleUser, Content: "상계 푸른언덕 단지에 대해 알려 주세요."}}}
		if text := generateStreamed(t, New(Options{}), req); text != generate.NotFound("ko") {
			t.Errorf("%s: answer %q", q, text)
		}
	}
}
