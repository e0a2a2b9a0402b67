package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/testkit"
)

func pumsemScenarios(t *testing.T) (string, []testkit.PumsemScenario) {
	return testkit.Shared("samples", "pumsem"), testkit.PumsemScenarios(t)
}

// loadPumsem runs examples/pumsem/load against the server at url and returns its output.
func loadPumsem(t *testing.T, url, sample string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(testkit.Root(), "examples", "pumsem", "load"), sample)
	cmd.Env = testkit.CleanEnv("RAGD_URL=" + url)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("examples/pumsem/load: %v\n%s", err, out)
	}
	return string(out)
}

type pumsemReply struct {
	status int
	body   []byte
	view   struct {
		Answer   string `json:"answer"`
		NotFound bool   `json:"not_found"`
		Error    string `json:"error"`
		Sources  []struct {
			Title   string `json:"title"`
			Section string `json:"section"`
			Passage string `json:"passage"`
		} `json:"sources"`
		SearchInfo struct {
			EntitiesFound     int `json:"entities_found"`
			RelationsExpanded int `json:"relations_expanded"`
			RowsMatched       int `json:"rows_matched"`
		} `json:"search_info"`
	}
}

func askPumsem(t *testing.T, url, question string) pumsemReply {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"question": question, "collection": "pumsem"})
	resp, err := http.Post(url+"/api/chat", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := pumsemReply{status: resp.StatusCode}
	if r.body, err = io.ReadAll(resp.Body); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(r.body, &r.view); err != nil {
		t.Fatalf("POST /api/chat %q: %d, not JSON: %s", question, resp.StatusCode, r.body)
	}
	return r
}

// TestPumsemScenarios serves the real binary, loads the 품셈 sample with examples/pumsem/load, asks all 16
// scenarios through POST /api/chat with the offline defaults, and scores them with the sample README's rule.
func TestPumsemScenarios(t *testing.T) {
	sample, scenarios := pumsemScenarios(t)
	srv := testkit.Serve(t, testkit.CleanEnv("RAGD_DATA_DIR="+t.TempDir()))
	out := loadPumsem(t, srv.URL, sample)
	if !strings.Contains(out, `"embedded":155`) || !strings.Contains(out, `"rows":67`) {
		t.Fatalf("first load:\n%s", out)
	}
	t.Run("ReloadChangesNothing", func(t *testing.T) {
		out := loadPumsem(t, srv.URL, sample)
		if !strings.Contains(out, `"embedded":0`) || strings.Count(out, `"changed":false`) != 2 {
			t.Errorf("second load changed something:\n%s", out)
		}
	})
	passed, sourced := 0, 0
	for _, s := range scenarios {
		r := askPumsem(t, srv.URL, s.Question)
		if s.Kind == "empty" && s.Question == "" {
			if r.status == http.StatusBadRequest && r.view.Error == "question_required" {
				passed++
				sourced++
			} else {
				t.Errorf("%s: empty question: %d %s, want 400 question_required", s.ID, r.status, r.body)
			}
			continue
		}
		if r.status != http.StatusOK {
			t.Errorf("%s %q: status %d %s", s.ID, s.Question, r.status, r.body)
			continue
		}
		if miss := s.Miss(r.view.Answer, true); miss != "" {
			t.Errorf("%s %q: %s\n%s", s.ID, s.Question, miss, r.view.Answer)
		} else {
			passed++
		}
		// Where the answer's sources come from: every expected entity name or section path is a source's
		// title or section, or named in a cited piece of context.
		found := 0
		for _, want := range s.ExpectSources {
			for _, src := range r.view.Sources {
				if src.Title == want || src.Section == want || strings.Contains(src.Passage, want) {
					found++
					break
				}
			}
		}
		if found == len(s.ExpectSources) {
			sourced++
		} else {
			t.Errorf("%s: %d of the expected sources %v among the answer's sources", s.ID, found, s.ExpectSources)
		}
		if s.Kind != "refusal" && s.Kind != "empty" && (r.view.SearchInfo.EntitiesFound == 0 || r.view.SearchInfo.RelationsExpanded == 0) {
			t.Errorf("%s: search_info %+v", s.ID, r.view.SearchInfo)
		}
	}
	t.Logf("품셈 scenarios (offline): %d/%d pass the matching rule; sources %d/%d", passed, len(scenarios), sourced, len(scenarios))
}

// TestPumsemContextToLLM loads the sample into a ragd whose generator is OpenAI — the wire-format fake — and
// checks that the context sent to the model holds every fact each graph, cost and hierarchy scenario
// expects, and that refusals and not-found replies are the profile's without a model call.
func TestPumsemContextToLLM(t *testing.T) {
	sample, scenarios := pumsemScenarios(t)
	fake := fakeapi.NewOpenAI("sk-pumsem")
	t.Cleanup(fake.Close)
	srv := testkit.Serve(t, testkit.CleanEnv("RAGD_DATA_DIR="+t.TempDir(), "RAGD_GENERATOR=openai",
		"OPENAI_API_KEY="+fake.Key(), "OPENAI_BASE_URL="+fake.BaseURL()))
	loadPumsem(t, srv.URL, sample)
	for _, s := range scenarios {
		if s.Question == "" {
			continue
		}
		before := len(fake.Requests())
		r := askPumsem(t, srv.URL, s.Question)
		if r.status != http.StatusOK {
			t.Errorf("%s: status %d %s", s.ID, r.status, r.body)
			continue
		}
		reqs := fake.Requests()[before:]
		if s.Kind == "refusal" || s.Kind == "empty" {
			if len(reqs) != 0 || s.Miss(r.view.Answer, true) != "" {
				t.Errorf("%s: %d model calls, answer %q", s.ID, len(reqs), r.view.Answer)
			}
			continue
		}
		if len(reqs) != 1 {
			t.Errorf("%s: %d model calls, want 1", s.ID, len(reqs))
			continue
		}
		// The prompt holds the facts, and not the rows the spec filter dropped.
		var body any
		if err := reqs[0].JSON(&body); err != nil {
			t.Fatal(err)
		}
		if miss := s.Miss(strings.Join(allStrings(body), "\n"), true); miss != "" {
			t.Errorf("%s %q: the context sent to the model: %s", s.ID, s.Question, miss)
		}
	}
}

// allStrings collects every string of a decoded JSON value (the messages of a chat request).
func allStrings(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, allStrings(e)...)
		}
		return out
	case map[string]any:
		var out []string
		for _, e := range x {
			out = append(out, allStrings(e)...)
		}
		return out
	}
	return nil
}
