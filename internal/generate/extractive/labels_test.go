package extractive

import (
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

// TestLabelOf: a line opens with a label when one-syllable Korean words spell it or a colon ends it.
func TestLabelOf(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]string{
		"장 소 환경노동위원회회의실":                       "장소",
		"일 시 2024년5월7일(화)":                     "일시",
		"접수 기간 : 2024. 3. 4. ~ 3. 8.":          "접수기간",
		"DATES: The FAA must receive comments": "dates",
		"FOR FURTHER INFORMATION CONTACT: Ian": "contact",
		"국 회 사 무 처":                            "",    // a label alone, nothing after it
		"그 중 몇 개의 안건이 상정되었다":                   "그중몇", // prose of one-syllable words reads as a label that names no kind of fact
		"The meeting was held in Seoul.":       "",
	} {
		if got, _ := labelOf(text); got != want {
			t.Errorf("labelOf(%q) = %q, want %q", text, got, want)
		}
	}
}

// TestGenerateLabelledValue: a question asking where or when a meeting was held is answered by the record's
// cover, whose labelled values ("일 시 …", "장 소 …") share no other word with the question, rather than by
// the speeches that repeat the word "회의".
func TestGenerateLabelledValue(t *testing.T) {
	t.Parallel()
	cover := "제414회국회\n\n환경노동위원회회의록 제 1 호\n\n일 시 2024년5월7일(화)\n\n장 소 환경노동위원회회의실\n\n의사일정"
	speech := "4월 총선 이후 첫 회의입니다. 오늘 회의는 엄청난 일을 하겠다고 개최된 회의가 아닙니다. 회의 진행에 앞서 한 말씀 드리겠습니다."
	passages := []rag.Passage{{N: 1, Title: "minutes", Text: cover}, {N: 2, Title: "minutes", Text: speech}}
	for question, want := range map[string]string{
		"이 회의는 어디에서 열렸나요?": "환경노동위원회회의실",
		"이 회의는 언제 열렸나요?":   "2024년5월7일(화)",
	} {
		text := answerHolds(t, passages, question, want)
		if strings.Contains(text, "첫 회의입니다") && strings.Index(text, "첫 회의입니다") < strings.Index(text, want) {
			t.Errorf("%q: answer %q opens with a speech, not the labelled value", question, text)
		}
	}
}

// TestGenerateWherePlace: "Where did … take off from?" is answered by the sentence naming a place the
// question does not ("from Soekarno-Hatta International Airport"), not by a better-ranked one sharing as
// many of its words.
func TestGenerateWherePlace(t *testing.T) {
	t.Parallel()
	answerOpens(t, "Where did the Lion Air airplane take off from?", "On October 29",
		"Flight data from the Lion Air Flight 610 airplane indicated that the airplane experienced the same failure upon takeoff that the Lion Air crew encountered.",
		"On October 29, 2018, a Boeing 737 airplane operated by Lion Air was involved in an accident after takeoff from Soekarno-Hatta International Airport.")
	if asksForm("When did the Lion Air airplane take off?") != nil {
		t.Error("a when question asks for a place")
	}
}

// answerOpens asks question over one passage per text, ranked in that order, and checks that the answer
// opens with opening: the rule under test lifts a sentence of a later passage above the first one's.
func answerOpens(t *testing.T, question, opening string, texts ...string) {
	t.Helper()
	passages := make([]rag.Passage, len(texts))
	for i, x := range texts {
		passages[i] = rag.Passage{N: i + 1, Title: "doc", Text: x}
	}
	if text := answerHolds(t, passages, question, opening); !strings.HasPrefix(text, opening) {
		t.Errorf("%q: answer %q does not open with %q", question, text, opening)
	}
}

// TestGenerateNamingQuestion: a question for what a thing is called is answered first by the sentence that
// gives it its name ("…라고 부릅니다"), not by the first one that mentions the name.
func TestGenerateNamingQuestion(t *testing.T) {
	t.Parallel()
	passages := []rag.Passage{
		{N: 1, Title: "state 업데이트 큐", Text: "React는 큐에 \"5로 바꾸기\"를 추가합니다. setNumber(n => n + 1) : n => n + 1는 업데이터 함수입니다. React는 해당 함수를 큐에 추가합니다."},
		{N: 2, Title: "state 업데이트 큐", Text: "여기서 n => n + 1 은 업데이터 함수(updater function)라고 부릅니다. 이를 state 설정자 함수에 전달할 때 React는 큐에 넣습니다."},
	}
	q := "n => n + 1 같은 함수를 무엇이라고 부르나요?"
	if got := generateStreamed(t, New(Options{}), rag.GenerateRequest{Question: q, Passages: passages}); !strings.HasPrefix(got, "여기서 n => n + 1 은 업데이터 함수(updater function)라고 부릅니다.") {
		t.Errorf("%q: answer %q, want it to open with the sentence that names the function", q, got)
	}
	for q, want := range map[string]bool{"n => n + 1 같은 함수를 무엇이라고 부르나요?": true, "이걸 뭐라고 하나요?": true,
		"What is this function called?": true, "Who called the meeting?": false, "무엇을 기다리나요?": false} {
		if got := asksName.MatchString(q); got != want {
			t.Errorf("asksName(%q) = %v, want %v", q, got, want)
		}
	}
	for text, want := range map[string]bool{"이를 업데이터 함수라고 부릅니다.": true, "이를 batching 이라고 합니다.": true,
		"Such a function is called a closure.": true, "React는 해당 함수를 큐에 추가합니다.": false} {
		if got := namesThing.MatchString(text); got != want {
			t.Errorf("namesThing(%q) = %v, want %v", text, got, want)
		}
	}
}
