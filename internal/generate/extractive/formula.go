package extractive

import (
	"slices"
	"strings"
)

// formulaHolds is 1 when w is the word of a question asking how something is calculated (formulaCues:
// "계산", "공식", "calculate") and text is a formula ("CPM, 1,000회 노출당 비용 = 지출 금액 ÷ 노출 수 × 1,000"):
// the formula is the calculation the question names, in other words than its own; 0 otherwise. It counts
// in deciding whether the answer covers the question, not in ranking (every formula of a page would hold it).
func formulaHolds(w qword, text string) float64 {
	if !strings.ContainsAny(text, "=÷×") || !slices.ContainsFunc(formulaCues, func(c string) bool { return strings.HasPrefix(w.terms[0], c) }) {
		return 0
	}
	return 1
}
