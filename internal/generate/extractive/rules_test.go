package extractive

import (
	"slices"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

// TestVerbStems: a Korean verb form gives the stems it may have, irregular verbs included, so that two forms
// of one verb meet; light verbs (하다, 되다, 있다) give none.
func TestVerbStems(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		form, stem string
	}{
		{"풀어요", "풀"},   // 어 as a syllable of its own
		{"푸는", "풀"},    // ㄹ dropped before ㄴ
		{"푼", "풀"},     // … fused with the adnominal ㄴ (one syllable: read by verbStems itself)
		{"풉니다", "풀"},   // … and with ㅂ니다
		{"떴다고", "뜨"},   // 었 fused into the stem
		{"써요", "쓰"},    // ㅡ dropped before 어
		{"어려워요", "어렵"}, // ㅂ irregular
		{"도와요", "돕"},   // … with 와
		{"몰라요", "모르"},  // 르 irregular
		{"들어요", "듣"},   // ㄷ irregular (also 들다)
		{"바꿔요", "바꾸"},  // 우 + 어
		{"보냈어요", "보내"}, // 애 + 었
		{"먹습니다", "먹"},  // a regular verb
		{"찾는데", "찾"},   // …
	} {
		got := verbStems(tc.form)
		if tc.form == "푼" {
			got = verbStems("푼다") // a one-syllable word has too little to read: its form with 다
		}
		if !slices.Contains(got, tc.stem) {
			t.Errorf("verbStems(%q) = %q, want %q among them", tc.form, got, tc.stem)
		}
	}
	for _, tc := range []struct{ form, stem string }{{"해요", "하"}, {"돼요", "되"}, {"있어요", "있"}, {"없는", "없"}} {
		if got := verbStems(tc.form); slices.Contains(got, tc.stem) {
			t.Errorf("verbStems(%q) = %q: the light verb %q is too common to match by", tc.form, got, tc.stem)
		}
	}
}

// TestGenerateIrregularVerb: "어떻게 풀어요?" asks how to undo something; the sentence that says how uses
// another form of the verb ("푸는 방법"), which shares no syllable pair with the question's, and must come
// first, with the paragraph that goes on to explain it, before a sentence that only shares the topic words.
func TestGenerateIrregularVerb(t *testing.T) {
	t.Parallel()
	passages := onePassage("학습 단계",
		"광고 세트가 학습 제한에 걸리는 이유는 여러 가지예요. 학습 제한이 떴다고 당장 광고를 끌 필요는 없어요.",
		"학습 제한을 푸는 방법은 그 반대입니다. 비슷한 세트를 하나로 합치세요. 타겟을 넓히세요.")
	answerHolds(t, passages, "광고 세트에 학습 제한이 뜨는데 어떻게 풀어요?", "푸는 방법", "하나로 합치세요", "타겟을 넓히세요")
}

// TestGenerateQuestionInTextGoesOn: a question the text asks itself ("그럼 예산은 얼마로 잡아야 할까요?") is
// answered by the rest of its paragraph, not only by the sentence after it, which often only leads up to
// the answer; even when the user's question asks for a value rather than how or why.
func TestGenerateQuestionInTextGoesOn(t *testing.T) {
	t.Parallel()
	passages := onePassage("예산 설정",
		"예산 종류는 두 가지예요. 일일 예산과 총예산입니다.",
		"그럼 예산은 얼마로 잡아야 할까요? 여기서 다음 주에 배울 개념을 미리 가져올게요. 광고 세트 하나가 일주일에 "+
			"최적화 이벤트를 50번 정도 얻는 게 좋아요. 그래서 제가 쓰는 공식은 '목표 CPA × 50 ÷ 7'입니다.",
		"마지막으로 예산 변경이에요. 예산을 갑자기 바꾸면 성과가 흔들려요.")
	answerHolds(t, passages, "예산을 얼마로 잡아야 하는지 기준이 있나요?", "얼마로 잡아야 할까요", "목표 CPA × 50 ÷ 7")
}

