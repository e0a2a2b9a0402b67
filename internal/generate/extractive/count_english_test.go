package extractive

import (
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

// countsIn tells a count ("189 fatalities", "150") from a label's number ("Flight 043"), a year, a date and
// a measure ("5 seconds"); with a noun, the number must count it or another plural noun.
func TestCountsIn(t *testing.T) {
	seen := typedTokens("How many people died in the Lion Air Flight 610 accident?")
	for _, tc := range []struct {
		text, noun string
		want       bool
	}{
		{"Soekarno Hatta International Airport in Jakarta, Indonesia, resulting in 189 fatalities.", "people", true},
		{"the accident flight (Lion Air Flight 043) experienced the same failure", "", false},
		{"Following the Lion Air Flight 610 accident on October 29, 2018, data from the recorder", "", false},
		{"a Boeing Model 737–8 airplane", "", false},
		{"Docket No. FAA–2020–0686; Vol. 85", "", false},
		{"disagree by more than 5 knots for more than 5 seconds", "people", false},
		{"disagree by more than 5 knots for more than 5 seconds", "", true},
		{"| Maxim Integrated Product | San Jose | 150 | Closure Permanent |", "", true},
		{"The plant employed 150 workers.", "employees", true},
		{"The plant employed 150 employee.", "employees", true},
		{"on 07/01/2015 at 10:30", "", false},
	} {
		if got := countsIn(tc.text, seen, tc.noun); got != tc.want {
			t.Errorf("countsIn(%q, %q) = %v, want %v", tc.text, tc.noun, got, tc.want)
		}
	}
	if englishCounted("How many people died?") != "people" || englishCounted("몇 명인가요?") != "" {
		t.Error("englishCounted")
	}
}

// A how-many question is answered by the sentence that gives a number of something, not by one that only
// names the same flight by its number, and the trimmed sentence keeps the clause with the count.
func TestGenerateEnglishCount(t *testing.T) {
	t.Parallel()
	passages := []rag.Passage{
		{N: 1, Title: "federal-register", Text: "Flight data recorder data from the Lion Air Flight 610 accident airplane indicated that " +
			"on the flight just prior to the accident flight (Lion Air Flight 043), the airplane experienced the same " +
			"single erroneously high AOA sensor failure condition that the Lion Air Flight 610 crew encountered."},
		{N: 2, Title: "federal-register", Text: "On October 29, 2018, a Boeing Model 737–8 airplane operated by Lion Air " +
			"(Lion Air Flight 610) was involved in an accident after takeoff from Soekarno-Hatta International Airport in " +
			"Jakarta, Indonesia, resulting in 189 fatalities. Investigation of the accident has been completed."},
	}
	text := generateStreamed(t, New(Options{}), rag.GenerateRequest{Question: "How many people died in the Lion Air Flight 610 accident?", Passages: passages})
	if !strings.Contains(text, "189 fatalities") || !strings.HasPrefix(text, "…") && !strings.HasPrefix(text, "On October 29") {
		t.Errorf("answer %q, want the sentence with 189 fatalities first", text)
	}
	// A when-question's trimmed sentence keeps its date.
	text = generateStreamed(t, New(Options{}), rag.GenerateRequest{Question: "When did the Lion Air Flight 610 accident happen?", Passages: passages[1:]})
	if !strings.Contains(text, "October 29, 2018") {
		t.Errorf("answer %q, want the date", text)
	}
}

// An English when-question answered only by a sentence that names what it names but not what happened
// gets the not-covered reply; one whose sentence says it happened is answered.
func TestGenerateOtherEvent(t *testing.T) {
	t.Parallel()
	passages := []rag.Passage{{N: 1, Title: "federal-register", Text: "On November 7, 2018, the FAA issued Emergency AD " +
		"2018–23–51 to all known U.S. owners and operators of Boeing Model 737 MAX airplanes. A stall occurs when " +
		"the airflow around the wing is disrupted."}}
	checkCovered(t, passages, []coverCase{
		{"When did the FAA lift the 737 MAX grounding?", false},
		{"When did the FAA issue the emergency AD for the 737 MAX?", true},
	})
	// A date line that holds none of the question's names is left to the other rules.
	warn := []rag.Passage{{N: 1, Title: "WARN-Report", Text: "WARN Report Summary\n\n07/01/2015 - 03/25/2016"}}
	checkCovered(t, warn, []coverCase{{"What period does the WARN report cover?", true}})
}

// A which-question asking for a kind of thing ("Which office …?") is answered with the line that names one
// in capitals ("Executive Office for United States Trustees"), which the title lines round it only echo;
// a heading in capitals or a sentence that uses the word ("Office rent …") names none.
func TestGenerateEnglishClass(t *testing.T) {
	t.Parallel()
	passages := []rag.Passage{{N: 1, Title: "handbook-872p", Text: "U.S. Department of Justice\n\nExecutive Office for United States Trustees\n\n" +
		"Handbook for\n\nChapter 13\n\nStanding Trustees\n\nOctober 1, 2012\n\nTable of Contents"},
		{N: 2, Title: "handbook-872p", Text: "SAFETY OF OFFICE AND EMPLOYEES\n\nOffice rent for the standing trustee should be reasonable. " +
			"The standing trustee of a chapter 13 case may not delegate the duty."},
		{N: 3, Title: "handbook-872p", Text: "This handbook publishes the duties of the chapter 13 standing trustee. " +
			"The standing trustee handbook applies to every chapter 13 case. The chapter 13 standing trustee reads the handbook."}}
	text := generateStreamed(t, New(Options{}), rag.GenerateRequest{Question: "Which office publishes the Chapter 13 standing trustee handbook?", Passages: passages})
	if !strings.Contains(text, "Executive Office for United States Trustees") {
		t.Errorf("answer %q, want the office", text)
	}
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"Executive Office for United States Trustees", true},
		{"SAFETY OF OFFICE AND EMPLOYEES", false},
		{"Office rent for the standing trustee should be reasonable.", false},
		{"the Office of the Standing Trustee", false}, // only the question's own words
	} {
		if got := namesEnglishInstance(tc.text, "office", "Which office publishes the Chapter 13 standing trustee handbook?"); got != tc.want {
			t.Errorf("namesEnglishInstance(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
	qw := questionWords("What is the office of the trustee?", "")
	if c := englishClass("What is the office of the trustee?", qw); c != "" {
		t.Errorf("englishClass of a what-is question = %q", c)
	}
}
