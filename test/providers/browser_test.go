package providers

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/testkit"
)

// browser starts headless chromium (installed by scripts/test.sh; the test is skipped without it) and
// returns a tab context.
func browser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (scripts/test.sh installs it with apt-get)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.Flag("no-first-run", true), chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() {
		cancelTimeout()
		cancelCtx()
		cancelAlloc()
	})
	// Start the browser now, with the test's context (not a derived one with a timeout).
	run(t, ctx, chromedp.Navigate("about:blank"))
	return ctx
}

func run(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

func evalJS[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

func waitJS(t *testing.T, ctx context.Context, what, js string, timeout time.Duration) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](js, chromedp.WithPollingInterval(100*time.Millisecond),
		chromedp.WithPollingTimeout(timeout))); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := testkit.OutDir(t, "providers")
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, name), buf, 0o644); err != nil {
		t.Error(err)
	}
}

// TestBrowserWeakSentencesAndReembed drives the UI of the real binary: an answer with weakly supported
// sentences (one in a list item, one across bold text) shows them underlined with a title and keeps their
// citations clickable; after a change of embedder the header shows the re-embed's progress and the space
// searched, then the new embedder once it completes.
func TestBrowserWeakSentencesAndReembed(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	f := newFakes(t)
	data := t.TempDir()
	env := []string{"RAGD_GENERATOR=openai", "OPENAI_API_KEY=" + openaiKey, "OPENAI_BASE_URL=" + f.openai.BaseURL()}
	p := serve(t, data, env...)
	waitReady(t, p.URL, upload(t, p.URL, fixture(t, "html/en_wikipedia_mozilla.html")), time.Minute)

	const (
		weakList = "The browser was first written in Klingon by astronauts [1]."
		weakBold = "Its **mascot** is a purple hippo [1]."
	)
	f.openai.SetAnswer(func(prompt string) string {
		return quoteAnswer(prompt) + "\n\n- " + weakList + "\n- " + weakBold + " Also see [9]."
	})
	run(t, ctx, chromedp.Navigate(p.URL+"/"), chromedp.WaitVisible(chromedp.ID("question")),
		chromedp.SendKeys(chromedp.ID("question"), mozillaQuestion+kb.Enter))
	waitJS(t, ctx, "the answer", `document.querySelector('.msg-assistant[data-state="done"]') !== null`, 30*time.Second)

	type weak struct {
		Text, Title, Parent string
		Cites               int
	}
	got := evalJS[[]weak](t, ctx, `[...document.querySelectorAll('.msg-assistant .answer')].pop().querySelectorAll('li').length === 2 &&
		[...document.querySelectorAll('.weak-support')].map((s) => ({Text: s.textContent, Title: s.title,
			Parent: s.parentElement.tagName, Cites: s.querySelectorAll('button.cite').length}))`)
	// The bold sentence is marked in three pieces (before, inside and after <strong>): join them.
	joined := map[string]bool{}
	var cur strings.Builder
	for _, w := range got {
		if !strings.Contains(w.Title, "Weakly supported") {
			t.Fatalf("weak span without its explanation: %+v", w)
		}
		cur.WriteString(w.Text)
		if strings.HasSuffix(w.Text, ".") {
			joined[cur.String()] = true
			cur.Reset()
		}
	}
	if !joined[weakList] || !joined["Its mascot is a purple hippo [1]."] || len(joined) != 2 {
		t.Fatalf("weak sentences marked: %+v", got)
	}
	if n := evalJS[int](t, ctx, `document.querySelectorAll('.weak-support button.cite').length`); n != 2 {
		t.Fatalf("%d citations left clickable inside the weak sentences, want 2", n)
	}
	mustContain(t, "citation notes", evalJS[string](t, ctx, `[...document.querySelectorAll('.citation-note')].map((e) => e.textContent).join('\n')`),
		"2 weakly supported sentences", "1 citation to a passage that was not given was removed")
	screenshot(t, ctx, "weak-sentences.png")
	p.Stop(t)

	// Restart with the OpenAI embedder: the first embedding call is held, so the re-embed is visibly running.
	f.openai.FailNext(1, fakeapi.Fault{Delay: 6 * time.Second})
	p = serve(t, data, append(env, "RAGD_EMBEDDER=openai")...)
	run(t, ctx, chromedp.Navigate(p.URL+"/"))
	waitJS(t, ctx, "the re-embed in the header", `document.getElementById('status-reembed') !== null`, 10*time.Second)
	line := evalJS[string](t, ctx, `document.getElementById('model-status').textContent`)
	mustContain(t, "header", line, "embedder: openai/text-embedding-3-small/1536", "re-embedding", "search: hash/v1/768", "generator: openai/gpt-4.1-mini")
	screenshot(t, ctx, "reembed-running.png")
	waitJS(t, ctx, "the end of the re-embed", `document.getElementById('status-reembed') === null &&
		document.getElementById('status-embedder') !== null`, 90*time.Second)
	mustContain(t, "header", evalJS[string](t, ctx, `document.getElementById('model-status').textContent`), "embedder: openai/text-embedding-3-small/1536")
}