// TestGenerateUnnamedTopic: a Korean question opening with a topic the passages never name ("네이버
// 검색광고", "Next.js 서버 컴포넌트") is not covered, though the passages hold its other words; the same
// question about what they name, a question whose topic is in the passages' title, and one opening with an
// adjective rather than a noun are answered.
func TestGenerateUnnamedTopic(t *testing.T) {
	t.Parallel()
	passages := []rag.Passage{{N: 1, Title: "메타 경매와 입찰 전략", Text: "메타 광고의 입찰가는 보통 목표 CPA 근처에서 시작합니다. " +
		"입찰가를 너무 낮게 잡으면 노출이 줄어요. 키워드 대신 타겟과 소재가 성과를 가릅니다.\n\n" +
		"데이터를 가져오는 방법은 이 강의에서 다루지 않지만, 전환 API는 컴포넌트 없이 이벤트를 보냅니다. " +
		"크고 용감한 형제가 함께 광고를 운영했습니다."}}
	checkCovered(t, passages, []coverCase{
		{"메타 광고 입찰가는 보통 얼마부터 시작하나요?", true},
		{"네이버 검색광고 키워드 입찰가는 보통 얼마부터 시작하나요?", false},
		{"Next.js 서버 컴포넌트에서 데이터를 가져오는 방법은?", false},
		{"경매 입찰 전략에서 입찰가는 얼마부터 시작하나요?", true},
		{"씩씩한 형제가 함께 운영한 것은?", true},
		{"그중 첫 입찰가는 얼마부터 시작하나요?", true},    // "among them": a follow-up's pointer, not a topic
		{"만약 키워드 입찰가를 낮추면 어떻게 되나요?", true}, // "if" is no topic
	})
}

// TestUnitsJoinNumbers: a date written with periods ("2023. 11. 9.") stays one sentence, so that it is
// quoted whole rather than cut by citations; a sentence ending in a number before a new sentence is not
// joined to it.
func TestUnitsJoinNumbers(t *testing.T) {
	t.Parallel()
	var got []string
	for _, u := range units("발의연월일 : 2023. 11. 9. 발의자 : 이수진 의원. 참석자는 모두 12. 회의는 끝났다.") {
		got = append(got, u.text)
	}
	want := []string{"발의연월일 : 2023. 11. 9.", "발의자 : 이수진 의원.", "참석자는 모두 12.", "회의는 끝났다."}
	if !slices.Equal(got, want) {
		t.Errorf("units = %q, want %q", got, want)
	}
}

// TestGenerateHowTopic: "CPM은 어떻게 계산하나요?" is about CPM; over a page whose title names every metric,
// the line defining CPM answers it first, not a sentence that only shares the verb ("예시로 계산해 볼게요") or
// one about another metric ("손익분기 ROAS는 … 계산합니다").
func TestGenerateHowTopic(t *testing.T) {
	t.Parallel()
	text := answerHolds(t, metricPassages(), "CPM은 어떻게 계산하나요?", "지출 금액 ÷ 노출 수 × 1,000")
	if !strings.HasPrefix(text, "- CPM, 1,000회") {
		t.Errorf("answer %q: want the line defining CPM first, on the answer's first line", text)
	}
}

// TestGenerateFormula: a question asking how something is calculated is answered with the formula, though
// the best-ranked passage talks about the same metric at length.
func TestGenerateFormula(t *testing.T) {
	t.Parallel()
	passages := []rag.Passage{
		{N: 1, Title: "지표 해석", Text: "CPC가 높다면 소재를 점검하세요. CPC는 업종마다 달라요. CPC는 경쟁이 심하면 올라요. " +
			"CPC가 낮다고 다 좋은 건 아니에요. CPC는 매일 보세요."},
		{N: 2, Title: "지표 공식", Text: "공식부터 보여 드릴게요.\n\n- CPC, 클릭당 비용 = 지출 금액 ÷ 클릭 수\n\n- CTR, 클릭률 = 클릭 수 ÷ 노출 수 × 100"},
	}
	answerHolds(t, passages, "CPC는 어떻게 계산하나요?", "지출 금액 ÷ 클릭 수")
}

// TestFillerWithDirectionParticle: "어느 정도로" asks how much; "정도로" is a filler with its particle, not a
// focus word that sentences saying "50번 정도" match.
func TestFillerWithDirectionParticle(t *testing.T) {
	t.Parallel()
	for _, w := range []string{"정도로", "정도는", "정도"} {
		if !filler(w) {
			t.Errorf("filler(%q) = false, want true", w)
		}
	}
}

