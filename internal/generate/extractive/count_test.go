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

// TestGenerateClassInstance: a question asking for a thing by its kind ("출신 고등학교는?", "어떤 병을") is
// answered by the sentence naming one ("광주제일고등학교", "심장병"), before one that holds the kind's own
// word; "사람", "이름" and other frame words name no class a word ends with.
func TestGenerateClassInstance(t *testing.T) {
	t.Parallel()
	answerOpens(t, "강정호의 출신 고등학교는?", "강정호는 광주제일고등학교의",
		"강정호는 같은 고등학교의 에이스 투수와 함께 드래프트에 나왔다.", "강정호는 광주제일고등학교의 원투펀치로 활약했다.")
	// The instance holds the class noun: a sentence naming a 대학교 covers "출신 대학교", though the
	// compound shares only some syllable pairs with it.
	univ := []rag.Passage{{N: 1, Title: "한명숙", Text: "한명숙은 이화여자대학교 불문학과 재학 중에 남편을 만났다."},
		{N: 2, Title: "한명숙", Text: "그는 1967년 결혼하였다."}}
	if text := generateStreamed(t, New(Options{}), rag.GenerateRequest{Question: "한명숙의 출신 대학교는?", Passages: univ}); !strings.Contains(text, "이화여자대학교") {
		t.Errorf("answer %q lacks the university", text)
	}
	// A class noun of one syllable has no stem apart from its particle ("법에"): the sentence naming a 법
	// holds it all the same.
	answerOpens(t, "조합은 어느 법에 따라 지역에서 설립되었나요?", "조합은 「농업협동조합법」에 따라",
		"조합은 1990년 지역 농민들이 모여 설립되었다.", "조합은 「농업협동조합법」에 따라 등록되었다.")
	for _, tc := range []struct {
		question, class string
	}{
		{"강정호의 출신 고등학교는?", "고등학교"},
		{"곽영욱은 어떤 병을 앓고 있는가?", "병"},
		{"Plos Biology를 창간한 출판사는 어디인가?", "출판사"},
		{"은메달을 획득한 사람은?", ""},
		{"강정호는 몇 년에 태어났나?", ""},
	} {
		if got := askedClass(tc.question, questionWords(tc.question, "")); got != tc.class {
			t.Errorf("askedClass(%q) = %q, want %q", tc.question, got, tc.class)
		}
	}
	if !namesInstance("검찰의 수사가 심장병 환자인 자신에게", "병", "어떤 병을 앓았나?") || namesInstance("병원에 입원했다", "병", "어떤 병을 앓았나?") ||
		namesInstance("이성계는 우왕을 내쫓았다", "왕", "우왕을 내쫓으며 세운 왕은?") {
		t.Error("namesInstance: a word ending in the class names one, a word opening with it or the question's own does not")
	}
}

// TestRankPhrase: a Korean question written from its answer sentence repeats a run of it ("16강에서 만난"),
// which ranks that sentence above one holding the same words scattered.
func TestRankPhrase(t *testing.T) {
	t.Parallel()
	passages := onePassage("축구", "16강에서 우루과이는 그날 만난 기자들에게 콜롬비아를 말했다. 수아레스가 빠진 우루과이는 16강에서 만난 콜롬비아에게 패했다.")
	r := New(Options{}).rank("우루과이가 16강에서 만난 상대국가는?", "", passages)
	if len(r.sents) < 2 || !strings.HasPrefix(r.sents[0].text, "수아레스가 빠진 우루과이는") {
		t.Errorf("best sentence %q, want the one repeating the question's phrase", r.sents[0].text)
	}
	if got := commonRun(letters("16강에서 만난 상대는?"), letters("우루과이는 16강에서 만난 콜롬비아에게")); got != 7 {
		t.Errorf("commonRun = %d, want 7 (16강에서만난)", got)
	}
}
