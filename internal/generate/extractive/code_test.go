package extractive

import (
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/generate"
	"github.com/ragd/ragd/internal/rag"
)

// TestCodeLine: lines of code, and no sentence of prose that mentions code.
func TestCodeLine(t *testing.T) {
	checkBool(t, "codeLine", codeLine, map[string]bool{
		"import { useState } from 'react';":                    true,
		"const [number, setNumber] = useState(0);":             true,
		"<button onClick={() => {":                             true,
		"}}>Increase the number</button>":                      true,
		"export default function Counter() {":                  true,
		"setNumber(n => n + 1)를 세 번 호출합니다.":                    false, // Korean prose about code
		"The FAA estimates that this AD affects 73 airplanes.": false,
		"GALAXY GAMING, INC.":                                  false,
	})
	checkBool(t, "proseKorean", proseKorean, map[string]bool{
		"React에서 state를 여러 번 업데이트하면 어떻게 처리되나요?": true,
		"setNumber(number + 1)을 세 번 호출하면?":      false,
		"How do I import useState?":             false,
	})
}

// TestGenerateNoCodeOrQuestionLine: a Korean question in prose is answered by the page's sentence, not by a
// line of its code that holds the question's words, nor by a heading that is itself a question; a lead-in
// naming its count of steps brings the steps; a name the question is asked in ("React에서") need not be in
// the answer's passage.
func TestGenerateNoCodeOrQuestionLine(t *testing.T) {
	t.Parallel()
	passages := []rag.Passage{
		{N: 1, Title: "state 업데이트 큐", Text: "state를 여러 번 업데이트하면 어떻게 되나요?\n\n" +
			"import { useState } from 'react';\n\nconst [number, setNumber] = useState(0);"},
		{N: 2, Title: "state 업데이트 큐", Text: "React는 이벤트 핸들러가 실행을 마친 후 state 업데이트를 처리합니다. 이를 batching이라고 합니다."},
	}
	text := generateStreamed(t, New(Options{}), rag.GenerateRequest{Question: "state를 여러 번 업데이트하면 React는 어떻게 처리하나요?", Passages: passages})
	if !strings.Contains(text, "batching") || strings.Contains(text, "useState") || strings.Contains(text, "되나요?") {
		t.Errorf("answer %q, want the sentence on batching alone", text)
	}

	steps := []rag.Passage{
		{N: 1, Title: "Mozilla", Text: "React is a library."},
		{N: 2, Title: "컴포넌트 import 및 export 하기", Text: "컴포넌트를 다른 파일로 옮기면 재사용하기 좋습니다. 컴포넌트를 다른 파일로 이동하려면 세 가지 단계가 있습니다.\n\n" +
			"1. 컴포넌트를 추가할 JS 파일을 생성합니다.\n2. 새로 만든 파일에서 함수 컴포넌트를 export 합니다.\n3. 컴포넌트를 사용할 파일에서 import 합니다."},
	}
	text = generateStreamed(t, New(Options{}), rag.GenerateRequest{Question: "React에서 컴포넌트를 다른 파일로 옮기려면 어떻게 하나요?", Passages: steps})
	if text == generate.NotFound("ko") || !strings.Contains(text, "3. 컴포넌트를 사용할 파일에서 import 합니다.") {
		t.Errorf("answer %q, want the three steps", text)
	}
}

// TestScopeName: a Latin name with a scope particle is the scope of the question.
func TestScopeName(t *testing.T) {
	checkBool(t, "scopeName", func(w string) bool { return scopeName(qword{terms: []string{w}}) }, map[string]bool{"react에서": true, "react에서는": true, "react는": false, "메타에서": false})
}

// TestAnnouncesList: sentences announcing the list after them.
func TestAnnouncesList(t *testing.T) {
	checkBool(t, "announcesList", announcesList, map[string]bool{
		"컴포넌트를 다른 파일로 이동하려면 세 가지 단계가 있습니다.": true,
		"작동하는 방식은 다음과 같습니다.":                true,
		"The steps are as follows.":         true,
		"컴포넌트를 다른 파일로 옮기면 재사용하기 좋습니다.":      false,
	})
}

// TestAnswerableTOCItem: a numbered line of a table of contents is no answer, though it is a list item.
func TestAnswerableTOCItem(t *testing.T) {
	toc := sentence{text: "1. 2050 탄소중립위원회 민간위촉위원 구성현황 ··································· 9", item: true, whole: true}
	if answerable(toc, typeNumber) {
		t.Errorf("%q is answerable", toc.text)
	}
	if item := (sentence{text: "1. 위원은 50명 이상 100명 이내로 구성한다.", item: true, whole: true}); !answerable(item, typeNumber) {
		t.Errorf("%q is not answerable", item.text)
	}
}