// TestUnnamedTopicMisspelt: a question that misspells the name it opens with by one letter ("앵겨스 영" for
// "앵거스 영", "쇼화 천왕" for "쇼와 천황") names what the passages do and is answered.
func TestUnnamedTopicMisspelt(t *testing.T) {
	t.Parallel()
	passages := onePassage("깁슨 SG", "이 악기를 애용하는 대표적인 기타리스트는 앵거스 영과 토니 아이오미가 있다.",
		"쇼와 천황의 자서전은 시종장이 함께 썼다.")
	checkCovered(t, passages, []coverCase{
		{"앵겨스 영과 토니 아이오미가 주로 애용하는 기타는?", true},
		{"쇼화 천왕의 자서전을 함께 쓴 시종장은?", true},
		{"네이버 검색광고 자서전을 쓴 사람은?", false},
	})
	for _, tc := range []struct {
		a, b string
		want bool
	}{{"쇼화", "쇼와", true}, {"천왕", "천황의", true}, {"앵겨스", "앵거스", true}, {"네이버", "데이터", false}, {"쇼와", "쇼와", false}} {
		if got := oneLetterOff(tc.a, tc.b); got != tc.want {
			t.Errorf("oneLetterOff(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestGenerateNextParagraph: a how/why/whether answer whose paragraph ends by naming what the question needs
// ("그래서 필요한 게 중복 제거 …") goes on into the next paragraph when it opens with that name ("중복 제거의
// 원리는 …"), where the how is; so does one describing a mistake into the next paragraph when it draws the
// conclusion ("그래서 …"), up to as many sentences as an answer quotes. A next paragraph opening otherwise
// is not quoted.
func TestGenerateNextParagraph(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		question, text string
		want, not      []string
	}{
		{"백업 도구 두 개를 같이 쓰면 파일이 두 번 저장되는 거 아닌가요?",
			"백업 도구는 두 가지를 함께 씁니다. 그런데 이렇게 하면 문제가 하나 생깁니다. 같은 파일이 두 번 저장되는 거죠. " +
				"그래서 필요한 게 중복 제거입니다.\n\n중복 제거의 원리는 간단해요. 해시가 같으면 하나만 남깁니다.\n\n" +
				"복원은 관리 화면에서 합니다.",
			[]string{"해시가 같으면"}, []string{"복원은"}},
		{"화분에 물을 매일 주면 그게 관리 맞죠?",
			"많은 분들이 화분에 물을 매일 주고는 이걸 관리라고 생각하세요. 이 방법에는 함정이 있어요. 뿌리가 숨을 못 쉽니다.\n\n" +
				"그래서 흙이 마른 걸 손가락으로 확인하고 주는 걸 권합니다. 겉흙이 2cm 말랐을 때가 기준이에요. 화분 받침의 물은 버리세요. " +
				"겨울에는 간격을 늘립니다. 분갈이는 봄에 합니다.\n\n비료는 한 달에 한 번이면 됩니다.",
			[]string{"손가락으로 확인", "간격을 늘립니다"}, []string{"분갈이는", "비료는"}},
	} {
		passages := []rag.Passage{{N: 1, Title: "안내", Text: tc.text}}
		got := generateStreamed(t, New(Options{}), rag.GenerateRequest{Question: tc.question, Passages: passages})
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%q: answer %q lacks %q", tc.question, got, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(got, n) {
				t.Errorf("%q: answer %q holds %q", tc.question, got, n)
			}
		}
	}
}

// TestSpacedCompound: a compound the text writes in two words ("테드 번디는", "선거 유세를") holds the word a
// question writes joined ("테드번디가", "선거유세는"); a word with its particle ends a compound ("김영삼은 대통령").
func TestSpacedCompound(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		word, sentence string
		want           bool
	}{
		{"테드번디가", "테드 번디는 1946년에 태어났다.", true},
		{"선거유세는", "지방 선거 유세가 시작되었다.", true},
		{"김영삼대통령", "김영삼은 대통령에 당선되었다.", false},
	} {
		q := questionWords(tc.word, "")
		if got := degree(q[0], termSet(tc.sentence)) == 1 || spacedIn(tc.sentence, q[0]); got != tc.want {
			t.Errorf("%q in %q: whole match %v, want %v", tc.word, tc.sentence, got, tc.want)
		}
	}
}
