package extractive

import (
	"sync"

	"github.com/ragd/ragd/internal/textproc"
)

// englishFrames are the analyzer stems of the English frame words (frameWords): "called", "named" and
// "names" frame a question as "call" and "name" do ("What was Firefox originally called?" asks for a name;
// "originally" says which).
var englishFrames = sync.OnceValue(func() map[string]bool {
	out := map[string]bool{}
	for _, f := range frameWords {
		if f[0] < 0x80 {
			if t := textproc.IndexTerms(f); len(t) > 0 {
				out[t[0]] = true
			}
		}
	}
	return out
})

// englishFrame reports whether the English question word w is a form of a frame word.
func englishFrame(w string) bool {
	if w == "" || w[0] >= 0x80 || !isLatin(w) {
		return false
	}
	t := textproc.IndexTerms(w)
	return len(t) > 0 && englishFrames()[t[0]]
}
