package extractive

import "testing"

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
