package extractive

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/generate"
	"github.com/ragd/ragd/internal/rag"
)

// TestGivenNames: an English question's capitalised words that do not open a sentence, numbers, and Latin
// words inside Korean text are names; the word opening an English sentence and Korean words are not.
func TestGivenNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		question string
		want     []string
	}{
		{"Who founded the Thunderbird project in 2003?", []string{"thunderbird", "2003"}},
		{"When did the FAA lift the 737 MAX grounding? Boeing says soon.", []string{"faa", "737", "max"}}, // "Boeing" opens a sentence
		{"What is AD 2018-23-51 about?", []string{"ad", "2018-23-51"}},
		{"React에서 UI를 요청하는 단계는? CPM이 뭐예요", []string{"react에서", "ui를", "cpm이"}},
		{"1963년부터 선포된 비상사태는 몇 년 갔나?", nil}, // a number with a Korean unit is worded freely
		{"what is the revenue?", nil},
	} {
		got := slices.Sorted(maps.Keys(givenNames(tc.question)))
		want := slices.Sorted(slices.Values(tc.want))
		if !slices.Equal(got, want) {
			t.Errorf("givenNames(%q) = %q, want %q", tc.question, got, want)
		}
	}
}

// TestGenerateMissingName: a name or year the question gives that a passage holds but the answer's
// sentences (and their passage's title) do not is not covered — the answer would be about another thing or
// year; held by the answer, or (a name) by no passage at all, it does not refuse. A year no passage of the
// answer holds refuses wherever else it is, and a line of another document holding the year alone does not
// make the answer hold it. A Latin name in a Korean question
// is held by the passage the answer quotes (Korean sentences drop the subject their passage named).
func TestGenerateMissingName(t *testing.T) {
	t.Parallel()
	mozilla := []rag.Passage{
		{N: 1, Title: "Mozilla", Text: "Mozilla's total revenue for 2011 was $163 million, up from 2010."},
		{N: 2, Title: "Firefox", Text: "Firefox 84 was released in 2020. In 2020 the browser moved to a new engine. Its logo changed in 2020."},
	}
	checkCovered(t, mozilla, []coverCase{
		{"What was Mozilla's total revenue for 2011?", true},
		{"What was Mozilla's total revenue for 2020?", false}, // 2020 is in passage 2; the revenue sentence is of 2011
		{"What was Mozilla's total revenue for 2031?", false}, // no passage has 2031: a year is spelt one way
		{"What was Thunderbird's total revenue?", true},       // no passage has Thunderbird: the share decides
	})
	notice := []rag.Passage{
		{N: 1, Title: "Mozilla", Text: "In a report released in November 2012, Mozilla reported that its total revenue for 2011 was $163 million. Mozilla noted that 85% of its revenue comes from Google."},
		{N: 2, Title: "Federal Register", Text: "The FAA proposes to adopt a new airworthiness directive.\n\nIssued on August 3, 2020."},
	}
	checkCovered(t, notice, []coverCase{
		{"What is Mozilla's revenue for 2011?", true},
		{"What is Mozilla's revenue for 2020?", false}, // the notice's date is not Mozilla's revenue
	})
	thunderbird := []rag.Passage{
		{N: 1, Title: "Mozilla", Text: "In 2003 the Mozilla Foundation was founded to steward the project."},
		{N: 2, Title: "Mail", Text: "Thunderbird is an email client."},
	}
	checkCovered(t, thunderbird, []coverCase{
		{"Who founded the Mozilla Foundation in 2003?", true},
		{"Who founded the Thunderbird project in 2003?", false},
	})
	react := []rag.Passage{
		{N: 1, Title: "렌더링과 커밋", Text: "React는 화면을 그리기 전에 렌더링을 합니다.\n\n이 과정에는 UI를 요청하고 제공하는 세 가지 단계가 있습니다."},
		{N: 2, Title: "훅", Text: "React 훅은 상태를 다룹니다."},
	}
	checkCovered(t, react, []coverCase{{"React에서 UI를 요청하고 제공하는 단계는 몇 가지인가요?", true}})
}

