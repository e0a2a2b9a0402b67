package extractive

import (
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

// TestGenerateEnglishFrameForms: "called" frames a question as "call" does: "What was Firefox originally
// called?" asks for a name, which the sentence holding "originally" gives in other words ("named"), rather
// than the sentence that merely uses "called".
func TestGenerateEnglishFrameForms(t *testing.T) {
	t.Parallel()
	for _, w := range []string{"called", "names", "named", "dates"} {
		if !englishFrame(w) {
			t.Errorf("englishFrame(%q) = false, want true", w)
		}
	}
	for _, w := range []string{"firefox", "originally", "이름", ""} {
		if englishFrame(w) {
			t.Errorf("englishFrame(%q) = true, want false", w)
		}
	}
	answerOpens(t, "What was Firefox originally called?", "Firefox was originally named Phoenix",
		"Recently, Mozilla's activities have expanded to include Firefox on mobile platforms, a mobile OS called Firefox OS and a marketplace for HTML5 applications.",
		"Firefox was originally named Phoenix but the name was changed so as to avoid trademark conflicts with Phoenix Technologies.")
}

// TestGeneratePronounGoesOn: a sentence opening with a pronoun ("It is developed …") is about what the
// sentence before it named, whose words it holds through the pronoun: it answers beside that sentence,
// before another passage's sentence sharing only the question's verb.
func TestGeneratePronounGoesOn(t *testing.T) {
	t.Parallel()
	passages := []rag.Passage{
		{N: 1, Title: "Editors", Text: "Quill is an open source text editor run by a small foundation. It is developed entirely in Rust. Quill runs on every desktop."},
		{N: 2, Title: "Editors", Text: "Most plugins are written in Lua and loaded at start-up. Other programs are written in Go."},
		{N: 3, Title: "Editors", Text: "The Quill editor was renamed twice. The foundation publishes its reports online."},
	}
	answerHolds(t, passages, "In what language is the Quill editor written?", "It is developed entirely in Rust.")
	for text, want := range map[string]bool{"It is written in Java.": true, "He stepped down.": true, "Italy is large.": false, "The editor is small.": false} {
		if refersBack(text) != want {
			t.Errorf("refersBack(%q) = %v, want %v", text, !want, want)
		}
	}
}

// TestGenerateAbbreviatedNumber: "No." before a code is the number a question asks for ("docket number"),
// though the analyzer drops "no" as a stop word.
func TestGenerateAbbreviatedNumber(t *testing.T) {
	t.Parallel()
	answerOpens(t, "What is the docket number of the proposed rule?", "[Docket No. ABC–2021–0042",
		"The proposed changes were published in March.",
		"[Docket No. ABC–2021–0042; Product Identifier 2021–X–7]")
	for text, want := range map[string]bool{"Docket No. FAA–2020–0686": true, "Vol. 85, No. 152": true, "Say no. Then leave.": false, "No. The rule stands.": false} {
		if got := abbreviates(qword{terms: []string{"number"}}, text); got != want {
			t.Errorf("abbreviates(number, %q) = %v, want %v", text, got, want)
		}
	}
}
