package extractive

import (
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/generate"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

var noticePassages = []rag.Passage{{N: 1, Title: "상계동 국민임대주택 입주자 모집공고", Text: "3. 신청 방법\n\n" +
	"방문 접수와 등기우편 접수로만 신청을 받습니다. 대리 신청에는 위임장과 대리인 신분증이 필요합니다.\n\n" +
	"4. 제출 서류\n\n서류제출 대상자로 안내받은 분은 정해진 기한 안에 다음 서류를 내야 합니다.\n\n" +
	"- 주민등록표등본\n\n- 가족관계증명서\n\n- 건강보험 자격득실확인서\n\n- 청약통장 순위확인서\n\n" +
	"모든 서류는 공고일 이후에 발급한 것이어야 합니다.\n\n5. 주차/교통\n\n단지 내 주차장은 총 150대입니다."}}

// TestGenerateListUnderLeadIn: a question asking for documents gets the lead-in with every item of the list
// under it, one item a line, the list cited after its last item.
func TestGenerateListUnderLeadIn(t *testing.T) {
	t.Parallel()
	for _, q := range []string{"신청할 때 필요한 서류는?", "어떤 서류를 내야 하나요?"} {
		text := generateStreamed(t, New(Options{}), rag.GenerateRequest{Question: q, Passages: noticePassages})
		for _, item := range []string{"주민등록표등본", "가족관계증명서", "건강보험 자격득실확인서", "청약통장 순위확인서"} {
			if !strings.Contains(text, "\n- "+item) {
				t.Errorf("%q: answer %q lacks the item %q on a line of its own", q, text, item)
			}
		}
		if !strings.Contains(text, "청약통장 순위확인서 [1]") || strings.Contains(text, "주민등록표등본 [1]") {
			t.Errorf("%q: answer %q: the list is cited once, after its last item", q, text)
		}
		checkGrounded(t, text, noticePassages)
	}
}

// TestGenerateQuotesWhatFollows: a numbered list after a lead-in is quoted whole with its numbers; a
// question asking whether or how gets the sentence after the one that matches it, where the text answers.
func TestGenerateQuotesWhatFollows(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		title, text, question string
		want                  []string
	}{
		{"렌더링 그리고 커밋", "React는 고객들의 요청을 받고 주문을 가져오는 웨이터입니다. " +
			"이 과정에는 UI를 요청하고 제공하는 세 가지 단계가 있습니다.\n\n1. 렌더링 트리거 (손님의 주문을 주방으로 전달)\n" +
			"2. 컴포넌트 렌더링 (주방에서 주문 준비하기)\n3. DOM에 커밋 (테이블에 주문한 요리 내놓기)\n\n이 단계는 순서대로 일어납니다.",
			"React에서 UI를 요청하고 제공하는 세 가지 단계는 무엇인가요?",
			[]string{"\n1. 렌더링 트리거", "\n2. 컴포넌트 렌더링", "\n3. DOM에 커밋"}},
		{"광고 관리자", "권한 이야기도 조금 더 할게요. 대행사나 프리랜서와 일할 때 여러분 계정 비밀번호를 알려 주는 건 절대 " +
			"안 됩니다. 대신 상대방 비즈니스를 파트너로 추가해서 필요한 자산에만 권한을 주세요.\n\n광고 계정을 만들 때 통화와 " +
			"시간대를 정합니다.",
			"대행사한테 계정 비밀번호 알려줘도 되나요?", []string{"파트너로 추가"}},
	} {
		passages := []rag.Passage{{N: 1, Title: tc.title, Text: tc.text}}
		text := generateStreamed(t, New(Options{}), rag.GenerateRequest{Question: tc.question, Passages: passages})
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("%q: answer %q lacks %q", tc.question, text, w)
			}
		}
		checkGrounded(t, text, passages)
	}
}

