// Package browser tests ragd's web UI in a real browser (Debian's chromium through chromedp) against the
// real ragd binary, built once per run and started on a free port with a temporary data directory.
// scripts/test.sh installs chromium; without it these tests are skipped. Screenshots go to $RAGD_TEST_OUT
// or testdata/out/browser at the repository root (git-ignored).
package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/ragd/ragd/internal/testkit"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testkit.RemoveBinary()
	os.Exit(code)
}

// outDir is where screenshots go.
func outDir(t *testing.T) string { return testkit.OutDir(t, "browser") }

// startRagd runs the binary on 127.0.0.1:0 with a temp data dir and waits until it serves /readyz. The test's
// cleanup stops it with SIGINT (graceful shutdown) and fails the test if it does not stop cleanly.
func startRagd(t *testing.T, env ...string) *testkit.Server {
	t.Helper()
	return testkit.Serve(t, testkit.CleanEnv(append([]string{"RAGD_LOG_LEVEL=info"}, env...)...), "--data-dir", t.TempDir())
}

// browser starts headless chromium and returns a tab context. Dialogs (alert, confirm) are accepted and
// recorded: a hostile document must never open one.
func browser(t *testing.T) (context.Context, *[]string) {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (scripts/test.sh installs it with apt-get)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("no-first-run", true),
		chromedp.WindowSize(1280, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 5*time.Minute)
	t.Cleanup(func() {
		cancelTimeout()
		cancelCtx()
		cancelAlloc()
	})
	// Start the browser now, so that event subscriptions have a target.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	dialogs := &[]string{}
	events := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range events {
			if err != nil {
				return
			}
			mu.Lock()
			*dialogs = append(*dialogs, ev.Message)
			mu.Unlock()
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	return ctx, dialogs
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // quality 100 gives a PNG
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	p := filepath.Join(outDir(t), name)
	if err := os.WriteFile(p, buf, 0o644); err != nil {
		t.Error(err)
	}
	t.Logf("screenshot: %s", p)
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// waitFor polls a JavaScript predicate until it is truthy.
func waitFor(t *testing.T, ctx context.Context, what, js string, timeout time.Duration) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](js, chromedp.WithPollingInterval(100*time.Millisecond),
		chromedp.WithPollingTimeout(timeout))); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// recordStates makes the page record every data-state an answer goes through.
const recordStates = `(() => {
  window.__states = [];
  new MutationObserver((ms) => {
    for (const m of ms) {
      const el = m.type === 'attributes' ? m.target : null;
      if (el && el.classList && el.classList.contains('msg-assistant')) window.__states.push(el.dataset.state);
      for (const n of m.addedNodes || []) {
        if (n.classList && n.classList.contains('msg-assistant')) window.__states.push(n.dataset.state);
      }
    }
  }).observe(document.getElementById('conversation'), {subtree: true, childList: true, attributes: true, attributeFilter: ['data-state']});
  return true;
})()`

// ask types a question into the chat page, sends it and waits for the answer to finish.
func ask(t *testing.T, ctx context.Context, question string) {
	t.Helper()
	eval[bool](t, ctx, recordStates)
	// Enter sends (the key is typed, not the button clicked, so the keyboard path is the one tested).
	if err := chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.ID("question")),
		chromedp.SendKeys(chromedp.ID("question"), question+kb.Enter),
	); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the answer", `document.querySelector('.msg-assistant[data-state="done"], .msg-assistant[data-state="error"]')`, 2*time.Minute)
	if errText := eval[string](t, ctx, `(document.querySelector('.msg-assistant[data-state="error"]') || {}).textContent || ''`); errText != "" {
		t.Fatalf("the chat shows an error: %s", errText)
	}
}

