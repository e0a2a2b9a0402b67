package testkit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// PumsemScenario is a line of shared/samples/pumsem/scenarios.jsonl (the sample's README explains the fields).
type PumsemScenario struct {
	ID            string   `json:"id"`
	Question      string   `json:"question"`
	Kind          string   `json:"kind"`
	Expect        []string `json:"expect"`
	ExpectAny     []string `json:"expect_any"`
	ExpectAnyMin  int      `json:"expect_any_min"`
	ExpectAbsent  []string `json:"expect_absent"`
	ExpectSources []string `json:"expect_sources"`
}

// PumsemScenarios reads the 품셈 sample's scenarios.
func PumsemScenarios(t testing.TB) []PumsemScenario {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Shared("samples", "pumsem"), "scenarios.jsonl"))
	if err != nil {
		t.Fatalf("the 품셈 sample: %v", err)
	}
	var out []PumsemScenario
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var s PumsemScenario
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

var thousandsSep = regexp.MustCompile(`(\d),(\d{3})`)

// Miss applies the sample README's matching rule to text — substrings after removing thousands separators
// (126,600 → 126600): every expect, at least expect_any_min of expect_any, and (with absent) none of
// expect_absent. It returns what is wrong, "" when text passes.
func (s PumsemScenario) Miss(text string, absent bool) string {
	for thousandsSep.MatchString(text) {
		text = thousandsSep.ReplaceAllString(text, "$1$2")
	}
	var bad []string
	for _, e := range s.Expect {
		if !strings.Contains(text, e) {
			bad = append(bad, "missing "+e)
		}
	}
	n := 0
	for _, e := range s.ExpectAny {
		if strings.Contains(text, e) {
			n++
		}
	}
	if n < s.ExpectAnyMin {
		bad = append(bad, "fewer than expect_any_min of "+strings.Join(s.ExpectAny, ", "))
	}
	for _, e := range s.ExpectAbsent {
		if absent && strings.Contains(text, e) {
			bad = append(bad, "contains "+e)
		}
	}
	return strings.Join(bad, "; ")
}
