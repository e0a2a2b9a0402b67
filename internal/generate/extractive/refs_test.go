package extractive

import (
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

// TestCitation: the lines of a reference list, and no line of prose that quotes or dates something.
func TestCitation(t *testing.T) {
	checkBool(t, "citation", citation, map[string]bool{
		`Baker, Mitchell (3 April 2014). "Brendan Eich Steps Down as Mozilla CEO". mozilla blog.`:                       true,
		`"FAQ on CEO Resignation". The Mozilla Blog. Retrieved 2015-04-20.`:                                             true,
		`BetaBeat. BetaBeat. Retrieved 2014-04-28.`:                                                                     true,
		`"Screenshot of OkCupid's statement towards Firefox users". huffingtonpost.com.`:                                true,
		`Zawinski, Jamie (1996). "nscp dorm". Retrieved 2007-10-12.`:                                                    true,
		`"Mozilla.org WHOIS, DNS, & Domain Info".`:                                                                      true, // a title alone on its line
		`The site "Mozilla.org WHOIS" lists it, said the report.`:                                                       false,
		`On March 24, 2014, Mozilla promoted Brendan Eich to the role of CEO.`:                                          false,
		`He called the plan "a step back". The board (2014) disagreed.`:                                                 false,
		`Due to the controversy, Eich voluntarily stepped down on April 3, 2014 and Mitchell Baker posted a statement.`: false,
		`기록에 따르면 (1200). 페르시아에서는 비숍이 "fil" 또는 "alfil", 이라고 불렸다.`:                                                        false, // prose quoting names
		`The report was retrieved from the archive in 2015.`:                                                            false,
	})
}

// TestGenerateNoCitation: a question whose words a reference's title holds is answered by the prose, not by
// the reference list's entry.
func TestGenerateNoCitation(t *testing.T) {
	t.Parallel()
	passages := []rag.Passage{
		{N: 1, Title: "Mozilla", Text: "Baker, Mitchell (3 April 2014). \"Brendan Eich Steps Down as Mozilla CEO\". mozilla blog.\n\n" +
			"\"FAQ on CEO Resignation\". The Mozilla Blog. Retrieved 2015-04-20."},
		{N: 2, Title: "Mozilla", Text: "Due to the controversy, Eich voluntarily stepped down on April 3, 2014."},
	}
	text := generateStreamed(t, New(Options{}), rag.GenerateRequest{Question: "When did Brendan Eich step down as Mozilla CEO?", Passages: passages})
	if !strings.Contains(text, "April 3, 2014") || strings.Contains(text, "mozilla blog") || strings.Contains(text, "[1]") {
		t.Fatalf("answer %q, want the sentence of passage 2 alone", text)
	}
}

// TestJoinBrokenEndings: a sentence whose last word a page break cut is one unit again; a heading or a
// sentence that closes before the break is not joined to what follows.
func TestJoinBrokenEndings(t *testing.T) {
	for in, want := range map[string]string{
		"제안설명의 기회를 주신 것을 감사드\n\n립니다.\n\n대규모유통업 판매사원": "제안설명의 기회를 주신 것을 감사드립니다.\n\n대규모유통업 판매사원",
		"사용하고 있는 것을 밝혔습니\n\n다. 이에 대해 고용부는":           "사용하고 있는 것을 밝혔습니다. 이에 대해 고용부는",
		"위원회를 개회하겠습니다.\n\n다음.":                       "위원회를 개회하겠습니다.\n\n다음.",
		"III. 검토의견\n\n1. 위원 후보":                      "III. 검토의견\n\n1. 위원 후보",
		"제2장 위원회의 구성\n\n목적.":                         "제2장 위원회의 구성\n\n목적.", // a heading: too short to be prose
	} {
		if got := joinBrokenEndings(in); got != want {
			t.Errorf("joinBrokenEndings(%q) = %q, want %q", in, got, want)
		}
	}
}

// checkBool checks the predicate f, called name, on each case's input.
func checkBool(t *testing.T, name string, f func(string) bool, cases map[string]bool) {
	t.Helper()
	for in, want := range cases {
		if got := f(in); got != want {
			t.Errorf("%s(%q) = %v, want %v", name, in, got, want)
		}
	}
}

// TestCitationPiece: the dating piece of a reference entry run together with quoted prose into a line
// longer than an entry ("… IBPhoenix. Archived from the original on 2007-09-14. Retrieved 2013-06-10. We
// at IBPhoenix think …") is no answer sentence, though it may hold a word of the question ("originally");
// the prose around it is.
func TestCitationPiece(t *testing.T) {
	t.Parallel()
	quote := strings.Repeat("We at IBPhoenix think that having a browser and a database named alike confuses users. ", 4)
	line := "\"Mozilla browser becomes Firebird\". IBPhoenix. Archived from the original on 2007-09-14. Retrieved 2013-06-10. " + quote
	if citation(line) {
		t.Fatalf("the whole line (%d runes) is read as an entry; the test needs one longer than maxCitation", len([]rune(line)))
	}
	seen := 0
	for _, s := range units(line) {
		piece := strings.HasPrefix(s.text, "Archived") || strings.HasPrefix(s.text, "Retrieved")
		if piece {
			seen++
		}
		if got := answerable(s, typeNone); got == piece {
			t.Errorf("answerable(%q) = %v, want %v", s.text, got, !piece)
		}
	}
	if seen != 2 {
		t.Errorf("units of the line held %d dating pieces, want 2", seen)
	}
	for s, want := range map[string]bool{"Archived from the original on 2007-09-14.": true, "Retrieved 2013-06-10.": true,
		"The copy was retrieved from the archive on the day it was published, as the original had been lost.": false} {
		if got := citePiece(s); got != want {
			t.Errorf("citePiece(%q) = %v, want %v", s, got, want)
		}
	}
}