func TestUploadAskAndOpenCitation(t *testing.T) {
	ctx, dialogs := browser(t)
	srv := startRagd(t)
	pdf, err := filepath.Abs(testkit.FixturePath("pdf/bill_2125318_original.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(pdf); err != nil {
		t.Fatal(err)
	}

	// Documents page: upload through the file picker, watch it become ready.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/documents"),
		chromedp.WaitVisible(chromedp.ID("dropzone")),
		chromedp.SetUploadFiles(chromedp.ID("file-input"), []string{pdf}),
	); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the upload to finish", `document.querySelector('#uploads li[data-state]')`, time.Minute)
	if st := eval[string](t, ctx, `document.querySelector('#uploads li').dataset.state + ' ' + document.querySelector('#uploads li .result').textContent`); !strings.HasPrefix(st, "ok") {
		t.Fatalf("upload: %s", st)
	}
	waitFor(t, ctx, "the document to be ready", `document.querySelector('#doc-rows tr[data-status="ready"]')`, 3*time.Minute)
	row := eval[string](t, ctx, `document.querySelector('#doc-rows tr[data-status="ready"]').textContent`)
	if !strings.Contains(row, "PDF") {
		t.Errorf("document row %q does not say PDF", row)
	}
	status := eval[string](t, ctx, `document.getElementById('model-status').textContent`)
	if !strings.Contains(status, "lexical") || !strings.Contains(status, "hash/") || !strings.Contains(status, "generator: extractive") {
		t.Errorf("the header does not say which models are active: %q", status)
	}
	screenshot(t, ctx, "documents.png")

	// Chat page: ask in Korean, get a streamed answer with citations.
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	ask(t, ctx, "시행일은 공포 후 몇 개월인가요?")
	states := eval[[]string](t, ctx, `window.__states`)
	if strings.Join(states, ",") != "waiting,streaming,done" {
		t.Errorf("answer states %v, want waiting → streaming → done", states)
	}
	answer := eval[string](t, ctx, `document.querySelector('.msg-assistant[data-state="done"] .answer').textContent`)
	cites := eval[int](t, ctx, `document.querySelectorAll('.msg-assistant[data-state="done"] .answer button.cite').length`)
	t.Logf("answer: %s (%d citations)", answer, cites)
	if cites < 1 {
		t.Fatalf("no clickable citation in the answer %q", answer)
	}
	if !strings.Contains(answer, "6개월") {
		t.Errorf("the answer %q does not give the date of effect (6 months after promulgation)", answer)
	}

	// Open the citation that carries the answer and check its page: the bill's 부칙 is on page 5.
	n := eval[int](t, ctx, `(() => {
	  for (const b of document.querySelectorAll('.msg-assistant[data-state="done"] .answer button.cite')) {
	    b.click();
	    if (document.getElementById('source-passage').textContent.includes('6개월')) return Number(b.dataset.n);
	  }
	  return 0;
	})()`)
	if n == 0 {
		t.Fatal("no citation opens the passage that says 6개월")
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`.msg-assistant[data-state="done"] .answer button.cite[data-n="%d"]`, n))),
		chromedp.WaitVisible(chromedp.ID("source-panel")),
	); err != nil {
		t.Fatal(err)
	}
	page := eval[string](t, ctx, `document.getElementById('source-page').textContent`)
	title := eval[string](t, ctx, `document.getElementById('source-title').textContent`)
	marks := eval[int](t, ctx, `document.querySelectorAll('#source-passage mark').length`)
	t.Logf("citation [%d]: %q, %s, %d highlighted words", n, title, page, marks)
	if !regexp.MustCompile(`^p\. (5|[1-5]–([5-9]|10))$`).MatchString(page) {
		t.Errorf("citation [%d] shows %q, want page 5 (or a span that includes it)", n, page)
	}
	if !strings.Contains(title, "탄소중립") && !strings.Contains(title, "bill_2125318") {
		t.Errorf("source title %q is not the bill", title)
	}
	if marks == 0 {
		t.Error("the cited words are not highlighted in the passage")
	}
	dbg := eval[string](t, ctx, `(() => { const d = document.querySelector('.msg-assistant[data-state="done"] details.debug'); d.open = true; return d.textContent; })()`)
	if !strings.Contains(dbg, "vector") || !strings.Contains(dbg, "keyword") || !strings.Contains(dbg, "fused") || !strings.Contains(dbg, "retrieve") ||
		!strings.Contains(dbg, "rerank off") {
		t.Errorf("debug panel %q lacks scores or latency", dbg)
	}
	screenshot(t, ctx, "chat.png")

	// Phone width: nothing overflows sideways, the source panel is still reachable.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	if w := eval[int](t, ctx, `document.documentElement.scrollWidth`); w > 391 {
		t.Errorf("the chat page is %d px wide at a 390 px viewport", w)
	}
	if vis := eval[bool](t, ctx, `(() => { const r = document.getElementById('source-panel').getBoundingClientRect(); return r.width > 0 && r.top < innerHeight; })()`); !vis {
		t.Error("the source panel is not visible at phone width")
	}
	screenshot(t, ctx, "chat-phone.png")
	if len(*dialogs) > 0 {
		t.Errorf("dialogs opened: %q", *dialogs)
	}
}

