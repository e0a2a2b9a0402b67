package retrieve

import (
	"slices"
	"testing"
)

// A hyphenated compound's whole form leaves the keyword terms (its parts stay), and keyword feedback's
// passage model counts its parts as words.
func TestWithoutCompounds(t *testing.T) {
	for _, tt := range []struct{ in, want []string }{
		{[]string{"boundari-layer", "boundari", "layer", "separ"}, []string{"boundari", "layer", "separ"}},
		{[]string{"25-180-12", "25", "180", "12"}, []string{"25-180-12", "25", "180", "12"}},
		{[]string{"non-linear"}, []string{"non-linear"}}, // nothing else left
	} {
		if got := withoutCompounds(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("withoutCompounds(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	f := wordFrequencies("Shock-induced boundary-layer separation in the boundary layer.")
	for term, want := range map[string]float64{"boundari": 2, "layer": 2, "shock": 1, "induc": 1, "separ": 1, "boundari-layer": 0, "shock-induc": 0} {
		if f.tf[term] != want {
			t.Errorf("wordFrequencies: %q counted %g times, want %g (all: %v)", term, f.tf[term], want, f.tf)
		}
	}
	if f.words != 7 {
		t.Errorf("wordFrequencies: %g words, want 7", f.words)
	}
}
