package retrieve

import "testing"

func TestNamesSymbol(t *testing.T) {
	ids := queryIdentifiers("What does LimitListener do? How does byteBudget.reserve decide, and parse_query?")
	for sym, want := range map[string]bool{
		"server.LimitListener":      true,
		"server.limitListener":      false, // another symbol: case counts
		"server.byteBudget.reserve": true,
		"server.byteBudget":         false,
		"other.reserve":             false, // reserve alone is not a word of the query
		"q.parse_query":             true,
		"does":                      false, // a symbol path has a package or class
	} {
		if got := namesSymbol(ids, sym); got != want {
			t.Errorf("namesSymbol(%q) = %v, want %v", sym, got, want)
		}
	}
}

// A question with no ASCII word names no symbol, so symbolsFirst loads nothing for it; ASCII names
// inside a Korean question still count.
func TestQueryIdentifiersASCII(t *testing.T) {
	if ids := queryIdentifiers("개정법률은 언제부터 시행되나요?"); len(ids) != 0 {
		t.Errorf("Korean question: identifiers %v, want none", ids)
	}
	ids := queryIdentifiers("LimitListener는 무엇을 하나요? byteBudget.reserve의 규칙은?")
	if !ids["LimitListener"] || !ids["byteBudget.reserve"] || len(ids) != 2 {
		t.Errorf("mixed question: identifiers %v, want LimitListener and byteBudget.reserve", ids)
	}
}
