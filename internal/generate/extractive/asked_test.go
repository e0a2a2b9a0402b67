package extractive

import (
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

// TestGenerateMissingUnit: a Korean question counting in a unit ("찬성 몇 표") or asking for a rate of
// something ("인상률") is not covered when the passages the answer quotes state no number in that unit and
// its sentences do not name what is counted; a passage stating it, or an answer naming what is counted, is
// answered. A general counter ("몇 개") and a bare ratio ("비율") are left to the other rules: documents
// count in their own words.
func TestGenerateMissingUnit(t *testing.T) {
	t.Parallel()
	minutes := []rag.Passage{{N: 1, Title: "위원회 회의록", Text: "의사일정 제2항부터 제9항까지 이상 8건의 법률안을 " +
		"일괄하여 상정합니다. 이 법률안들은 최저임금 결정 기준에 관한 것입니다. 이의 없으십니까? 가결되었음을 선포합니다. " +
		"본회의 표결 결과 보고는 다음 환경노동위원회 회의에서 합니다.\n\n" +
		"제2기 위원회의 여성 위원은 7명입니다. 최적화 이벤트를 50회 얻으면 학습 단계를 벗어납니다."}}
	checkCovered(t, minutes, []coverCase{
		{"이 법률안의 본회의 표결 결과는 찬성 몇 표였나요?", false},
		{"환경노동위원회 회의에서 최저임금 인상률은 얼마로 결정되었나요?", false},
		{"회의에서 상정된 법률안은 몇 건인가요?", true},
		{"제2기 위원회 여성 위원의 비율은 얼마인가요?", true},
		{"학습 단계를 벗어나려면 최적화 이벤트가 몇 개 필요해요?", true},
	})
	vote := []rag.Passage{{N: 1, Title: "본회의 회의록", Text: "이 법률안은 본회의 표결 결과 재석 250명 중 찬성 230표로 " +
		"가결되었다. 최저임금 인상률은 5.0%로 결정되었다."}}
	checkCovered(t, vote, []coverCase{
		{"이 법률안의 본회의 표결 결과는 찬성 몇 표였나요?", true},
		{"최저임금 인상률은 얼마로 결정되었나요?", true},
	})
	if statesUnit("2024. 5. 7 표결", []string{"표"}) || !statesUnit("찬성 230표로", []string{"표"}) ||
		!statesUnit("0점부터 10점까지", []string{"점"}) || !statesUnit("약 2.33m를 넘었다", []string{"미터", "m"}) {
		t.Error("statesUnit reads a number's unit wrongly")
	}
}

// TestGenerateMissingAttribute: an English question about a named thing asks for an attribute ("net
// revenue", "penalty", "office budget") that one of the answer's sentences must name whole; sentences
// naming the thing and others naming part of the attribute elsewhere are about something else. Stated, it
// is answered; a question without a name is not read so; a light head ("deadline", "date") need not be named.
func TestGenerateMissingAttribute(t *testing.T) {
	t.Parallel()
	reports := []rag.Passage{
		{N: 1, Title: "Acme Corp annual report", Text: "ACME CORP. ANNUAL REPORT FOR THE YEAR ENDED DECEMBER 31, 2021."},
		{N: 2, Title: "Payroll handbook", Text: "Compensation must be paid with current year revenues."},
		{N: 3, Title: "WARN report", Text: "| Notice Date | Company | City |\n| --- | --- | --- |\n| 07/08/2015 | Ohio Edison | Akron |\n| 03/01/2016 | NetFlow Inc. | Sunnyvale |"},
		{N: 4, Title: "Senate expenditures", Text: "Senator Hawley's office spent 70.00 dollars on airfare in 2019."},
	}
	checkCovered(t, reports, []coverCase{
		{"What was Acme Corp's net revenue for fiscal year 2021?", false},
		{"What is the penalty for late WARN notices in Ohio?", false},
		{"Which senator had the largest office budget in 2019?", false},
		{"What was the airfare of Senator Hawley's office in 2019?", true},
	})
	stated := []rag.Passage{{N: 1, Title: "Acme Corp annual report", Text: "Acme Corp's net revenue for fiscal year 2021 " +
		"was 12 million dollars. The penalty for late WARN notices is 500 dollars a day in Ohio."}}
	checkCovered(t, stated, []coverCase{
		{"What was Acme Corp's net revenue for fiscal year 2021?", true},
		{"What is the penalty for late WARN notices in Ohio?", true},
	})
	// A deadline or date names the kind of answer, which the text gives as "by September 21, 2020"; what it
	// is of ("comment", "effective") must still be named.
	dates := []rag.Passage{{N: 1, Title: "Airworthiness Directives; The Boeing Company Airplanes",
		Text: "DATES: The FAA must receive comments on this proposed AD by September 21, 2020."}}
	checkCovered(t, dates, []coverCase{
		{"What is the comment deadline for the proposed AD?", true},
		{"What is the effective date of the proposed AD?", false},
	})
	cone := []rag.Passage{{N: 1, Text: "The heat flux to a slender cone at high speed was measured in a wind tunnel."}}
	checkCovered(t, cone, []coverCase{{"what is the heat transfer to a slender cone at high speed?", true}})
}

// TestGenerateAbsentThing: a Korean question asking to be told of a thing ("주차장 정보 있어?") that no
// passage names in any form is not covered, though the passages are about what it asks it of (the notice);
// a thing they do name is answered, and "수 있다" asks what may be, not whether the documents say it.
func TestGenerateAbsentThing(t *testing.T) {
	t.Parallel()
	notice := []rag.Passage{{N: 1, Title: "춘의동 영구임대주택 공고", Text: "춘의동 영구임대주택은 지하철 7호선 춘의역까지 " +
		"도보 약 5분이 걸립니다. 단지 주변에는 초등학교와 공공도서관이 있습니다. 살아있는 먹이는 성장에 도움이 되지만 기생충이 " +
		"생길 수도 있습니다."}}
	checkCovered(t, notice, []coverCase{
		{"춘의동 영구임대주택 주차장 정보 있어?", false},
		{"춘의동 영구임대주택 주변 초등학교 정보 있어?", true},
		{"살아있는 먹이를 주면 성장에 좋지만 어떤 문제가 생길 수 있나?", true},
	})
}
