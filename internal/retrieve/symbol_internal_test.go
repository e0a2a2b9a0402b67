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