// TestCoveredQuantifier: "how many" asks for an amount; "many" is no focus word the answer must hold. With
// MinCoverage 0.6, "How many rudders…" holds its one focus word (share 1, not 0.5).
func TestCoveredQuantifier(t *testing.T) {
	t.Parallel()
	for w, want := range map[string]bool{"many": true, "much": true, "often": true, "rudders": false, "manifold": false} {
		if q := questionWords(w, ""); len(q) != 1 || quantifier(q[0]) != want {
			t.Errorf("quantifier(%q) = %v, want %v", w, !want, want)
		}
	}
	passages := []rag.Passage{{N: 1, Text: "The aircraft has two rudders."}}
	text := generateStreamed(t, New(Options{MinCoverage: 0.6}), rag.GenerateRequest{Question: "How many rudders?", Passages: passages})
	if text == generate.NotFound("en") {
		t.Errorf("How many rudders: answer %q", text)
	}
}

// TestGenerateAbsentFocus: a question more than half of whose focus words (not only its nouns) are in none
// of the passages, among them all but one of its nouns, is not covered ("세금계산서", "부가세", "환급" over a
// lecture on ad budgets); one that keeps most of them is answered. A word of one syllable ("연"), a verb
// qualifying a noun and the closing predicate are not counted missing.
func TestGenerateAbsentFocus(t *testing.T) {
	t.Parallel()
	lecture := []rag.Passage{{N: 1, Title: "예산 설정", Text: "메타 광고비는 일일 예산으로 정합니다. " +
		"광고비는 카드로 결제되고 결제 내역은 광고 관리자에서 받을 수 있습니다."}}
	checkCovered(t, lecture, []coverCase{
		{"메타 광고비도 세금계산서 발행 되나요? 부가세 환급 받을 수 있는지 궁금해요", false},
		{"메타 광고비 결제 내역은 어디서 받을 수 있나요?", true},
	})
	// A verb qualifying a noun ("지어준") and the closing predicate ("불렀는가") are what a reworded question
	// changes first: neither counts as missing.
	name := []rag.Passage{{N: 1, Title: "박형식", Text: "박형식이라는 이름은 절의 스님이 지어 주었다. 마을 사람들은 그를 돼지장수라 했다."}}
	checkCovered(t, name, []coverCase{
		{"박형식이라는 이름을 지어준 이의 직업은?", true},
		{"마을 사람들은 박형식을 무엇이라고 불렀는가?", true},
	})
	// The ask word ("번역본") and half the focus words (라이선스, 한국어, 번역본 of six) are missing.
	license := []rag.Passage{{N: 1, Title: "Creative Commons Attribution 4.0 International Public License",
		Text: "Creative Commons Attribution 4.0 International Public License. By exercising the Licensed Rights, You accept the terms."}}
	checkCovered(t, license, []coverCase{
		{"Creative Commons 라이선스 4.0의 한국어 번역본은 언제 나왔나요?", false},
		{"Creative Commons 4.0 International Public License의 조건은 언제 받아들이나요?", true},
	})
}

// TestGenerateOtherValue: a when question whose topic noun before the question word ("임기는 몇 년") none
// of the answer's sentences, their neighbours or titles hold is not covered, though the answer gives a
// date; held by the answer, it is answered. How-many questions are left to the other rules: the passages
// may name the amount otherwise ("비율" of "21%", "법률안" counted "93건").
func TestGenerateOtherValue(t *testing.T) {
	t.Parallel()
	report := []rag.Passage{
		{N: 1, Title: "검토보고서", Text: "2023년 11월 9일 이수진 의원이 대표 발의한 탄소중립기본법 일부개정법률안은 2023년 11월 10일 탄소중립위원회 위원 관련으로 회부되었음.\n\n" +
			"제2기 위원회의 여성 위원은 7명으로 21%를 차지함."},
		{N: 2, Title: "회의록", Text: "제2항부터 제94항까지 이상 93건의 법률안을 일괄하여 상정합니다."},
	}
	checkCovered(t, report, []coverCase{
		{"탄소중립위원회 위원의 임기는 몇 년인가요?", false}, // the date is the referral's, not a term's
		{"일부개정법률안은 언제 회부되었나요?", true},
		{"제2기 위원회 여성 위원의 비율은 얼마인가요?", true}, // "21%" answers a 비율 without the word
		{"회의에서 일괄 상정된 법률안은 모두 몇 건인가요?", true},
		{"일부개정법률안이 회부된 시각은 언제인가요?", true}, // "시각" names the kind of value, not an event
		{"이수진 의원이 대표 발의한것은 언제인가요?", true}, // so does "것", written joined
	})
}