// TestGenerateHeadingAlone: a numbered heading ("4. 제출 서류") is not a list item, and a heading without the
// question's words is never the answer.
func TestGenerateHeadingAlone(t *testing.T) {
	t.Parallel()
	ls := layout("4. 제출 서류\n\n다음 서류를 내야 합니다.\n\n- 등본\n- 초본")
	if ls[0].item || !ls[0].heading {
		t.Errorf("\"4. 제출 서류\" read as item=%v heading=%v, want a heading", ls[0].item, ls[0].heading)
	}
	if !ls[4].item || !ls[5].item {
		t.Error("bullets not read as list items")
	}
	text := generateStreamed(t, New(Options{}), rag.GenerateRequest{Question: "단지 주차장은 몇 대인가요?", Passages: noticePassages})
	if !strings.Contains(text, "150대") || strings.HasPrefix(text, "5. 주차/교통") && !strings.Contains(text, "\n") {
		t.Errorf("answer %q: want the parking sentence", text)
	}
}

var pixelPassages = []rag.Passage{
	{N: 1, Title: "메타 픽셀 설치", Text: "메타 픽셀은 웹사이트의 모든 페이지 머리글에 설치합니다. " +
		"메타 픽셀 코드는 이벤트 관리자에서 복사합니다. 메타 광고 성과는 광고 관리자에서 봅니다."},
	{N: 2, Title: "메타 광고 성과", Text: "메타 광고의 CPM은 노출 1,000회당 비용입니다. 메타 광고 관리자에서 열을 바꿔 봅니다."},
}

// TestGenerateRival: a question about something no passage names, paired with something they do, is not
// covered; the same question about what they name is answered.
func TestGenerateRival(t *testing.T) {
	t.Parallel()
	checkCovered(t, pixelPassages, []coverCase{
		{"메타 픽셀은 어디에 설치하나요?", true},
		{"틱톡 픽셀은 어디에 설치하나요?", false},
		{"카카오 모먼트랑 메타 광고 중에 CPM이 어디가 더 싸요?", false},
		{"GA4랑 메타 광고 성과 연동하는 방법 알려주세요", false},
		{"Where is the TikTok pixel installed?", false},
	})
}

// coverCase is a question and whether the passages cover it.
type coverCase struct {
	question string
	found    bool
}

// checkCovered asks each question over passages and checks whether it is answered or not covered.
func checkCovered(t *testing.T, passages []rag.Passage, cases []coverCase) {
	t.Helper()
	for _, tc := range cases {
		text := generateStreamed(t, New(Options{}), rag.GenerateRequest{Question: tc.question, Passages: passages})
		if found := text != generate.NotFound(textproc.DetectLanguage(tc.question)); found != tc.found {
			t.Errorf("%q: answer %q, want found=%v", tc.question, text, tc.found)
		}
	}
}

// TestGenerateRivalSpelling: a question opening with a name the passages spell otherwise, or write joined to
// the next word, or with an adjective, and a noun tied to a verb by "과", are not rivals of what the passages
// name.
func TestGenerateRivalSpelling(t *testing.T) {
	t.Parallel()
	passages := []rag.Passage{{N: 1, Title: "높이뛰기", Text: "소토마요르는 바르셀로나 올림픽에서 높이뛰기 금메달을 땄다. " +
		"애틀랜타 올림픽에서는 은메달을, 시드니 올림픽에서는 동메달을 땄다. 모션그래픽스 작업도 했다. " +
		"그는 은퇴와 관련하여 기자회견을 열었다."}}
	checkCovered(t, passages, []coverCase{
		{"바르세롤나 올림픽에서 높이뛰기에서 우승한 선수는?", true},
		{"아테네 올림픽에서 높이뛰기에서 우승한 선수는?", false},
		{"부상과 관련하여 기자회견을 연 선수는?", true},
		{"부상과 은퇴 중 무엇이 기자회견의 주제였나?", false},
	})
}

