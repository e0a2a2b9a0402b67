package providers

import (
	"encoding/csv"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/qa"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/testkit"
)

// lectures is the shared sample course (README.md there gives the scoring rule).
var lectures = testkit.Shared("samples", "lectures")

// sampleQuestion is a line of questions.jsonl.
type sampleQuestion struct {
	ID         string   `json:"id"`
	Question   string   `json:"question"`
	Answerable bool     `json:"answerable"`
	Expect     []string `json:"expect"`
	Sources    []string `json:"sources"`
	DupGroup   *string  `json:"dup_group"`
}

func readSampleQuestions(t *testing.T) []sampleQuestion {
	return testkit.ReadJSONL[sampleQuestion](t, filepath.Join(lectures, "questions.jsonl"))
}

// loadLectures runs examples/lectures/load against a running server.
func loadLectures(t *testing.T, url string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(testkit.Root(), "examples", "lectures", "load"), lectures)
	cmd.Env = append(os.Environ(), "RAGD_URL="+url, "RAGD_API_KEY=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("load: %v\n%s", err, out)
	}
	return string(out)
}

func postQuestion(t *testing.T, url, collection, title string) rag.Question {
	t.Helper()
	resp, body := do(t, "POST", url+"/api/questions", map[string]string{"collection": collection, "title": title}, nil)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("post question: HTTP %d %s", resp.StatusCode, body)
	}
	return decode[rag.Question](t, body)
}

func runPass(t *testing.T, url string) rag.QARun {
	t.Helper()
	resp, body := do(t, "POST", url+"/api/qa/runs?wait=true", nil, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("run: HTTP %d %s", resp.StatusCode, body)
	}
	return decode[rag.QARun](t, body)
}

func thread(t *testing.T, url, id string) qa.Thread {
	t.Helper()
	resp, body := do(t, "GET", url+"/api/questions/"+id, nil, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("question %s: HTTP %d %s", id, resp.StatusCode, body)
	}
	return decode[qa.Thread](t, body)
}

// aiAnswers returns the AI answers of a thread (there must never be more than one).
func aiAnswers(th qa.Thread) []*rag.BoardAnswer {
	var out []*rag.BoardAnswer
	for _, a := range th.Answers {
		if a.IsAI {
			out = append(out, a)
		}
	}
	return out
}

// Quality floors of the lecture board on the offline defaults, below which TestLecturesBoard fails: the
// issue's targets, 22 of 24 answerable questions answered with every expected string and a listed source,
// 6 of 6 not covered, 4 of 4 duplicate pairs (23, 6 and 4 measured). The answers come from the answer
// service (the offline extractive answerer); the duplicate pairs are found by the board's similar questions
// (embedding, terms and the documents of the questions' best passages; docs/qa.md "Similar questions").
const (
	floorAnswered  = 22
	floorNotFound  = 6
	floorDupsFound = 4
)

