package textproc

import (
	"slices"
	"testing"
)

// TestCountTerms: a count written in digits ("2배로") and with a native numeral ("두 배로") gives one term,
// the number and its counter; a number before a unit that native numerals do not take ("2만 원", "3년"),
// a numeral word before a word that is no counter ("한 사람의 대표" counts, "세 대표" does not) and a
// counter word too long to be a counter with a particle give none.
func TestCountTerms(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"구매가 두 배로 잡힙니다", []string{"2배"}},
		{"구매수가 딱 2배로 뻥튀기 됐어요", []string{"2배"}},
		{"세 가지를 확인해 보세요", []string{"3가지"}},
		{"3가지를 확인해 보세요", []string{"3가지"}},
		{"네 번째 인자에", []string{"4번"}},
		{"열두 명이 왔다", []string{"12명"}},
		{"스무 살 때", []string{"20살"}},
		{"24시간 안에", []string{"24시간"}},
		{"한 주에 한 번", []string{"1주", "1번"}},
		{"2만 원으로 3년 동안", nil},
		{"세 대표가", nil},
		{"07개", nil},
	} {
		if got := CountTerms(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("CountTerms(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
	if NativeNumeral("열") != 10 || NativeNumeral("열아홉") != 19 || NativeNumeral("열열") != 0 || NativeNumeral("배") != 0 {
		t.Errorf("NativeNumeral: 열 %d, 열아홉 %d, 열열 %d, 배 %d", NativeNumeral("열"), NativeNumeral("열아홉"), NativeNumeral("열열"), NativeNumeral("배"))
	}
}