// TestGenerateRivalTitled: a question opening with what a passage's title names (an article on "테드 번디"
// calls him by another name, or by none), with a name spelt one letter off the passages' ("도날드" for
// "도널드"), a question word, a verb or copula qualifying the next word, or a date after it, pairs nothing
// the passages lack with what they name; neither do "X과 함께" and "…에도 불구하고". A name neither
// the titles nor the text hold is still a rival.
func TestGenerateRivalTitled(t *testing.T) {
	t.Parallel()
	passages := []rag.Passage{{N: 1, Title: "테드 번디", Text: "시어도어 번디는 1946년에 태어났다. " +
		"로버트 번디와 달리 시어도어 번디는 워싱턴 대학교를 1972년에 졸업했다. 그는 고아 소녀 숙희를 키웠다. " +
		"하녀 숙희는 그를 도왔다. 그는 지난 2016년에 공화당 대통령 후보였다. 무려 2016년에 미국 대통령 선거에 동료와 함께 출마하였다. " +
		"동맹을 맺고도 우호관계를 유지했다."},
		{N: 2, Title: "미국의 대통령", Text: "도널드 트럼프는 2016년 대통령 선거에서 당선되었다. 아버지 프레드 트럼프는 " +
			"부동산 개발업자였다. 딸 이방카 트럼프는 보좌관을 지냈다. 로버트 번디는 대통령 선거에 출마하였다."}}
	checkCovered(t, passages, []coverCase{
		{"테드 번디가 워싱턴 대학교를 졸업한 해는?", true},
		{"도날드 트럼프가 당선된 선거는?", true},
		{"몇대 대통령 선거에 출마하였나?", true},
		{"고아인 숙희를 키운 사람은?", true},
		{"잔존해있던 번디가 졸업한 대학교는?", true},
		{"그가 2016년에 출마한 선거는?", true},
		{"번디가 멜라니아와 함께 출마한 선거는?", true},
		{"번디가 동맹에도 불구하고 우호관계를 유지한 나라는?", true},
		{"스콧 번디가 워싱턴 대학교를 졸업한 해는?", false},
		{"멜라니아 트럼프가 당선된 선거는?", false},
	})
}

func TestAbbreviated(t *testing.T) {
	t.Parallel()
	vocab := []string{"페이스북", "비밀번호를", "api", "메타"}
	for w, want := range map[string]bool{"페북": true, "비번": true, "capi": true, "틱톡": false, "메북": false, "ga4": false} {
		if got := abbreviated(w, vocab); got != want {
			t.Errorf("abbreviated(%q) = %v, want %v", w, got, want)
		}
	}
}

func TestQuestionWordClasses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		word              string
		focus, fill, stem bool
	}{
		{"걸려요", false, false, false},
		{"대표발의했나요", true, false, true},
		{"이렇게", false, true, false},
		{"어디서", false, true, false},
		{"수료증", true, false, false},
	} {
		q := questionWords(tc.word, "")
		if len(q) != 1 {
			t.Fatalf("%q: %d words", tc.word, len(q))
		}
		if q[0].focus != tc.focus || q[0].fill != tc.fill || (q[0].stem != "") != tc.stem {
			t.Errorf("%q: focus %v fill %v stem %q; want focus %v fill %v stem %v", tc.word, q[0].focus, q[0].fill, q[0].stem, tc.focus, tc.fill, tc.stem)
		}
	}
}

var committeePassages = []rag.Passage{
	{N: 1, Title: "기후위기 대응을 위한 탄소중립·녹색성장 기본법 일부개정법률안", Text: "탄소중립위원회는 위원장 2명을 포함한 " +
		"50명 이상 100명 이내의 위원으로 구성한다. 위원은 기후변화, 에너지, 자원 분야의 전문가 중에서 대통령이 " +
		"위촉한다. 위원회의 사무를 처리하기 위하여 간사위원 1명을 둔다."},
	{N: 2, Title: "검토보고서", Text: "개정안은 탄소중립위원회 위원 중 청년 위원의 비율을 정하려는 것이다. 위원회의 " +
		"구성에 관하여는 다양한 의견이 있다."},
}