// TestAnswerType: "수는" and "규모" ask for an amount as words of their own ("참가자 수는", "규모는"), not inside
// another noun ("선수는", "대규모"), and "해는" for a year ("지어진 해는", not "피해는"); a question closing with
// who, what or where asks for a thing, whatever cue it holds on the way ("회담 기간 중 … 한 행사는 무엇인가?"),
// unless it asks how many, how much or when.
func TestAnswerType(t *testing.T) {
	t.Parallel()
	for q, want := range map[string]ansType{
		"대회 참가자 수는?":                                          typeNumber,
		"올림픽에서 우승한 선수는?":                                      typeNone,
		"감사원의 대규모 징계 요청에 반대한 것은 누구인가?":                        typeNone,
		"회담 기간 중 합의하여 실시하기로 한 행사는 무엇인가?":                      typeNone,
		"회담 기간은 며칠인가?":                                        typeTime,
		"몇 명이 참가한 대회는 무엇인가?":                                  typeNumber,
		"개포주공아파트가 지어진 해는?":                                    typeTime,
		"태풍의 피해는 어땠나?":                                        typeNone,
		"What is the docket number of the FAA proposed rule?": typeNumber, // an identifier, as "번호" asks
		"What is the numbering scheme?":                       typeNone,
	} {
		if got := answerType(q); got != want {
			t.Errorf("answerType(%q) = %v, want %v", q, got, want)
		}
	}
}

// TestLetterSpaced: a label written one syllable apart ("문 의 처") is read as its word (textproc.SpacedWords,
// whose rule textproc's tests hold), so that a question for it finds the line under it, a number a number
// question ("전화번호는?") may be answered by.
func TestLetterSpaced(t *testing.T) {
	t.Parallel()
	passages := []rag.Passage{
		{N: 1, Title: "검토보고서", Text: "문 의 처\n\n02)6788-5533"},
		{N: 2, Title: "회의록", Text: "검토보고서는 부록으로 보존함. 다음은 대체토론 순서입니다."},
	}
	text := generateStreamed(t, New(Options{}), rag.GenerateRequest{Question: "검토보고서에서 소개한 문의처 전화번호는?", Passages: passages})
	if !strings.Contains(text, "02)6788-5533 [1]") {
		t.Errorf("answer %q lacks the number under the label", text)
	}
}

// TestNameInNeighbour: a number a Korean question gives ("2018") may stand in the sentence before the one
// that answers, which goes on without it; another passage holding it then does not make the answer miss it.
func TestNameInNeighbour(t *testing.T) {
	t.Parallel()
	passages := []rag.Passage{
		{N: 1, Title: "방탄소년단", Text: "2018년에는 여러 시상식에 참석했다. 특히 베스트 팬덤상은 아이하트라디오 뮤직 어워즈에서 SNS에 거론된 횟수를 반영한 상이다."},
		{N: 2, Title: "방탄소년단", Text: "2018년 5월에는 빌보드 200 차트 1위에 올랐다. 베스트 팬덤상은 아미의 참여를 보여 주었다."},
	}
	r := New(Options{}).rank("2018 아이하트라디오 뮤직 어워즈에서 SNS에 거론된 횟수를 반영한 상은?", "", passages)
	for _, tc := range []struct {
		opens   string
		missing bool
	}{{"특히 베스트 팬덤상은", false}, {"베스트 팬덤상은 아미의", true}} {
		k := slices.IndexFunc(r.sents, func(s sentence) bool { return strings.HasPrefix(s.text, tc.opens) })
		if got := missingName([]sentence{r.sents[k]}, r, passages); got != tc.missing {
			t.Errorf("%q: missingName %v, want %v", tc.opens, got, tc.missing)
		}
	}
}

