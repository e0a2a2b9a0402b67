package retrieve_test

import (
	"context"
	"testing"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/retrieve"
)

// A code block or a table inherits its section heading in the keyword index; being short, it scored
// highest for the heading's words and came before the prose of its section that answers the question.
func TestCodeFoundByHeading(t *testing.T) {
	b := setup(t)
	b.add(t, "docs", "queue.md", `# state 업데이트 큐

## state를 교체한 후 업데이트하면 어떻게 되나요?

이 이벤트 핸들러는 먼저 값을 5로 바꾸고 그다음 업데이터 함수를 큐에 추가합니다. React는 다음 렌더링 동안 큐에 쌓인 작업을 차례로 처리하므로, 값을 교체한 뒤 업데이터 함수를 전달하면 교체된 값에 1을 더한 6이 최종 결과가 됩니다. 업데이터 함수는 대기 중인 state를 받아 다음 state를 계산합니다.

`+"```"+`js
<button onClick={() => {
  setNumber(number + 5);
  setNumber(n => n + 1);
}}>
`+"```"+`

| queued update | n | returns |
| --- | --- | --- |
| "replace with 5" | 0 (unused) | 5 |
| n => n + 1 | 5 | 6 |

## 명명 규칙

업데이터 함수의 인수 이름은 해당 state 변수의 첫 글자로 짓는 것이 일반적입니다. 더 긴 이름을 선호한다면 전체 변수 이름을 반복해도 됩니다.
`, nil)
	b.add(t, "docs", "other.md", `# 렌더링

렌더링은 React가 컴포넌트를 호출하는 것입니다. 초기 렌더링에서는 루트 컴포넌트를 호출합니다.
`, nil)
	ctx := context.Background()
	r := b.retriever(t, retrieve.Options{})
	search := func(t *testing.T, q string) []rag.Hit {
		t.Helper()
		res, err := r.Search(ctx, rag.LocalPrincipal, rag.SearchRequest{Query: q, K: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) == 0 {
			t.Fatalf("no hits for %q", q)
		}
		return res.Hits
	}
	t.Run("ProseBeforeItsCode", func(t *testing.T) {
		hits := search(t, "state를 교체한 후 업데이트하면 어떻게 되나요?")
		kinds := make([]rag.ChunkKind, len(hits))
		for i, h := range hits {
			kinds[i] = h.Kind
		}
		if hits[0].Kind != rag.KindText {
			t.Fatalf("first hit is a %s chunk (%q), want the section's prose; kinds %v", hits[0].Kind, hits[0].Text, kinds)
		}
		for _, h := range hits {
			if h.Kind != rag.KindText {
				return // the code and the table are still found, after the prose
			}
		}
		t.Errorf("kinds %v: the section's code block and table are no longer found", kinds)
	})
	t.Run("CodeThatHoldsTheQuery", func(t *testing.T) {
		hits := search(t, "setNumber(n => n + 1) 업데이터")
		if hits[0].Kind != rag.KindCode {
			t.Errorf("first hit is a %s chunk (%q), want the code block that holds setNumber", hits[0].Kind, hits[0].Text)
		}
	})
}
