package browser

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ragd/ragd/internal/testkit"
)

// TestScreenshots takes the screenshots of docs/ui.md: every page (chat with an answer, documents, a PDF's
// document page, the search playground, the Q&A board with a question open, the admin page) in the light and
// the dark theme at 1400 px and at 390 px, into testdata/out/browser/screenshots (copy them to
// docs/screenshots). On the way it checks what a screenshot would hide: no page logs a console error and none
// scrolls sideways at 390 px.
func TestScreenshots(t *testing.T) {
	ctx, _ := browser(t)
	const admin = "screenshots-bootstrap-admin-key-0123456789"
	dir := t.TempDir()
	env := testkit.CleanEnv("RAGD_LOG_LEVEL=info")
	ingest := exec.Command(testkit.Binary(t), "ingest", "--data-dir", dir, testkit.FixturePath("pdf/bill_2125318_original.pdf"),
		testkit.FixturePath("md/ko_react_render-and-commit.md"))
	ingest.Env = env
	if out, err := ingest.CombinedOutput(); err != nil {
		t.Fatalf("ragd ingest: %v\n%s", err, out)
	}
	srv := testkit.Serve(t, append(env, "RAGD_ADMIN_KEY="+admin), "--data-dir", dir)
	if code, body := srv.Call(t, admin, "POST", "/api/questions", map[string]any{"collection": "default", "title": "렌더링과 커밋은 어떻게 다른가요?"}); code >= 300 {
		t.Fatalf("question: %d %s", code, body)
	}
	out := filepath.Join(outDir(t), "screenshots")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/documents"), chromedp.WaitVisible(chromedp.ID("api-key-input")),
		chromedp.SendKeys(chromedp.ID("api-key-input"), admin), chromedp.Click(chromedp.ID("api-key-save"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the documents", `document.querySelectorAll('#doc-rows tr[data-status="ready"]').length === 2`, time.Minute)
	pdf := eval[string](t, ctx, `[...document.querySelectorAll('#doc-rows tr')].find((r) => r.textContent.includes('PDF')).dataset.id`)
	errs := consoleErrors(t, ctx)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.ID("question"))); err != nil {
		t.Fatal(err)
	}
	ask(t, ctx, "시행일은 공포 후 몇 개월인가요?")

	pages := []struct {
		name, path, ready string
		then              func()
	}{
		{"chat", "/", `document.querySelector('.msg-assistant[data-state="done"] .answer-actions')`, nil},
		{"documents", "/documents", `document.querySelectorAll('#doc-rows tr[data-status="ready"]').length === 2`, nil},
		{"document", "/documents/" + pdf, `document.querySelector('#chunks .chunk') && document.querySelector('#history-rows tr') && document.querySelector('#page-viewer[data-state="ready"]')`, nil},
		{"search", "/search?q=%ED%83%84%EC%86%8C%EC%A4%91%EB%A6%BD+%EC%9C%84%EC%9B%90%ED%9A%8C&k=5", `document.querySelector('#pg-hits .hit')`, nil},
		{"board", "/board?collection=default", `document.querySelector('#questions .question-link')`, func() {
			if err := chromedp.Do(ctx, chromedp.Click(`#questions .question-link`, chromedp.NodeVisible)); err != nil {
				t.Fatal(err)
			}
			waitFor(t, ctx, "the thread", `!document.getElementById('thread').hidden`, 10*time.Second)
		}},
		{"admin", "/admin", `document.querySelector('#user-rows tr') && document.querySelector('#key-rows tr') && document.querySelector('#audit-rows tr')`, nil},
	}
	for _, theme := range []string{"light", "dark"} {
		for _, width := range []int64{1400, 390} {
			height := int64(900)
			if width == 390 {
				height = 844
			}
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, height)); err != nil {
				t.Fatal(err)
			}
			// The theme, as the header's toggle remembers it: every page loaded after this shows it.
			eval[bool](t, ctx, `(localStorage.setItem('ragd.theme', `+jsString(theme)+`), true)`)
			for _, p := range pages {
				if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+p.path)); err != nil {
					t.Fatal(err)
				}
				if got := eval[string](t, ctx, `document.documentElement.dataset.theme || ''`); got != theme {
					t.Fatalf("%s: theme %q, want %q", p.name, got, theme)
				}
				waitFor(t, ctx, p.name, p.ready, time.Minute)
				if p.then != nil {
					p.then()
				}
				time.Sleep(300 * time.Millisecond) // images and layout settle
				if w := eval[int64](t, ctx, `document.scrollingElement.scrollWidth`); w > width {
					t.Errorf("%s is %d px wide at %d px", p.name, w, width)
				}
				buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
				if err != nil {
					t.Fatal(err)
				}
				name := filepath.Join(out, p.name+"-"+theme+"-"+strconv.FormatInt(width, 10)+".png")
				if err := os.WriteFile(name, buf, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	t.Logf("screenshots in %s", out)
	if e := errs(); len(e) > 0 {
		t.Fatalf("console errors: %q", e)
	}
}
