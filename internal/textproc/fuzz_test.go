package textproc

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/fuzzbudget"
)

// FuzzAnalyze feeds the analyzer, the normaliser and the language detector arbitrary text: no panic,
// valid UTF-8 terms, and (under -fuzz) each input within fuzzbudget.PerInput.
func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{"한국어 문서의 검색", "The quick brown fox", "ＡＢＣ①②", strings.Repeat("가나", 500), "a\u0301\u0301\u0301"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzbudget.Time(t, []byte(s), func() {
			for _, term := range IndexTerms(s) {
				if !utf8.ValidString(term) || term == "" {
					t.Fatalf("term %q from %q", term, s)
				}
			}
			QueryTerms(s)
			DetectLanguage(s)
			ContextText("title", "section", s)
		})
	})
}