// TestLecturesBoard is the "Show" on the real binary and the offline defaults: load the sample
// course with examples/lectures/load, post its 30 questions, run one answer pass and score the AI answers
// by the sample's README rule (every expect string verbatim, a listed source cited; unanswerable ones get
// the profile's not-found reply and cite nothing), and the near-duplicate pairs by their similar questions.
func TestLecturesBoard(t *testing.T) {
	t.Parallel()
	p := serve(t, t.TempDir(), "RAGD_QA_BATCH=100", "RAGD_QA_INTERVAL=1h")
	out := loadLectures(t, p.URL)
	mustContain(t, "load output", out, "created collection lectures", "12 ready, 0 failed")

	// The lecture names and weeks of index.csv are what the source references must carry.
	f, err := os.Open(filepath.Join(lectures, "index.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	index := map[string][2]string{}
	for _, r := range rows[1:] {
		index[r[0]] = [2]string{r[1], r[2]}
	}

	qs := readSampleQuestions(t)
	ids := map[string]string{}
	for _, q := range qs {
		ids[q.ID] = postQuestion(t, p.URL, "lectures", q.Question).ID
	}
	run := runPass(t, p.URL)
	if run.Answered != len(qs) || run.Failed != 0 || run.FinishedAt == nil {
		t.Fatalf("run = %+v, want all %d answered", run, len(qs))
	}
	var profile struct {
		Settings map[string]any `json:"settings"`
	}
	b, err := os.ReadFile(filepath.Join(testkit.Root(), "examples", "lectures", "profile.json"))
	if err != nil || json.Unmarshal(b, &profile) != nil {
		t.Fatalf("profile.json: %v", err)
	}
	notFound, _ := profile.Settings[qa.NotFoundSetting].(string)

	answered, refused, answerable := 0, 0, 0
	for _, q := range qs {
		th := thread(t, p.URL, ids[q.ID])
		ai := aiAnswers(th)
		if len(ai) != 1 || th.Status != rag.QuestionAnswered {
			t.Fatalf("%s: %d AI answers, status %s", q.ID, len(ai), th.Status)
		}
		a := ai[0]
		if a.Author != nil {
			t.Errorf("%s: the AI answer has author %q", q.ID, *a.Author)
		}
		for _, r := range a.SourceRefs {
			want, ok := index[r.Source]
			if !ok || r.Metadata["lecture_name"] != want[0] || r.Metadata["week"] != want[1] || r.DocumentID == "" {
				t.Errorf("%s: source ref %+v does not carry its lecture and week %v", q.ID, r, want)
			}
		}
		if a.NotFound && (len(a.SourceRefs) != 0 || a.Body != notFound) {
			t.Errorf("%s: a not-found answer must be the profile's reply and cite nothing: %+v", q.ID, a)
		}
		if !q.Answerable {
			if a.NotFound && strings.Contains(a.Body, "강의에서 다루지 않음") && len(a.SourceRefs) == 0 {
				refused++
			} else {
				t.Logf("%s unanswerable, answered: %.80s…", q.ID, a.Body)
			}
			continue
		}
		answerable++
		cited := slices.ContainsFunc(a.SourceRefs, func(r rag.SourceRef) bool { return slices.Contains(q.Sources, r.Source) })
		var missing []string
		for _, e := range q.Expect {
			if !strings.Contains(a.Body, e) {
				missing = append(missing, e)
			}
		}
		if cited && len(missing) == 0 {
			answered++
		} else {
			t.Logf("%s: missing %q, cites a listed source %v", q.ID, missing, cited)
		}
	}

	// Near-duplicate pairs: each question finds its partner among its top-3 similar questions.
	pairs := map[string][]string{}
	for _, q := range qs {
		if q.DupGroup != nil {
			pairs[*q.DupGroup] = append(pairs[*q.DupGroup], ids[q.ID])
		}
	}
	found := 0
	for group, pair := range pairs {
		ok := true
		for i, id := range pair {
			resp, body := do(t, "GET", p.URL+"/api/questions/"+id+"/similar?k=3", nil, nil)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("similar: HTTP %d %s", resp.StatusCode, body)
			}
			sim := decode[struct{ Questions []qa.Similar }](t, body).Questions
			if len(sim) != 3 || sim[0].Score < sim[1].Score || sim[1].Score < sim[2].Score {
				t.Errorf("similar to %s: %+v, want 3 best first", id, sim)
			}
			if !slices.ContainsFunc(sim, func(s qa.Similar) bool { return s.ID == pair[1-i] }) {
				ok = false
			}
		}
		if ok {
			found++
		} else {
			t.Logf("pair %s: partner not in the top 3", group)
		}
	}
	t.Logf("lecture board: answerable %d/%d with every expect string and a listed source, unanswerable %d/%d refused, duplicate pairs %d/%d",
		answered, answerable, refused, len(qs)-answerable, found, len(pairs))
	if answered < floorAnswered || refused < floorNotFound || found < floorDupsFound {
		t.Errorf("below the floors %d/%d/%d", floorAnswered, floorNotFound, floorDupsFound)
	}

	// Every run is logged.
	resp, body := do(t, "GET", p.URL+"/api/qa/runs", nil, nil)
	if runs := decode[struct{ Runs []rag.QARun }](t, body).Runs; resp.StatusCode != 200 || len(runs) != 1 || runs[0].ID != run.ID || runs[0].Answered != len(qs) {
		t.Errorf("runs: HTTP %d %s", resp.StatusCode, body)
	}
}

// TestBoardModelFaults: the answer pass against the OpenAI wire-format fake. Rate limits and server errors
// first: every question ends answered, none twice. The fake down for a whole pass: the questions stay open
// with the reason, and the next pass after it recovers answers them.
func TestBoardModelFaults(t *testing.T) {
	t.Parallel()
	f := newFakes(t)
	f.openai.SetAnswer(quoteAnswer)
	p := serve(t, t.TempDir(), "RAGD_GENERATOR=openai", "OPENAI_API_KEY="+openaiKey, "OPENAI_BASE_URL="+f.openai.BaseURL(),
		"RAGD_QA_INTERVAL=1h", "RAGD_QA_MAX_ATTEMPTS=3", "RAGD_MODEL_TIMEOUT=5s")
	waitReady(t, p.URL, uploadTo(t, p.URL, "course", fixture(t, "html/en_wikipedia_mozilla.html")), time.Minute)

	var ids []string
	for _, q := range []string{mozillaQuestion, "Who founded the Mozilla Foundation?", "When was Firefox first released?"} {
		ids = append(ids, postQuestion(t, p.URL, "course", q).ID)
	}
	// A 429 with Retry-After, then three 500s: the provider's own retries give up once, the pass tries again.
	f.openai.FailNext(1, fakeapi.Fault{Status: 429, RetryAfter: time.Second})
	f.openai.FailNext(3, fakeapi.Fault{Status: 500})
	run := runPass(t, p.URL)
	if run.Answered != 3 || run.Failed != 0 || f.openai.Stats().Faulted != 4 {
		t.Fatalf("run = %+v, fake stats %+v; want 3 answered after 4 faults", run, f.openai.Stats())
	}
	for _, id := range ids {
		if th := thread(t, p.URL, id); len(aiAnswers(th)) != 1 || th.Status != rag.QuestionAnswered {
			t.Errorf("question %s: %d AI answers, status %s", id, len(aiAnswers(th)), th.Status)
		}
	}

	// Down for a whole pass.
	down := []string{postQuestion(t, p.URL, "course", "What is Mozilla's mission?").ID,
		postQuestion(t, p.URL, "course", "Where is Mozilla based?").ID}
	f.openai.SetDown(true)
	run = runPass(t, p.URL)
	if run.Answered != 0 || run.Failed != 2 || len(run.Errors) != 2 {
		t.Fatalf("run while down = %+v", run)
	}
	for _, id := range down {
		th := thread(t, p.URL, id)
		if th.Status != rag.QuestionOpen || th.Attempts != 1 || th.LastError == "" || len(th.Answers) != 0 {
			t.Errorf("question %s after a failed pass: %+v", id, th.Question)
		}
	}
	f.openai.SetDown(false)
	run = runPass(t, p.URL)
	if run.Answered != 2 || run.Failed != 0 {
		t.Fatalf("run after recovery = %+v", run)
	}
	for _, id := range append(ids, down...) {
		if th := thread(t, p.URL, id); len(aiAnswers(th)) != 1 {
			t.Errorf("question %s: %d AI answers", id, len(aiAnswers(th)))
		}
	}
	mustNotContain(t, "ragd output", p.Output.String(), openaiKey)
}

// TestBoardTwoWorkersPostgres: on PostgreSQL (PGlite), two `ragd questions answer-now` processes work through
// the lecture board's backlog at once, pass after pass, beside a running server: every question ends with
// exactly one AI answer, and the two together answered each once.
func TestBoardTwoWorkersPostgres(t *testing.T) {
	t.Parallel()
	base := testkit.DatabaseURL(t)
	url := testkit.SearchPath(base, testkit.Schema(t, base, "board_"))
	p := serve(t, t.TempDir(), "RAGD_DATABASE_URL="+url, "RAGD_QA_INTERVAL=1h")
	loadLectures(t, p.URL)
	var ids []string
	for _, q := range readSampleQuestions(t) {
		ids = append(ids, postQuestion(t, p.URL, "lectures", q.Question).ID)
	}

	bin := testkit.Binary(t)
	answered := make([]int, 2)
	var wg sync.WaitGroup
	for w := range answered {
		env := testkit.CleanEnv("RAGD_DATABASE_URL="+url, "RAGD_DATA_DIR="+t.TempDir(), "RAGD_QA_BATCH=4")
		wg.Go(func() {
			for pass := 1; pass <= len(ids); pass++ {
				cmd := exec.Command(bin, "questions", "answer-now", "--json")
				cmd.Env = env
				out, err := cmd.Output()
				if err != nil {
					t.Errorf("worker %d pass %d: %v\n%s", w+1, pass, err, out)
					return
				}
				var run rag.QARun
				if err := json.Unmarshal(out, &run); err != nil {
					t.Errorf("worker %d pass %d: %v\n%s", w+1, pass, err, out)
					return
				}
				if run.Failed != 0 {
					t.Errorf("worker %d pass %d: %+v", w+1, pass, run)
				}
				answered[w] += run.Answered
				if run.Answered == 0 && run.Skipped == 0 {
					return // nothing left to claim
				}
			}
		})
	}
	wg.Wait()
	t.Logf("worker 1 answered %d, worker 2 %d", answered[0], answered[1])
	if answered[0]+answered[1] != len(ids) || answered[0] == 0 || answered[1] == 0 {
		t.Errorf("answered %v; want %d in all, by both", answered, len(ids))
	}
	for _, id := range ids {
		if th := thread(t, p.URL, id); len(aiAnswers(th)) != 1 || th.Status != rag.QuestionAnswered {
			t.Errorf("question %s: %d AI answers, status %s", id, len(aiAnswers(th)), th.Status)
		}
	}
}
