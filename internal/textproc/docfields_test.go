package textproc

import (
	"slices"
	"strings"
	"testing"
)

func TestDocumentText(t *testing.T) {
	lead := "제414 국회(임시회)\n\n일부개정법률안검 토 보 고\n" +
		"이 개정안은 위원회의 구성에 관한 사항을 정하려는 것으로, 현행법의 운영상 나타난 미비점을 개선하고 보완하려는 것으로서 그 내용을 자세히 살펴보면 다음과 같습니다.\n" +
		"짧은 줄이지만 본문 뒤"
	got := DocumentText("Review", `C:\docs\bill_2125318_review-report.pdf`,
		map[string]any{"number": 2125318.0, "kind": "검토보고서", "tags": []any{"a", 1.0}, "long": strings.Repeat("x", 201)}, lead)
	for _, want := range []string{"Review\n", "bill 2125318 review report\n", "2125318\n", "검토보고서\n", "a\n",
		"제414 국회(임시회)\n", "일부개정법률안검 토 보 고\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("DocumentText lacks %q:\n%s", want, got)
		}
	}
	if terms := IndexTerms(got); !slices.Contains(terms, "검토보고") {
		t.Errorf("the document terms lack the letter-spaced title 검토보고: %q", terms)
	}
	for _, not := range []string{"pdf", "xxx", "미비점", "본문 뒤", "e+06"} {
		if strings.Contains(got, not) {
			t.Errorf("DocumentText holds %q:\n%s", not, got)
		}
	}
}