// TestGenerateMissingValue: a question asking how many or what price is not answered by sentences, or
// their neighbours, that state no number in any form; one whose sentence gives the number in digits or in
// words is, and a value question of another kind ("얼마부터 시작하나요?") may be answered in words.
func TestGenerateMissingValue(t *testing.T) {
	t.Parallel()
	mozilla := []rag.Passage{{N: 1, Title: "Gecko", Text: "Firefox uses Gecko both for rendering web pages and for rendering its user interface. " +
		"Gecko is also used by Thunderbird, SeaMonkey, and many non-Mozilla applications."}}
	pixel := []rag.Passage{{N: 1, Title: "메타 픽셀 설치와 표준 이벤트", Text: "오늘은 그 출발점인 메타 픽셀을 다룹니다. " +
		"메타 픽셀은 여러분 웹사이트에 심는 작은 자바스크립트 코드예요. 설치는 이벤트 관리자에서 시작합니다."}}
	checkCovered(t, mozilla, []coverCase{{"How many users does Thunderbird have?", false}})
	checkCovered(t, pixel, []coverCase{{"메타 픽셀은 설치 비용이 얼마예요?", false}})
	// A native count word inside another word ("인터넷", "리셋") states no number.
	web := []rag.Passage{{N: 1, Title: "메타 픽셀", Text: "메타 픽셀은 인터넷 사이트에 심는 코드예요. 코드를 리셋하면 처음부터 다시 설치합니다."}}
	checkCovered(t, web, []coverCase{{"메타 픽셀은 설치 비용이 얼마예요?", false}})
	days := []rag.Passage{{N: 1, Title: "메타 픽셀", Text: "메타 픽셀 설치는 보통 이틀이 걸려요. 설치 비용은 들지 않아요."}}
	checkCovered(t, days, []coverCase{{"메타 픽셀 설치는 며칠 걸려요? 몇 시간이면 되나요?", true}})
	counted := []rag.Passage{{N: 1, Title: "Thunderbird", Text: "Thunderbird is an e-mail client. It has about twenty million users worldwide."},
		{N: 2, Title: "픽셀 설치", Text: "픽셀 설치는 무료이며 설치 비용은 0원이에요. 설치 단계는 세 가지예요."}}
	checkCovered(t, counted, []coverCase{
		{"How many users does Thunderbird have?", true},
		{"픽셀 설치 비용은 얼마예요?", true},
		{"픽셀 설치 단계는 몇 가지예요?", true},
	})
	bid := []rag.Passage{{N: 1, Title: "메타 경매와 입찰 전략", Text: "메타 광고의 입찰가는 보통 목표 CPA 근처에서 시작합니다."}}
	checkCovered(t, bid, []coverCase{{"메타 광고 입찰가는 보통 얼마부터 시작하나요?", true}})
	// A date, or a year that opens a name, is no count of people; a count of them is.
	report := []rag.Passage{{N: 1, Title: "검토보고서", Text: "2023년 11월 9일 이수진 의원이 대표 발의한 일부개정법률안은 " +
		"2023년 11월 10일 우리 위원회에 회부되었음. 현행법은 2050 탄소중립녹색성장위원회를 두도록 하고 있음."}}
	checkCovered(t, report, []coverCase{{"탄소중립녹색성장위원회 위원은 몇 명인가요?", false}})
	members := []rag.Passage{{N: 1, Title: "검토보고서", Text: "2050 탄소중립녹색성장위원회의 위원은 위원장을 포함하여 79명이었음."}}
	checkCovered(t, members, []coverCase{{"탄소중립녹색성장위원회 위원은 몇 명인가요?", true}})
}

// TestGenerateValueInPassage: a when question whose best sentence (the minutes' title line, naming the
// committee and the meeting) gives no date is answered by the line of its passage that does ("일 시
// 2024년5월7일(화)"), not by the title lines.
func TestGenerateValueInPassage(t *testing.T) {
	t.Parallel()
	passages := []rag.Passage{{N: 1, Title: "assembly_minutes_21_414_1_env_labor", Text: "제414회국회\n\n(임시회)\n\n" +
		"환경노동위원회회의록 제 1 호\n\n국 회 사 무 처\n\n일 시 2024년5월7일(화)\n\n장 소 환경노동위원회회의실\n\n의사일정\n\n" +
		"1. 2023년도 국정감사 결과보고서 채택의 건\n\n2. 가축분뇨의 관리 및 이용에 관한 법률 일부개정법률안(송기헌 의원 대표발의)"}}
	q := "환경노동위원회 회의는 언제 열렸나요?"
	text := generateStreamed(t, New(Options{}), rag.GenerateRequest{Question: q, Passages: passages})
	if !strings.HasPrefix(text, "일 시 2024년5월7일(화)") {
		t.Errorf("%q: answer %q does not open with the meeting's date", q, text)
	}
	checkGrounded(t, text, passages)
}