// TestGenerateUnasked: a question naming what the passages name (the committee's members) but asking for
// an attribute they never mention (an allowance) is not covered; asking for one they state is answered, and
// so are reworded questions that keep most of their focus words.
func TestGenerateUnasked(t *testing.T) {
	t.Parallel()
	checkCovered(t, committeePassages, []coverCase{
		{"위원 수당 지급액은 얼마인가요?", false},
		{"위원 수당 지급액은 얼마인가요? 간사위원 비율도", true}, // half its focus words are in the passages
		{"위원 수당 지급액은?", false},               // neither of its nouns beside the topic (위원) is in the passages
		{"탄소중립위원회 위원은 누가 위촉하나요?", true},
		{"위원을 위촉하는 사람은 누구인가요?", true},
		{"탄소중립위원회의 위원 수는 몇 명인가요?", true},
		{"탄소중립위원회 위원으로 뽑히는 사람은 어떤 분야 전문가인가요?", true},
	})
	// A follow-up names its topic through the previous question (followup.Resolve): "그 위원의 수당" is the
	// committee members' allowance, which the passages never mention, with the history as without it.
	followUp := rag.GenerateRequest{Question: "그 위원의 수당은 누가 정하나요?", Passages: committeePassages,
		History: []rag.Turn{{Role: rag.RoleUser, Content: "탄소중립위원회 위원은 누가 위촉하나요?"}}}
	if text := generateStreamed(t, New(Options{}), followUp); text != generate.NotFound("ko") {
		t.Errorf("follow-up about an allowance: answer %q", text)
	}
	followUp.History = nil
	if text := generateStreamed(t, New(Options{}), followUp); text != generate.NotFound("ko") {
		t.Errorf("without its history: answer %q", text)
	}
	// The ask word may be the head of a compound the passage writes ("법률안" of "일부개정법률안").
	bill := []rag.Passage{{N: 1, Text: "탄소중립기본법 일부개정법률안\n(이수진의원 대표발의)\n의 안 번 호 : 5318"}}
	if text := generateStreamed(t, New(Options{}), rag.GenerateRequest{Question: "이 법률안은 누가 대표발의했나요?", Passages: bill}); !strings.Contains(text, "이수진") {
		t.Errorf("bill sponsor: answer %q", text)
	}
}

// TestGenerateUnaskedEntity: a question asking for a thing by its kind — with who, what, where or which, or
// with none and a verb qualifying its last noun ("…헌신했던 종교는?") — names the answer's class, which the
// passages name by the instance ("교회"); the ask word need not be there. A question asking for an
// attribute's value ("…의 녹봉은 얼마인가?") or an attribute ("…의 차이는 무엇인가요?") still needs it. The title
// names the subject the sentences leave out.
func TestGenerateUnaskedEntity(t *testing.T) {
	t.Parallel()
	passages := []rag.Passage{{N: 1, Title: "김영삼", Text: "할아버지 김동옥은 거제도에 교회를 세우고 장로로 일했다. " +
		"1968년 그는 박정희의 3선 개헌에 맞서 개헌 반대 법률안을 내놓았다."},
		{N: 2, Title: "김영삼", Text: "1950년대에는 자유당에 입당하였다."}}
	checkCovered(t, passages, []coverCase{
		{"김영삼의 할아버지가 헌신했던 종교는?", true},
		{"김영삼의 할아버지가 헌신한 종교는 무엇인가?", true},
		{"김영삼의 할아버지의 녹봉은 얼마인가?", false},
	})
	// An ask word naming an attribute (차이, 장점) is no kind of thing: the passages must name what it is of.
	react := []rag.Passage{{N: 1, Title: "컴포넌트 import 및 export 하기", Section: "Root 컴포넌트란",
		Text: "Root 컴포넌트란\n\n첫 컴포넌트에서 만든 Profile 컴포넌트와 Gallery 컴포넌트는 아래와 같이 렌더링 됩니다."},
		// A section heading is not what its passage says: its "단계" is not the question's.
		{N: 2, Title: "컴포넌트 import 및 export 하기", Section: "한 파일에서 여러 컴포넌트를 import 하거나 export 하는 방법 > 컴포넌트를 한 단계 더 분리하기",
			Text: "img { margin: 0 10px 10px 0; height: 90px; }"}}
	checkCovered(t, react, []coverCase{
		{"렌더링과 커밋 단계의 차이는 무엇인가요?", false},
		{"렌더링과 커밋 단계의 장점은 무엇인가요?", false},
	})
}

