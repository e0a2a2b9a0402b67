package extractive

import (
	"strings"
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
	passages := []rag.Passage{
		{N: 1, Title: "Mozilla", Text: "Recently, Mozilla's activities have expanded to include Firefox on mobile platforms, a mobile OS called Firefox OS and a marketplace for HTML5 applications."},
		{N: 2, Title: "Mozilla", Text: "Firefox was originally named Phoenix but the name was changed so as to avoid trademark conflicts with Phoenix Technologies."},
	}
	text := answerHolds(t, passages, "What was Firefox originally called?", "originally named Phoenix")
	if !strings.HasPrefix(text, "Firefox was originally named Phoenix") {
		t.Errorf("answer %q opens with the sentence that only shares \"called\"", text)
	}
}