// hostile is a document whose text tries every way into the page: an image with an error handler, a script
// element, a javascript: markdown link and an SVG onload, in the sentences that answer the question.
const hostile = `보안 점검 문서 XSSPROBE 입니다.

XSSPROBE 점검 코드와 점검 링크는 <img src=x onerror="window.__pwned=(window.__pwned||0)+1;document.title='PWNED'"> 이미지, <script>window.__pwned=(window.__pwned||0)+1</script> 스크립트, [여기를 누르세요](javascript:window.__pwned=(window.__pwned||0)+1) 링크, <a href="javascript:window.__pwned=1">두 번째 링크</a> 그리고 <svg onload="window.__pwned=1"></svg> 입니다.
`

func TestHostileDocumentIsInert(t *testing.T) {
	ctx, dialogs := browser(t)
	srv := startRagd(t)
	// As plain text the markup reaches the answer verbatim, so marked turns it into HTML and DOMPurify must
	// remove it; the source panel must show it as text.
	for _, name := range []string{"hostile.txt"} {
		body, _ := json.Marshal(map[string]any{"name": name, "title": "점검 " + name, "text": hostile})
		resp, err := http.Post(srv.URL+"/api/documents", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("ingest %s: %d %s", name, resp.StatusCode, b)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/documents")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the document to be ready", `document.querySelectorAll('#doc-rows tr[data-status="ready"]').length === 1`, 2*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	ask(t, ctx, "XSSPROBE 점검 코드와 점검 링크는 무엇인가요?")
	answer := eval[string](t, ctx, `document.querySelector('.msg-assistant[data-state="done"] .answer').innerHTML`)
	t.Logf("answer HTML: %s", answer)
	raw := eval[string](t, ctx, `(() => { const b = document.querySelector('.msg-assistant[data-state="done"] .answer button.cite'); b.click(); return document.getElementById('source-passage').textContent; })()`)
	if !strings.Contains(answer, "여기를 누르세요") || !strings.Contains(answer, "두 번째 링크") || !strings.Contains(raw, "onerror") || !strings.Contains(raw, "<script>") || !strings.Contains(raw, "](javascript:") {
		t.Fatalf("the hostile passages did not reach the page, so this test proves nothing: answer %s, passage %q", answer, raw)
	}

	// Open every citation (the passages are shown as text) and click every link the answer has.
	eval[bool](t, ctx, `(() => {
	  for (const b of document.querySelectorAll('.answer button.cite')) b.click();
	  for (const a of document.querySelectorAll('.answer a')) a.click();
	  return true;
	})()`)
	time.Sleep(500 * time.Millisecond) // let any image error or timer fire before looking

	checks := map[string]string{
		"a script ran":                `String(window.__pwned === undefined ? '' : window.__pwned)`,
		"the title was changed":       `document.title === 'PWNED' ? 'PWNED' : ''`,
		"an element has an on* attr":  `[...document.querySelectorAll('#conversation *, #source-panel *')].filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).map(e => e.outerHTML).join(' ')`,
		"a script element was added":  `[...document.querySelectorAll('#conversation script, #source-panel script')].map(e => e.outerHTML).join(' ')`,
		"a javascript: URL survived":  `[...document.querySelectorAll('#conversation [href], #conversation [src], #source-panel [href], #source-panel [src]')].filter(e => /^\s*javascript:/i.test(e.getAttribute('href') || e.getAttribute('src') || '')).map(e => e.outerHTML).join(' ')`,
		"an img or svg was rendered":  `[...document.querySelectorAll('#conversation img, #conversation svg, #source-panel img, #source-panel svg')].map(e => e.outerHTML).join(' ')`,
		"the source panel has markup": `[...document.querySelectorAll('#source-passage *')].filter(e => e.tagName !== 'MARK').map(e => e.outerHTML).join(' ')`,
	}
	for what, js := range checks {
		if got := eval[string](t, ctx, js); got != "" {
			t.Errorf("%s: %s", what, got)
		}
	}
	if len(*dialogs) > 0 {
		t.Errorf("dialogs opened: %q", *dialogs)
	}
	screenshot(t, ctx, "chat-hostile.png")
}

// TestKoreanIMEEnterDoesNotSend: Enter that confirms a Hangul composition must not send the question; the
// browser's composition events are dispatched as an IME does (keydown with isComposing, keyCode 229).
func TestKoreanIMEEnterDoesNotSend(t *testing.T) {
	ctx, _ := browser(t)
	srv := startRagd(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.ID("question"))); err != nil {
		t.Fatal(err)
	}
	sent := func() int {
		return eval[int](t, ctx, `document.querySelectorAll('#conversation .msg-user').length`)
	}
	for _, c := range []struct{ name, js string }{
		{"isComposing", `new KeyboardEvent('keydown', {key: 'Enter', isComposing: true, bubbles: true, cancelable: true})`},
		{"keyCode229", `new KeyboardEvent('keydown', {key: 'Enter', keyCode: 229, bubbles: true, cancelable: true})`},
		{"betweenCompositionEvents", `(q.dispatchEvent(new CompositionEvent('compositionstart', {data: ''})), new KeyboardEvent('keydown', {key: 'Enter', bubbles: true, cancelable: true}))`},
		{"rightAfterCompositionEnd", `(q.dispatchEvent(new CompositionEvent('compositionend', {data: '한'})), new KeyboardEvent('keydown', {key: 'Enter', bubbles: true, cancelable: true}))`},
	} {
		eval[bool](t, ctx, `(() => { const q = document.getElementById('question'); q.value = '한글 입력 중'; q.dispatchEvent(`+c.js+`); return true; })()`)
		if n := sent(); n != 0 {
			t.Fatalf("%s: Enter during composition sent the question", c.name)
		}
		if v := eval[string](t, ctx, `document.getElementById('question').value`); v != "한글 입력 중" {
			t.Fatalf("%s: the input was changed to %q", c.name, v)
		}
	}
	// After the composition has ended (a tick later), Enter sends.
	time.Sleep(50 * time.Millisecond)
	eval[bool](t, ctx, `document.getElementById('question').dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true, cancelable: true}))`)
	waitFor(t, ctx, "the question to be sent", `document.querySelectorAll('#conversation .msg-user').length === 1`, 10*time.Second)
	// Shift+Enter is a new line, never a send.
	eval[bool](t, ctx, `(() => { const q = document.getElementById('question'); q.value = 'x'; q.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', shiftKey: true, bubbles: true, cancelable: true})); return true; })()`)
	waitFor(t, ctx, "the answer", `document.querySelector('.msg-assistant[data-state="done"], .msg-assistant[data-state="error"]')`, time.Minute)
	if n := sent(); n != 1 {
		t.Fatalf("%d questions sent, want 1", n)
	}
}

// TestAPIKeyPrompt: with keys configured the UI asks for one, keeps it for the tab, and works with it.
func TestAPIKeyPrompt(t *testing.T) {
	ctx, _ := browser(t)
	srv := startRagd(t, "RAGD_API_KEYS=browser-test-key-1")
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/documents"),
		chromedp.WaitVisible(chromedp.ID("api-key-input")),
		chromedp.SendKeys(chromedp.ID("api-key-input"), "wrong-key"),
		chromedp.Click(chromedp.ID("api-key-save")),
	); err != nil {
		t.Fatal(err)
	}
	// A wrong key is refused: the prompt comes back and says so.
	waitFor(t, ctx, "the prompt to come back", `(document.querySelector('#key-dialog .hint') || {}).textContent?.includes('not valid')`, 10*time.Second)
	eval[bool](t, ctx, `(() => { document.getElementById('api-key-input').value = 'browser-test-key-1'; document.getElementById('api-key-save').click(); return true; })()`)
	waitFor(t, ctx, "the status line", `(document.getElementById('model-status').textContent || '').includes('generator:')`, 10*time.Second)
	if k := eval[string](t, ctx, `sessionStorage.getItem('ragd.apiKey')`); k != "browser-test-key-1" {
		t.Fatalf("sessionStorage key %q", k)
	}
	// The next page of the same tab does not ask again.
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the status line", `(document.getElementById('model-status').textContent || '').includes('generator:')`, 10*time.Second)
	if open := eval[bool](t, ctx, `!!document.getElementById('api-key-input')`); open {
		t.Fatal("the key prompt came back on the next page")
	}
}