func TestNounLike(t *testing.T) {
	t.Parallel()
	for w, want := range map[string]bool{"정원은": true, "수강료는": true, "지급액은": true, "관리비": true,
		"소개한": false, "쓰이는": false, "몇대몇으로": false, "만들어야되요": false, "키워도": false, "펴내며": false,
		"ᅲᅲ": false, "revenue": false} {
		q := questionWords(w, "")
		if len(q) != 1 {
			t.Fatalf("%q: %d words", w, len(q))
		}
		if got := nounLike(q[0]); got != want {
			t.Errorf("nounLike(%q) = %v, want %v", w, got, want)
		}
	}
}

// TestLatinWordWithParticle: a Latin word with a Korean particle ("ROAS는", "1%랑") is matched by a sentence
// holding the Latin word with another particle or none, and not by the particle alone.
func TestLatinWordWithParticle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		word, sentence string
		want           float64
	}{
		{"ROAS는", "ROAS, 광고비 대비 매출 = 전환 매출 ÷ 지출 금액", 1},
		{"1%랑", "1%가 소스와 가장 비슷한 사람들입니다.", 1},
		{"event_id는", "서버 쪽에서는 event_id 필드에 주문 번호를 넣습니다.", 1},
		{"ROAS는", "CTR은 클릭 수를 노출 수로 나눈 값입니다.", 0},
	} {
		qw := questionWords(tc.word+" 뭔가요?", "")
		if got := degree(qw[0], termSet(tc.sentence)); got != tc.want {
			t.Errorf("%q in %q: degree %.2f, want %.2f (terms %v)", tc.word, tc.sentence, got, tc.want, qw[0].terms)
		}
	}
}

// TestFillerWithParticle: a filler keeps carrying no topic with a particle ("머가" is "머" with "가").
func TestFillerWithParticle(t *testing.T) {
	t.Parallel()
	for w, want := range map[string]bool{"머가": true, "그거는": true, "머": true, "광고가": false, "가격은": false} {
		if got := filler(w); got != want {
			t.Errorf("filler(%q) = %v, want %v", w, got, want)
		}
	}
}

// TestGenerateExplanationGoesOn: a question asking why gets the sentence that states it and the paragraph's
// explanation after it, not only the short sentence announcing it.
func TestGenerateExplanationGoesOn(t *testing.T) {
	t.Parallel()
	passages := onePassage("재고 관리", "재고는 매일 아침에 확인합니다.",
		"많이 묻는 질문이 \"재고 수량이 왜 주문 수와 다르냐\"는 거예요. 이유는 두 가지입니다. 주문은 결제 시점에 잡히지만 재고는 "+
			"출고 시점에 빠집니다. 또 취소된 주문도 하루 동안 남아 있어요.",
		"재고 수량은 창고 화면에서 봅니다. 주문 수는 판매 화면에 나옵니다.")
	answerHolds(t, passages, "재고 수량이랑 주문 수가 왜 달라요?", "이유는 두 가지입니다", "출고 시점에 빠집니다")
}

// onePassage is a passage [1] of the given title whose paragraphs are paras.
func onePassage(title string, paras ...string) []rag.Passage {
	return []rag.Passage{{N: 1, Title: title, Text: strings.Join(paras, "\n\n")}}
}

// answerHolds asks question over passages and checks that the answer holds every string of want and quotes
// only the passages; it returns the answer.
func answerHolds(t *testing.T, passages []rag.Passage, question string, want ...string) string {
	t.Helper()
	text := generateStreamed(t, New(Options{}), rag.GenerateRequest{Question: question, Passages: passages})
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%q: answer %q lacks %q", question, text, w)
		}
	}
	checkGrounded(t, text, passages)
	return text
}

// TestFillerEmoticon: bare Hangul letters ("ㅠㅠ", "ㅋㅋ") are emoticons, not words of the question.
func TestFillerEmoticon(t *testing.T) {
	t.Parallel()
	for _, w := range []string{"ㅠㅠ", "ᅲᅲ", "ㅋㅋㅋ"} {
		if !filler(w) {
			t.Errorf("filler(%q) = false, want true", w)
		}
	}
	if qw := questionWords("환불은 언제 되나요 ㅠㅠ", ""); len(qw) != 3 || qw[2].focus || !qw[2].fill {
		t.Errorf("questionWords: %+v, want ㅠㅠ as a filler", qw)
	}
}