// TestAsksPrice: a how-much question about a noun of money asks for a sum; one about a count, a length of
// time or a noun that only ends like one of money does not.
func TestAsksPrice(t *testing.T) {
	t.Parallel()
	for q, want := range map[string]bool{
		"신림 도담마을의 월세는 얼마인가요?":         true,
		"보증금이 얼마예요?":                  true,
		"입장료는 얼마죠?":                   true,
		"관리비는 얼마나 나오나요?":              true,
		"이 강의 수강료가 몇 원인가요?":           true,
		"How much is the rent?":       true,
		"총 몇 세대를 공급하나요?":              false,
		"준비는 얼마나 걸리나요?":               false,
		"인구는 얼마인가요?":                  false,
		"How much time does it take?": false,
	} {
		if got := answerType(q) == typeNumber && asksPrice(q); got != want {
			t.Errorf("asksPrice(%q) = %v, want %v", q, got, want)
		}
	}
}

// TestGeneratePriceNearby: asked the rent of an estate, the answer is the sentence naming the estate with
// the line of its section that states the sums, though that line says "월 임대료" for the question's "월세";
// a count ("총 96세대") is no price.
func TestGeneratePriceNearby(t *testing.T) {
	t.Parallel()
	passages := []rag.Passage{{N: 1, Title: "관악구 신림동 통합공공임대주택 입주자 모집공고", Text: "1. 공급 개요\n\n" +
		"신림 도담마을은 서울특별시 관악구 신림동 관악가상로 55에 자리한 통합공공임대 단지이며, 이번 공고로 총 96세대를 공급합니다. " +
		"주택형별 공급 물량은 전용 26m2 40세대, 전용 36m2 36세대, 전용 46m2 20세대입니다.\n\n" +
		"- 임대조건: 임대보증금 950만원(9,500,000원), 월 임대료 15만원(150,000원), 전용 26m2 기준\n\n" +
		"- 신청 기간: 2027-01-11 ~ 2027-01-20\n\n2. 신청 자격\n\n무주택세대구성원이어야 하며 월세 지원을 받는 분은 제외됩니다."}}
	q := "신림 도담마을의 월세는 얼마인가요?"
	text := generateStreamed(t, New(Options{}), rag.GenerateRequest{Question: q, Passages: passages})
	if !strings.Contains(text, "월 임대료 15만원(150,000원)") {
		t.Errorf("%q: answer %q lacks the line stating the rent", q, text)
	}
	checkGrounded(t, text, passages)
}

// TestTimeValues: a length of time answers when as a date does ("45 days after the end of the fiscal year",
// "30일 이내"); a bare count does not ("45 trustees"), nor a year-like number naming a thing.
func TestTimeValues(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]bool{
		"The report is due 45 days after the end of the fiscal year.": true,
		"Comments must be received within 2 weeks.":                   true,
		"신청일로부터 30일 이내에 내야 합니다.":                                      true,
		"no later than June 1 of every year":                          true,
		"There are 45 trustees in the region.":                        false,
		"2050 탄소중립위원회를 둔다.":                                           false,
	} {
		if got := hasNewType(text, typeTime, nil); got != want {
			t.Errorf("hasNewType(%q, typeTime) = %v, want %v", text, got, want)
		}
	}
}

// TestThingCounter: a count of people or things is never a date's; a count of months, of days or of states
// may be written with one.
func TestThingCounter(t *testing.T) {
	t.Parallel()
	for q, want := range map[string]bool{
		"위원은 몇 명인가요?":          true,
		"법률안은 몇 건인가요?":         true,
		"몇 개월 동안 수입을 금지하였는가?":  false,
		"미국의 몇개주에서 판매를 금지하나요?": false,
		"몇 달 만에 이루어졌나?":        false,
	} {
		if got := slices.ContainsFunc(askedUnits(q), thingCounter); got != want {
			t.Errorf("%q: units %v count things = %v, want %v", q, askedUnits(q), got, want)
		}
	}
}
