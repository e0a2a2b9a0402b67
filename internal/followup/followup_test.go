package followup

import (
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

// TestResolve: a word referring back to the previous question is replaced by what that question was about;
// a follow-up that names its own topic, or leaves it out, is left alone.
func TestResolve(t *testing.T) {
	for _, c := range []struct{ prev, q, want, topic string }{
		// a pronoun with its particle, put back in the form the topic takes (CPM이: a final consonant)
		{"CPM이 뭔가요?", "그건 어떻게 계산해요?", "CPM은 어떻게 계산해요?", "CPM"},
		{"ROAS가 뭔가요?", "그건 어떻게 계산해요?", "ROAS는 어떻게 계산해요?", "ROAS"},
		{"학습 단계가 뭔가요?", "거기서 벗어나려면 최적화 이벤트가 몇 번 필요해요?", "학습 단계에서 벗어나려면 최적화 이벤트가 몇 번 필요해요?", "학습 단계"},
		{"유사 타겟은 어떻게 만드나요?", "그걸 만들려면 소스가 몇 명 필요해요?", "유사 타겟을 만들려면 소스가 몇 명 필요해요?", "유사 타겟"},
		// a determiner's noun that the topic holds, or that ends a word of the previous question
		{"이수진 의원 법안에 대한 검토보고서가 있나요?", "그 보고서는 누가 작성했나요?", "검토보고서는 누가 작성했나요?", "검토보고서"},
		{"제414회 국회 환경노동위원회 제1차 회의록을 찾아 주세요.", "그 회의는 며칠에 열렸나요?",
			"제414회 국회 환경노동위원회 제1차 회의록은 며칠에 열렸나요?", "제414회 국회 환경노동위원회 제1차 회의록"},
		{"기후위기 대응을 위한 탄소중립·녹색성장 기본법 일부개정법률안의 제안이유는 무엇인가요?", "그 법은 언제부터 시행되나요?",
			"탄소중립·녹색성장 기본법은 언제부터 시행되나요?", "탄소중립·녹색성장 기본법"},
		{"상계 푸른언덕 단지에 대해 알려 주세요.", "그 단지는 몇 세대예요?", "상계 푸른언덕 단지는 몇 세대예요?", "상계 푸른언덕 단지"},
		{"신내 햇살마을 국민임대 공고가 있나요?", "거기 입주 예정일은 언제예요?", "신내 햇살마을 국민임대 공고 입주 예정일은 언제예요?", "신내 햇살마을 국민임대 공고"},
		// English pronouns and possessives
		{"Who is Brendan Eich?", "When did he step down as CEO of Mozilla?", "When did Brendan Eich step down as CEO of Mozilla?", "Brendan Eich"},
		{"What is the Handbook for Chapter 13 Standing Trustees?", "When is it dated?", "When is the Handbook for Chapter 13 Standing Trustees dated?", "the Handbook for Chapter 13 Standing Trustees"},
		{"What happened to Lion Air Flight 610?", "How many fatalities did it cause?", "How many fatalities did Lion Air Flight 610 cause?", "Lion Air Flight 610"},
		{"What is Firefox?", "What was its original name?", "What was Firefox's original name?", "Firefox"},
		{"Tell me about Thunderbird", "Who develops it?", "Who develops Thunderbird?", "Thunderbird"},
		{"What is Gecko?", "It is written in which language?", "Gecko is written in which language?", "Gecko"},
		// a follow-up naming the topic already: its pronoun stands for something else
		{"What does the FAA propose for the Boeing 737 MAX?", "By when must the FAA receive comments on it?", "By when must the FAA receive comments on it?", ""},
		// nothing to resolve: the follow-up names its own topic or leaves it out
		{"CPM이 뭔가요?", "CTR은 어떻게 계산해요?", "CTR은 어떻게 계산해요?", ""},
		{"상계 푸른언덕 단지에 대해 알려 주세요.", "월 임대료는 얼마예요?", "월 임대료는 얼마예요?", ""},
		{"Who is Brendan Eich?", "When was Mozilla founded?", "When was Mozilla founded?", ""},
		// a determiner's noun the previous question does not name is not guessed at
		{"탄소중립위원회 위원 후보 추천 단체를 법률에 명시하는 개정안이 있나요?", "그 법안은 누가 대표발의했나요?", "그 법안은 누가 대표발의했나요?", ""},
		// the previous question names no topic, or refers back itself
		{"뭐가 있나요?", "그건 얼마예요?", "그건 얼마예요?", ""},
		{"이 법은 언제부터 시행되나요?", "그건 누가 정했나요?", "그건 누가 정했나요?", ""},
		{"How does it work?", "When did it start?", "When did it start?", ""},
		{"", "그건 뭐예요?", "그건 뭐예요?", ""},
	} {
		got, topic := Resolve(c.q, c.prev)
		if got != c.want || topic != c.topic {
			t.Errorf("Resolve(%q, %q) = %q, %q; want %q, %q", c.q, c.prev, got, topic, c.want, c.topic)
		}
	}
}

// TestPrevious: the previous question of a conversation is itself read standalone against the one before it.
func TestPrevious(t *testing.T) {
	h := []rag.Turn{
		{Role: rag.RoleUser, Content: "CPM이 뭔가요?"},
		{Role: rag.RoleAssistant, Content: "CPM은 1,000회 노출당 비용입니다 [1]."},
		{Role: rag.RoleUser, Content: "그건 어떻게 계산해요?"},
		{Role: rag.RoleAssistant, Content: "지출 금액 ÷ 노출 수 × 1,000 [1]"},
	}
	if got := Previous(h); got != "CPM은 어떻게 계산해요?" {
		t.Errorf("Previous = %q", got)
	}
	if got := Previous(h[:2]); got != "CPM이 뭔가요?" {
		t.Errorf("Previous of one question = %q", got)
	}
	if got := Previous(nil); got != "" {
		t.Errorf("Previous of no history = %q", got)
	}
	if got := Previous(h[1:2]); got != "" {
		t.Errorf("Previous of an assistant turn alone = %q", got)
	}
}

// TestTopic: the noun phrase a question is about, without the clause qualifying it.
func TestTopic(t *testing.T) {
	for q, want := range map[string]string{
		"양경규 위원이 제안설명한 근로기준법 개정안은 어떤 내용인가요?":                "근로기준법 개정안",
		"제1기 탄소중립위원회의 위원 구성은 어땠나요?":                         "제1기 탄소중립위원회의 위원 구성",
		"React가 여러 state 업데이트를 처리하는 방식을 설명해 주세요.":           "방식",
		"신내 햇살마을 국민임대 공고가 있나요?":                             "신내 햇살마을 국민임대 공고",
		"누가 대표발의했나요?":                                       "",
		"What does the FAA propose for the Boeing 737 MAX?": "the FAA",
		"Which company filed this annual report?":           "the company",
		"Where is it?": "",
	} {
		if got := Topic(q); got != want {
			t.Errorf("Topic(%q) = %q, want %q", q, got, want)
		}
	}
}