// TestGenerateOtherDocumentAddsFocus: a sentence of another document joins the answer only when it holds a
// focus word the chosen sentences lack, so that table cells of another document that share the matched
// word ("시행령") do not follow the answer.
func TestGenerateOtherDocumentAddsFocus(t *testing.T) {
	t.Parallel()
	passages := []rag.Passage{
		{N: 1, Title: "일부개정법률안", Text: "부칙\n\n이 법은 공포 후 6개월이 경과한 날부터 시행한다."},
		{N: 2, Title: "회의록", Text: "대통 환경보건법 시행령 환경 2024.\n\n대통 기상법 시행령 환경 2024."},
		{N: 3, Title: "시행 안내", Text: "개정법률의 공포일은 2024년 3월 5일입니다."},
	}
	text := generateStreamed(t, New(Options{}), rag.GenerateRequest{Question: "개정법률의 시행에 관해 알려 주세요", Passages: passages})
	if !strings.Contains(text, "공포 후 6개월") || strings.Contains(text, "시행령") {
		t.Errorf("answer %q: want the bill's sentence without the other document's table cells", text)
	}
	if !strings.Contains(text, "2024년 3월 5일") {
		t.Errorf("answer %q: want the sentence of another document holding another focus word (개정법률)", text)
	}
	checkGrounded(t, text, passages)
}

// TestGenerateColonLeadIn: a sentence ending in a colon brings what it announces when it is chosen, even
// when that is not a bulleted list (a table read as lines) and the sentence is not the best one.
func TestGenerateColonLeadIn(t *testing.T) {
	t.Parallel()
	passages := onePassage("Proposed rule", "Deviations are coordinated with the agency. Costs of Compliance",
		"The agency estimates that this proposed rule affects 73 vessels. The agency estimates the following costs to comply with this proposed rule:",
		"Action Labor cost Parts cost", "Hull inspection 2 work-hours × $85 per hour = $170 $0", "Regulatory Findings",
		"This rule is not a significant regulatory action.")
	text := answerHolds(t, passages, "What are the costs of compliance for the proposed rule?", "following costs to comply",
		"Hull inspection 2 work-hours", "$170")
	if strings.Contains(text, "significant regulatory action") {
		t.Errorf("answer %q: the block ends at the next heading", text)
	}
	// The lines under the lead-in read as lines, cited once after the last (not "[1]" after every cell).
	if !strings.Contains(text, "proposed rule: [1]\nAction Labor cost Parts cost\nHull inspection") || !strings.HasSuffix(text, "$170 $0 [1]") {
		t.Errorf("answer %q: want the table's lines on their own lines with one citation after them", text)
	}
}

// TestAnswerTypeTakesLong: "오래 걸려요?" asks how long, as "how long" does: a sentence giving a duration
// answers it.
func TestAnswerTypeTakesLong(t *testing.T) {
	t.Parallel()
	for q, want := range map[string]ansType{"심사가 원래 이렇게 오래 걸려요?": typeNumber, "How long does the review take?": typeNumber,
		"가장 오래된 아파트는?": typeNone} {
		if got := answerType(q); got != want {
			t.Errorf("answerType(%q) = %v, want %v", q, got, want)
		}
	}
}

// TestGenerateModalVerbNeitherSide: a verb before "수 있다" ("받을 수 있어요") says what may be done with the
// thing asked about, not what it is; matching another form of it ("받는") does not make up for the absent
// thing. Asked about something the passages do name, the same question is answered.
func TestGenerateModalVerbNeitherSide(t *testing.T) {
	t.Parallel()
	passages := []rag.Passage{{N: 1, Title: "교육 안내", Text: "이번 교육의 마지막 시간입니다. 오늘은 보고서 쓰는 법을 " +
		"다룹니다.\n\n상담 신청을 받는 병원이나 학원이라면 신청서가 기본입니다. 교재는 첫 시간에 나눠 드립니다."}}
	checkCovered(t, passages, []coverCase{
		{"교육 다 들으면 자격증 나오나요? 언제 받을 수 있어요?", false},
		{"교육 교재는 언제 받을 수 있어요?", true},
	})
}

