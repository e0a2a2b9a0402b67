package browser

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ragd/ragd/internal/testkit"
)

// serveIngested ingests the fixtures with `ragd ingest` into a new data directory and serves it.
func serveIngested(t *testing.T, fixtures ...string) *testkit.Server {
	t.Helper()
	dir := t.TempDir()
	env := testkit.CleanEnv("RAGD_LOG_LEVEL=info")
	args := []string{"ingest", "--data-dir", dir}
	for _, f := range fixtures {
		args = append(args, testkit.FixturePath(f))
	}
	ingest := exec.Command(testkit.Binary(t), args...)
	ingest.Env = env
	if out, err := ingest.CombinedOutput(); err != nil {
		t.Fatalf("ragd ingest: %v\n%s", err, out)
	}
	return testkit.Serve(t, env, "--data-dir", dir)
}

// TestFollowUpInChat: after a question about bill 2125318, "그 법안은 누가 대표발의했나요?" is answered in the chat
// with that bill's sponsor, not with the other bills of the assembly minutes (the UI sends each answer's turn
// with the documents it cited).
func TestFollowUpInChat(t *testing.T) {
	ctx, _ := browser(t)
	srv := serveIngested(t, "pdf/bill_2125318_original.pdf", "pdf/bill_2125318_review_report.pdf", "pdf/assembly_minutes_21_414_1_env_labor.pdf")
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	eval[bool](t, ctx, `(() => { window.__bodies = []; const f = window.fetch; window.fetch = (u, o) => { if (String(u).includes('/api/chat')) window.__bodies.push(JSON.parse(o.body)); return f(u, o); }; return true; })()`)
	ask(t, ctx, "탄소중립위원회 위원 후보 추천 단체를 법률에 명시하는 개정안이 있나요?")
	eval[bool](t, ctx, `(() => { document.querySelector('.msg-assistant[data-state="done"]').dataset.state = 'first'; return true; })()`)
	ask(t, ctx, "그 법안은 누가 대표발의했나요?")
	answer := eval[string](t, ctx, `document.querySelector('.msg-assistant[data-state="done"] .answer').textContent`)
	if !strings.Contains(answer, "이수진") {
		t.Fatalf("the follow-up was answered %q, want the bill's sponsor 이수진", answer)
	}
	// Answered about that bill: every citation is the bill or its review report, none the minutes.
	srcs := eval[[]string](t, ctx, `[...document.querySelectorAll('.msg-assistant[data-state="done"] .answer button.cite')].map((b) => { b.click(); return document.getElementById('source-title').textContent; })`)
	for _, src := range srcs {
		if !strings.Contains(src, "bill_2125318") {
			t.Fatalf("the follow-up cites %q, want only the bill or its review report", srcs)
		}
	}
	if len(srcs) == 0 {
		t.Fatal("the follow-up cites nothing")
	}
	if n := eval[int](t, ctx, `(window.__bodies[1].history || []).filter((t) => t.role === 'assistant' && (t.document_ids || []).length > 0).length`); n != 1 {
		t.Fatalf("the follow-up's history has %d assistant turns with document_ids, want 1", n)
	}
}

// TestDocumentPicker: two documents are ingested; the chat's document picker lists them, and with the
// import/export page checked each question is sent with its id in document_ids and answered from it alone. A
// question about rendering, answered from the rendering page when asked over both (tested first), cites nothing of
// the rendering page with the import/export page picked; the import question cites only the picked page.
func TestDocumentPicker(t *testing.T) {
	ctx, _ := browser(t)
	srv := serveIngested(t, "md/ko_react_render-and-commit.md", "md/ko_react_importing-and-exporting-components.md")
	const renderQ = "React가 화면을 업데이트하는 세 단계는 무엇인가요?"
	const importQ = "컴포넌트를 다른 파일로 이동하는 세 가지 단계는 무엇인가요?"
	// Asked over both documents, the rendering question cites the rendering page: the picker's restriction shows.
	body, _ := json.Marshal(map[string]any{"question": renderQ})
	resp, err := http.Post(srv.URL+"/api/chat", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	type source struct {
		Title string `json:"title"`
	}
	var open struct {
		Sources []source `json:"sources"`
	}
	err = json.NewDecoder(resp.Body).Decode(&open)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(open.Sources, func(s source) bool { return !strings.Contains(s.Title, "import") }) {
		t.Fatalf("over both documents the rendering question cites only %+v: it does not show the restriction", open.Sources)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.ID("question")),
		chromedp.Click(`#doc-picker summary`, chromedp.NodeVisible)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the documents to be listed", `document.querySelectorAll('#doc-options input[type=checkbox]').length === 2`, 30*time.Second)
	// Check the import/export page by its title (the labels show titles; the list's order is not fixed).
	title := eval[string](t, ctx, `(() => {
	  for (const l of document.querySelectorAll('#doc-options label')) {
	    if (l.textContent.includes('import')) { l.querySelector('input').click(); return l.textContent.trim(); }
	  }
	  return '';
	})()`)
	if title == "" {
		t.Fatal("no document to pick")
	}
	if got := eval[string](t, ctx, `document.getElementById('doc-picked').textContent`); got != "(1)" {
		t.Fatalf("picker says %q, want (1)", got)
	}
	want := eval[string](t, ctx, `document.querySelector('#doc-options input:checked').value`)
	eval[bool](t, ctx, `(() => { window.__bodies = []; const f = window.fetch; window.fetch = (u, o) => { if (String(u).includes('/api/chat')) window.__bodies.push(JSON.parse(o.body)); return f(u, o); }; return true; })()`)
	const cited = `[...document.querySelectorAll('.msg-assistant[data-state="done"] .answer button.cite')].map((b) => { b.click(); return document.getElementById('source-title').textContent; })`
	for i, q := range []string{renderQ, importQ} {
		ask(t, ctx, q)
		if ids := eval[[]string](t, ctx, fmt.Sprintf(`window.__bodies[%d].document_ids || []`, i)); len(ids) != 1 || ids[0] != want {
			t.Fatalf("%q was sent with document_ids %v, want [%s]", q, ids, want)
		}
		got := eval[[]string](t, ctx, cited)
		for _, src := range got {
			if !strings.Contains(title, src) {
				t.Fatalf("%q cites %q, want only the picked document %q", q, got, title)
			}
		}
		if q == importQ && len(got) == 0 {
			t.Fatalf("%q, answered from the picked page, cites nothing: %q", q, eval[string](t, ctx, `document.querySelector('.msg-assistant[data-state="done"] .answer').textContent`))
		}
		// The next question's answer is the one marked done.
		eval[bool](t, ctx, `(() => { document.querySelector('.msg-assistant[data-state="done"]').dataset.state = 'seen'; return true; })()`)
	}
}
