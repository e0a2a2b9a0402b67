package browser

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ragd/ragd/internal/testkit"
)

// TestDocumentPicker: two documents are ingested; the chat's document picker lists them, and with one checked
// the question is sent with its id in document_ids and answered from it (the cited source is that document).
func TestDocumentPicker(t *testing.T) {
	ctx, _ := browser(t)
	dir := t.TempDir()
	env := testkit.CleanEnv("RAGD_LOG_LEVEL=info")
	ingest := exec.Command(testkit.Binary(t), "ingest", "--data-dir", dir,
		testkit.FixturePath("md/ko_react_render-and-commit.md"), testkit.FixturePath("md/ko_react_importing-and-exporting-components.md"))
	ingest.Env = env
	if out, err := ingest.CombinedOutput(); err != nil {
		t.Fatalf("ragd ingest: %v\n%s", err, out)
	}
	srv := testkit.Serve(t, env, "--data-dir", dir)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.ID("question")),
		chromedp.Click(`#doc-picker summary`, chromedp.NodeVisible)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the documents to be listed", `document.querySelectorAll('#doc-options input[type=checkbox]').length === 2`, 30*time.Second)
	// Check the document the question is not about: only it may answer.
	title := eval[string](t, ctx, `(() => {
	  for (const l of document.querySelectorAll('#doc-options label')) {
	    if (!l.textContent.includes('render')) { l.querySelector('input').click(); return l.textContent.trim(); }
	  }
	  return '';
	})()`)
	if title == "" {
		t.Fatal("no document to pick")
	}
	if got := eval[string](t, ctx, `document.getElementById('doc-picked').textContent`); got != "(1)" {
		t.Fatalf("picker says %q, want (1)", got)
	}
	eval[bool](t, ctx, `(() => { window.__bodies = []; const f = window.fetch; window.fetch = (u, o) => { if (String(u).includes('/api/chat')) window.__bodies.push(JSON.parse(o.body)); return f(u, o); }; return true; })()`)
	ask(t, ctx, "컴포넌트를 내보내고 가져오는 방법은 무엇인가요?")
	ids := eval[[]string](t, ctx, `window.__bodies[0].document_ids || []`)
	want := eval[string](t, ctx, `document.querySelector('#doc-options input:checked').value`)
	if len(ids) != 1 || ids[0] != want {
		t.Fatalf("sent document_ids %v, want [%s]", ids, want)
	}
	if eval[int](t, ctx, `document.querySelectorAll('.msg-assistant[data-state="done"] .answer button.cite').length`) == 0 {
		t.Fatal("the answer cites nothing")
	}
	got := eval[string](t, ctx, `(() => { document.querySelector('.msg-assistant[data-state="done"] .answer button.cite').click(); return document.getElementById('source-title').textContent; })()`)
	if !strings.Contains(title, got) {
		t.Fatalf("the cited source is %q, want the picked document %q", got, title)
	}
}