// TestGenerateNestedList: a list item that a list of the other kind follows (a bulleted recap's item over
// numbered steps) introduces those steps: asked for the steps, the answer is that item with each of them,
// not the paragraph's last sentence before the recap, nor the recap's other items.
func TestGenerateNestedList(t *testing.T) {
	t.Parallel()
	passages := []rag.Passage{{N: 1, Title: "렌더링 그리고 커밋", Text: "에필로그: 브라우저 페인트\n\n" +
		"렌더링이 완료되고 React가 DOM을 업데이트한 후 브라우저는 화면을 다시 그립니다. 이 단계를 \"브라우저 렌더링\"이라고 하지만 " +
		"이 문서의 나머지 부분에서 혼동을 피하고자 \"페인팅\"이라고 부를 것입니다.\n\n" +
		"- React 앱의 모든 화면 업데이트는 세 단계로 이루어집니다.\n\n1. 트리거\n\n2. 렌더링\n\n3. 커밋\n\n" +
		"- Strict Mode를 사용하여 컴포넌트에서 실수를 찾을 수 있습니다.\n\n" +
		"- 렌더링 결과가 이전과 같으면 React는 DOM을 건드리지 않습니다."}}
	q := "React가 화면을 업데이트하는 세 단계는 무엇인가요?"
	text := generateStreamed(t, New(Options{}), rag.GenerateRequest{Question: q, Passages: passages})
	if !strings.HasPrefix(strings.TrimPrefix(text, "- "), "React 앱의 모든 화면 업데이트는 세 단계로 이루어집니다.") {
		t.Errorf("%q: answer %q does not open with the item that introduces the steps", q, text)
	}
	for _, step := range []string{"\n1. 트리거", "\n2. 렌더링", "\n3. 커밋"} {
		if !strings.Contains(text, step) {
			t.Errorf("%q: answer %q lacks the step %q on a line of its own", q, text, step)
		}
	}
	for _, other := range []string{"페인팅", "Strict Mode"} {
		if strings.Contains(text, other) {
			t.Errorf("%q: answer %q quotes %q, which is not one of the steps", q, text, other)
		}
	}
	checkGrounded(t, text, passages)
}

func TestNestedAfter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text string
		want int // the items the first unit introduces
	}{
		{"- 세 단계가 있습니다.\n1. 하나\n2. 둘\n- 다음 항목", 2},
		{"1. 첫 단계입니다.\n- 세부 하나\n- 세부 둘\n2. 둘째 단계", 2},
		{"- 같은 종류입니다.\n- 다음 항목\n- 또 다음", 0},
		{"- 끝 항목입니다.\n\n문단이 이어집니다.", 0},
	} {
		us := units(tc.text)
		if got := len(us[0].block); got != tc.want || us[0].lead != (tc.want > 0) {
			t.Errorf("units(%q)[0]: block %v lead %v, want %d items", tc.text, us[0].block, us[0].lead, tc.want)
		}
	}
}

// TestGenerateWhenNotList: a question asking when, though it names documents ("서류제출 대상자에게는 언제
// 안내하나요?"), asks for a date: the list of documents under its lead-in is no answer, the sentence giving
// the date is.
func TestGenerateWhenNotList(t *testing.T) {
	t.Parallel()
	passages := []rag.Passage{noticePassages[0], {N: 2, Title: noticePassages[0].Title, Text: "3. 신청 방법\n\n" +
		"한 세대는 한 건만 신청할 수 있고 중복 신청은 모두 무효입니다. 서류제출 대상자는 2026-12-04에 개별 문자로 안내합니다."}}
	q := "서류제출 대상자에게는 언제 안내하나요?"
	text := generateStreamed(t, New(Options{}), rag.GenerateRequest{Question: q, Passages: passages})
	if !strings.Contains(text, "2026-12-04") || strings.Contains(text, "주민등록표등본") {
		t.Errorf("%q: answer %q, want the date and not the list of documents", q, text)
	}
	if _, list := wantsList(q); list {
		t.Errorf("wantsList(%q) = true", q)
	}
	checkGrounded(t, text, passages)
}
