package extractive

import (
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

// reviewPassages are a review report's pages as PDF extraction gives them: a section heading with a
// numbered sub-heading, the section's opening sentence, the lines of a comparison table, and the contact
// page.
var reviewPassages = []rag.Passage{
	{N: 1, Title: "검토보고서", Section: "III. 검토의견", Text: "문 의 처\n\n02)6788-5533"},
	{N: 2, Title: "검토보고서", Section: "III. 검토의견", Text: "III. 검토의견\n\n1. 위원 후보 추천 단체 명시\n\n" +
		"개정안은 위원 위촉 시 다양한 사회계층의 대표성이 반영될 수 있도록 후보 추천 단체를 법률에서 명시적으로 규정하려는 것임.\n\n" +
		"[ 개정안 조문대비표 ]\n\n현 행 개 정 안\n\n제15조(위원회의 설치) 제15조(위원회의\n\n위원회의 설치) 1 ∼ 4 (생 략)\n\n" +
		"성, 노동자, 농어민 등 다양한 사회계층으로부터 후보를 추천받아야 한다."},
}

// TestGenerateHeadingOpensSection: a heading that holds the question's words is answered by the first
// sentence of its section, sub-headings skipped; the heading itself, a contact line and table debris that
// score by the section's title are not quoted.
func TestGenerateHeadingOpensSection(t *testing.T) {
	t.Parallel()
	text := answerHolds(t, reviewPassages, "검토보고서의 검토의견은 무엇인가요?", "개정안은 위원 위촉 시")
	for _, no := range []string{"III. 검토의견", "02)6788-5533", "(생 략)", "성, 노동자", "1. 위원 후보"} {
		if strings.Contains(text, no) {
			t.Errorf("answer %q holds %q", text, no)
		}
	}
}

// TestAnswerable: a line without words is quoted only for a question asking for a value (a phone number);
// a line closing a bracket it never opened, or a single word cut from its sentence, never is.
func TestAnswerable(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		text string
		want ansType
		ok   bool
	}{
		{"02)6788-5533", typeNone, false},
		{"02)6788-5533", typeNumber, true},
		{"- 3 -", typeNone, false},
		{"위원회의 설치) 1 ∼ 4 (생 략)", typeNone, false},
		{"The", typeNone, false},
		{"제1조(시행일) 이 법은 공포 후 6개월이 경과한 날부터 시행한다.", typeTime, true},
		{"1) 주민등록표등본을 냅니다.", typeNone, true},
		{"예산은 충분합니다.", typeNone, true},
	} {
		if got := answerable(sentence{text: c.text, whole: true}, c.want); got != c.ok {
			t.Errorf("answerable(%q, %v) = %v, want %v", c.text, c.want, got, c.ok)
		}
	}
	// A sentence the splitter cut inside brackets, in a longer line, is prose.
	for _, u := range units("그는 입대하였다.(당시 그는 2년 뒤 전역을 약속받았다. 이는 특례였다) 그 뒤 이적하였다.") {
		if !answerable(u, typeNone) {
			t.Errorf("answerable(%q) = false inside a line of prose", u.text)
		}
	}
}

// TestGenerateValueOneSentence: a when/how-many question whose best sentence gives a value (a date, a
// duration) is answered by that sentence alone: the next article and another document's dated sentence
// that share its words do not follow.
func TestGenerateValueOneSentence(t *testing.T) {
	t.Parallel()
	passages := []rag.Passage{
		{N: 1, Title: "일부개정법률안", Text: "부 칙\n\n제1조(시행일) 이 법은 공포 후 6개월이 경과한 날부터 시행한다.\n\n" +
			"제2조(2050 위원회에 관한 적용례) 개정규정은 이 법 시행 이후 위원회를 구성할 때부터 적용한다."},
		{N: 2, Title: "검토보고서", Text: "2023년 11월 9일 의원이 대표 발의한 일부개정법률안은 2023년 11월 10일 위원회에 회부되었음."},
	}
	text := answerHolds(t, passages, "개정법률은 언제부터 시행되나요?", "공포 후 6개월이 경과한 날부터 시행한다")
	if strings.Contains(text, "제2조") || strings.Contains(text, "회부") {
		t.Errorf("answer %q: want the one sentence giving the date", text)
	}
	// A duration and a date with a multiplier are values; a bare year before a Korean noun is a name.
	for text, want := range map[string]bool{"공포 후 6개월이 경과한 날": true, "약 5500만 년 전": true, "in 2014": true,
		"2050 탄소중립위원회": false, "제15조제5항": false} {
		if got := hasNewType(text, typeTime, nil); got != want {
			t.Errorf("hasNewType(%q, time) = %v, want %v", text, got, want)
		}
	}
	if answerType("청약 접수 기간은?") != typeTime || answerType("What period does the report cover?") != typeTime {
		t.Error("a period is asked as a time")
	}
}

