package graph_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/embed/hash"
	"github.com/ragd/ragd/internal/graph"
	"github.com/ragd/ragd/internal/profile"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/store/sqlite"
)

const sampleDir = "../../../shared/samples/pumsem"

// scenario is a line of the sample's scenarios.jsonl.
type scenario struct {
	ID            string   `json:"id"`
	Question      string   `json:"question"`
	Kind          string   `json:"kind"`
	Expect        []string `json:"expect"`
	ExpectAny     []string `json:"expect_any"`
	ExpectAnyMin  int      `json:"expect_any_min"`
	ExpectAbsent  []string `json:"expect_absent"`
	ExpectSources []string `json:"expect_sources"`
}

func loadScenarios(t testing.TB) []scenario {
	b, err := os.ReadFile(filepath.Join(sampleDir, "scenarios.jsonl"))
	if err != nil {
		t.Skipf("sample not available: %v", err)
	}
	var out []scenario
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var s scenario
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

var thousands = regexp.MustCompile(`(\d),(\d{3})`)

// score applies the sample README's matching rule; it returns what is wrong ("" when the answer passes).
func score(s scenario, answer string) string {
	a := answer
	for thousands.MatchString(a) {
		a = thousands.ReplaceAllString(a, "$1$2")
	}
	var bad []string
	for _, e := range s.Expect {
		if !strings.Contains(a, e) {
			bad = append(bad, "missing "+e)
		}
	}
	n := 0
	for _, e := range s.ExpectAny {
		if strings.Contains(a, e) {
			n++
		}
	}
	if n < s.ExpectAnyMin {
		bad = append(bad, "expect_any: "+strings.Join(s.ExpectAny, ","))
	}
	for _, e := range s.ExpectAbsent {
		if strings.Contains(a, e) {
			bad = append(bad, "has "+e)
		}
	}
	return strings.Join(bad, "; ")
}

type fixture struct {
	store *sqlite.Store
	svc   *graph.Service
	coll  *rag.Collection
	set   graph.Settings
}

func setup(t testing.TB) *fixture {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ragd.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	raw, err := os.ReadFile("../../examples/pumsem/collection.yaml")
	if err != nil {
		t.Fatal(err)
	}
	prof, err := profile.Decode("collection.yaml", raw)
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := profile.Put(ctx, st, "pumsem", prof, "local")
	if err != nil {
		t.Fatal(err)
	}
	svc := graph.New(st, hash.New(hash.DefaultDim), profile.GraphSettings)
	b, err := graph.ReadDir(sampleDir)
	if err != nil {
		t.Skipf("sample not available: %v", err)
	}
	if _, err := svc.Import(ctx, "pumsem", b); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(sampleDir, "ilwi.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := svc.ImportTable(ctx, "pumsem", "ilwi", f); err != nil {
		t.Fatal(err)
	}
	set, err := svc.Settings(c)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{store: st, svc: svc, coll: c, set: set}
}

// TestScenarios answers the sample's scenarios offline and scores them with the README's rule.
func TestScenarios(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	passed := 0
	var scored int
	for _, s := range loadScenarios(t) {
		if s.Kind == "empty" && s.Question == "" {
			continue // HTTP 400, test/e2e
		}
		scored++
		res, err := f.svc.Retrieve(ctx, rag.LocalPrincipal, f.coll, f.set, s.Question)
		if err != nil {
			t.Fatal(err)
		}
		answer := graph.Reply(f.set, s.Question, "ko")
		if res.Found {
			answer = res.Answer()
		}
		if msg := score(s, answer); msg != "" {
			t.Errorf("%s %q: %s\n%s", s.ID, s.Question, msg, answer)
			continue
		}
		passed++
	}
	t.Logf("%d/%d scenarios pass", passed, scored)
}