// TestGenerateListCoversQuestion: a when question answered by a list item (the steps of what happens) is
// answered with the item's lead-in and list, and a sentence of another page that adds no focus word to
// chosen sentences holding all of them does not follow.
func TestGenerateListCoversQuestion(t *testing.T) {
	t.Parallel()
	passages := []rag.Passage{
		{N: 1, Title: "state 업데이트 큐", Text: "이를 state 설정자 함수에 전달 할 때,\n\n" +
			"1. React는 이벤트 핸들러의 다른 코드가 모두 실행된 후에 이 함수가 처리되도록 큐에 넣습니다.\n" +
			"2. 다음 렌더링 중에 React는 큐를 순회하여 최종 업데이트된 state를 제공합니다."},
		{N: 2, Title: "렌더링 그리고 커밋", Text: "root.render() 호출을 주석 처리하고 컴포넌트가 사라지는 것을 확인하세요!\n\n" +
			"State 업데이트 시 리렌더링\n\n컴포넌트가 처음으로 렌더링 된 후에는 상태를 업데이트하여 렌더링을 트리거할 수 있습니다."},
	}
	text := answerHolds(t, passages, "state 업데이트는 언제 처리되나요?", "이를 state 설정자 함수에 전달 할 때,",
		"1. React는 이벤트 핸들러의", "2. 다음 렌더링 중에")
	if strings.Contains(text, "root.render()") {
		t.Errorf("answer %q: another page's sentence follows the list that answers", text)
	}
}

// TestGenerateFurtherHoldsFocus: a further sentence that matches the question only through its passage's
// title or section is not quoted unless it stands beside a chosen one that holds a focus word (which it may
// go on from without naming its subject).
func TestGenerateFurtherHoldsFocus(t *testing.T) {
	t.Parallel()
	passages := []rag.Passage{{N: 1, Title: "검토보고서", Section: "검토의견", Text: "검토의견은 다음과 같음.\n\n" +
		"개정안은 위원 구성을 법률에 명시하려는 것으로 타당함.\n\n부칙은 공포 후 6개월이 경과한 날부터 시행하도록 함.\n\n" +
		"한편 위원 수는 현행과 같음."}}
	text := answerHolds(t, passages, "검토보고서의 검토의견은?", "검토의견은 다음과 같음.", "개정안은 위원 구성을")
	if strings.Contains(text, "부칙은") || strings.Contains(text, "한편 위원 수") {
		t.Errorf("answer %q: sentences matched by the section's title alone follow", text)
	}
}

// TestGenerateJoinedWords: two Latin words of the question written as one in the text ("code name",
// "codenamed") are both held by the sentence that writes them so.
func TestGenerateJoinedWords(t *testing.T) {
	t.Parallel()
	passages := onePassage("Mozilla", "Firefox Mobile",
		"For example, version 1.0 used the same engine as Firefox 3.6, and the next release shared core code with Firefox 4.0.",
		"Firefox Mobile (codenamed Fennec) is the build of the Firefox web browser for smartphones.")
	q := "What is the code name of Firefox Mobile?"
	answerHolds(t, passages, q, "codenamed Fennec")
	if picked := New(Options{}).pick(q, "", passages, nil); len(picked) == 0 || !strings.Contains(picked[0].text, "codenamed") {
		t.Errorf("picked %+v: want the code name's sentence best", picked)
	}
}
