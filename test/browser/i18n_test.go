package browser

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/ragd/ragd/internal/fakeapi"
)

// mixedLanguage lists what a page shows in the other language than lang: in English any Hangul; in Korean
// any word (of three letters or more) that only the English table has. It reads every text node and the
// placeholder, title, aria-label, alt and data-label of every element, hidden ones too, except the data a
// page shows (the selectors below: document titles and text, questions and answers, names, server-made
// identifiers such as the embedding space) and the language toggle, which names the other language in that
// language. Both tables must hold the same keys.
const mixedLanguage = `((lang) => {
  const T = ragdI18n.TABLES;
  const values = (table) => Object.values(table).flatMap((v) => (typeof v === 'object' ? Object.values(v) : [v]));
  const keys = (table) => Object.keys(table).sort().join(',');
  if (keys(T.en) !== keys(T.ko)) {
    const en = new Set(Object.keys(T.en)), ko = new Set(Object.keys(T.ko));
    return ['tables differ: ' + [...en].filter((k) => !ko.has(k)).concat([...ko].filter((k) => !en.has(k))).join(', ')];
  }
  const koWords = new Set(values(T.ko).join(' ').toLowerCase().match(/[a-z]{3,}/g) || []);
  const english = new Set(values(T.en).join(' ').replace(/\{\w+\}/g, ' ').toLowerCase().match(/[a-z]{3,}/g).filter((w) => !koWords.has(w)));
  const hangul = /[\uac00-\ud7a3]/;
  const bad = (s) => (lang === 'en' ? hangul.test(s) : (s.toLowerCase().match(/[a-z]{3,}/g) || []).some((w) => english.has(w)));
  const DATA = [
    '#lang-toggle', 'script', 'style', 'code', '.msg-text', '.answer', '#source-title', '#source-doc', '#source-section',
    '#source-passage', '.conv-open', '.source-label', '.debug tbody td:nth-child(2)',
    '#status-lexical', '.doc-table .title', '.doc-table .sub', '#doc-title', '[data-fact="source"]', '[data-fact="type"]',
    '[data-fact="collection"]', '[data-fact="owner"]', '[data-fact="tags"]', '#version-rows td:nth-child(3)', '.chunk-text',
    '.chunk-section', '.hit-head a', '.hit-head .sub', '.hit-text', '#board-collection', '.question-link', '#thread-title',
    '#thread-body', '.answer-body', '#passage-title', '#passage-text', '#user-rows td:first-child', '#team-rows td:first-child',
    '#key-rows td:nth-child(-n+2)', '#audit-rows', '#principal-name', '#coll-options', '#doc-options', '#coll-picked',
    '#pg-collection option:not([value=""])', '#history-rows td:last-child', '.doc-error', '#a-action', '#a-principal', '#src-rows td.name', '.src-error',
  ].join(',');
  const out = [];
  const walker = document.createTreeWalker(document.documentElement, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (n.parentElement && n.parentElement.closest(DATA)) continue;
    if (bad(n.nodeValue)) out.push(n.parentElement.tagName + (n.parentElement.id ? '#' + n.parentElement.id : '') + ': ' + n.nodeValue.trim());
  }
  for (const e of document.querySelectorAll('*')) {
    if (e.closest(DATA) && e.id !== 'lang-toggle') continue;
    for (const a of ['placeholder', 'title', 'aria-label', 'alt', 'data-label']) {
      const v = e.getAttribute(a);
      if (v && bad(v)) out.push(e.tagName + (e.id ? '#' + e.id : '') + '[' + a + ']: ' + v);
    }
  }
  return out;
})`

// TestLanguageToggle: the UI's language is the browser's (Korean here) until the header's toggle picks
// one, which every page then keeps; on each page — chat (with an answer, its actions, debug panel and
// source panel), documents (with a folder source in its sources panel), a document's page, the search playground, the Q&A board and the admin page —
// no string of the other language remains, in either language, none scrolls sideways at 390 px, and no page
// logs a console error.
func TestLanguageToggle(t *testing.T) {
	ctx, _ := browser(t)
	const admin = "language-ui-bootstrap-admin-key-0123456789"
	srv := startRagd(t, "RAGD_ADMIN_KEY="+admin)
	// Data without Korean and without the UI's English words, so that what remains is the UI's own.
	code, body := srv.Call(t, admin, "POST", "/api/documents", map[string]any{"title": "zorblax turbines", "text": "Zorblax turbines spin quietly. Zorblax maintenance happens yearly, usually during spring inspections."})
	if code >= 300 {
		t.Fatalf("upload: %d %s", code, body)
	}
	if code, body := srv.Call(t, admin, "POST", "/api/questions", map[string]any{"collection": "default", "title": "Zorblax turbines spin quietly?"}); code >= 300 {
		t.Fatalf("question: %d %s", code, body)
	}
	// A folder source, for the documents page's sources panel.
	folder := t.TempDir()
	if err := os.WriteFile(filepath.Join(folder, "gales.md"), []byte("# Gales\n\nZorblax gales blow quietly."), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, body := srv.Call(t, admin, "POST", "/api/collections/default/sources", map[string]any{"kind": "folder", "path": folder}); code != http.StatusCreated {
		t.Fatalf("source: %d %s", code, body)
	}

	// A Korean browser.
	if _, err := chromedp.Call(ctx, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{
		UserAgent: "Mozilla/5.0 (X11; Linux x86_64) ragd-test", AcceptLanguage: "ko-KR,ko"}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/documents"), chromedp.WaitVisible(chromedp.ID("api-key-input")),
		chromedp.SendKeys(chromedp.ID("api-key-input"), admin), chromedp.Click(chromedp.ID("api-key-save"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the document to be ready", `document.querySelector('#doc-rows tr[data-status="ready"]')`, 2*time.Minute)
	if l := eval[string](t, ctx, `document.documentElement.lang + ' ' + (localStorage.getItem('ragd.lang') || '-')`); l != "ko -" {
		t.Fatalf("a Korean browser's page: lang and choice %q, want Korean by default", l)
	}
	docID := eval[string](t, ctx, `document.querySelector('#doc-rows tr[data-status="ready"]').dataset.id`)
	errs := consoleErrors(t, ctx) // from now on, signed in

	pages := []struct {
		name, path, ready string
		then              func()
	}{
		{"chat", "/", `document.getElementById('question')`, func() {
			if eval[int](t, ctx, `document.querySelectorAll('.msg-assistant[data-state="done"]').length`) == 0 {
				ask(t, ctx, "How often does Zorblax maintenance happen?")
			}
			waitFor(t, ctx, "the answer", `document.querySelector('.msg-assistant[data-state="done"] .answer-actions')`, time.Minute)
			if err := chromedp.Do(ctx, chromedp.Click(`.msg-assistant[data-state="done"] button.cite`, chromedp.NodeVisible)); err != nil {
				t.Fatal(err)
			}
			waitFor(t, ctx, "the source panel", `!document.getElementById('source-panel').hidden`, 10*time.Second)
		}},
		{"documents", "/documents", `document.querySelector('#doc-rows tr[data-status="ready"]') && document.querySelector('#src-rows tr[data-status="in sync"]')`, nil},
		{"document", "/documents/" + docID, `document.querySelector('#chunks .chunk') && document.querySelector('#history-rows tr')`, nil},
		{"search", "/search?q=zorblax+maintenance", `document.querySelector('#pg-hits .hit')`, nil},
		{"board", "/board?collection=default", `document.querySelector('#questions .question-link')`, func() {
			if err := chromedp.Do(ctx, chromedp.Click(`#questions .question-link`, chromedp.NodeVisible)); err != nil {
				t.Fatal(err)
			}
			waitFor(t, ctx, "the thread", `!document.getElementById('thread').hidden`, 10*time.Second)
		}},
		{"admin", "/admin", `document.querySelector('#user-rows tr') && document.querySelector('#key-rows tr')`, nil},
	}
	check := func(lang string) {
		t.Helper()
		for _, p := range pages {
			if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+p.path)); err != nil {
				t.Fatal(err)
			}
			waitFor(t, ctx, p.name+" to load", p.ready, time.Minute)
			if p.then != nil {
				p.then()
			}
			if got := eval[string](t, ctx, `document.documentElement.lang`); got != lang {
				t.Errorf("%s: lang %q, want %q", p.name, got, lang)
			}
			if mixed := eval[[]string](t, ctx, mixedLanguage+`(`+jsString(lang)+`)`); len(mixed) > 0 {
				t.Errorf("%s in %s shows the other language: %q", p.name, lang, mixed)
			}
			screenshot(t, ctx, fmt.Sprintf("lang-%s-%s.png", p.name, lang))
			// The other language's words are longer or shorter: no page scrolls sideways on a phone in either.
			noOverflowAt390(t, ctx, p.name+" in "+lang, fmt.Sprintf("lang-%s-%s-390.png", p.name, lang))
		}
	}
	check("ko")
	if s := eval[string](t, ctx, `document.querySelector('#nav-admin').textContent + ' ' + document.querySelector('.topbar nav a').textContent`); s != "관리 채팅" {
		t.Errorf("Korean navigation: %q", s)
	}
	// The toggle: English, remembered for this browser (a new page load keeps it).
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("lang-toggle"), chromedp.NodeVisible), chromedp.Sleep(time.Second),
		chromedp.WaitVisible(chromedp.ID("lang-toggle"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the English page", `document.documentElement.lang === 'en' && document.getElementById('lang-toggle') && document.getElementById('lang-toggle').textContent === '한국어'`, 20*time.Second)
	if s := eval[string](t, ctx, `localStorage.getItem('ragd.lang')`); s != "en" {
		t.Fatalf("the choice is not remembered: %q", s)
	}
	check("en")
	if s := eval[string](t, ctx, `document.querySelector('.topbar nav a').textContent`); s != "Chat" {
		t.Errorf("English navigation: %q", s)
	}
	if e := errs(); len(e) > 0 {
		t.Fatalf("console errors: %q", e)
	}
}

// TestCodeHighlighting: a code block in an answer (from a hosted generator, the OpenAI wire-format fake) and
// the code in a document's passages are highlighted by web/highlight.js — keywords, strings, comments and
// numbers in spans of their own, the code's text unchanged — with no console error.
func TestCodeHighlighting(t *testing.T) {
	ctx, _ := browser(t)
	errs := consoleErrors(t, ctx)
	fake := fakeapi.NewOpenAI("sk-test")
	t.Cleanup(fake.Close)
	goCode := "func spin(n int) string {\n\t// turn the rotor\n\treturn fmt.Sprint(\"rpm\", n*60)\n}"
	fake.SetAnswer(func(string) string {
		return "The rotor turns like this [1]:\n\n```go\n" + goCode + "\n```\n"
	})
	srv := startRagd(t, "RAGD_GENERATOR=openai", "RAGD_GENERATE_MODEL=gpt-4o-mini", "OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL="+fake.BaseURL())
	code, body := srv.Call(t, "", "POST", "/api/documents", map[string]any{"title": "rotor notes", "text": "How the rotor turns, in Go:\n\n```go\n" + goCode + "\n```\n\nThe rotor turns sixty times a minute."})
	if code >= 300 {
		t.Fatalf("upload: %d %s", code, body)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.ID("question"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the document", `fetch('/api/documents?status=ready').then((r) => r.json()).then((b) => b.total === 1)`, time.Minute)
	ask(t, ctx, "How does the rotor turn?")
	tokens := func(sel string) map[string]string {
		t.Helper()
		waitFor(t, ctx, sel, `document.querySelector(`+jsString(sel)+`)`, 30*time.Second)
		return eval[map[string]string](t, ctx, `(() => { const c = document.querySelector(`+jsString(sel)+`); const o = {text: c.textContent};
		  for (const s of c.querySelectorAll('span[class^="hl-"]')) o[s.className] = (o[s.className] ? o[s.className] + '|' : '') + s.textContent; return o; })()`)
	}
	want := map[string][]string{"hl-kw": {"func", "return"}, "hl-type": {"int", "string"}, "hl-com": {"// turn the rotor"}, "hl-str": {`"rpm"`}, "hl-num": {"60"}, "hl-fn": {"spin", "Sprint"}}
	checkTokens := func(where string, got map[string]string) {
		t.Helper()
		if !strings.Contains(got["text"], goCode) {
			t.Errorf("%s: the code's text changed: %q", where, got["text"])
		}
		for cls, words := range want {
			for _, w := range words {
				if !strings.Contains("|"+got[cls]+"|", "|"+w+"|") {
					t.Errorf("%s: %q is not a %s token: %v", where, w, cls, got)
				}
			}
		}
	}
	checkTokens("answer", tokens(`.msg-assistant[data-state="done"] .answer pre code.hl`))
	if lang := eval[string](t, ctx, `document.querySelector('.answer pre code.hl').dataset.lang`); lang != "go" {
		t.Errorf("answer code language %q", lang)
	}
	// The document page: the passage's fenced block; the search playground: the hit's.
	var doc string
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/documents"), chromedp.WaitVisible(`#doc-rows a.title`)); err != nil {
		t.Fatal(err)
	}
	doc = eval[string](t, ctx, `document.querySelector('#doc-rows a.title').getAttribute('href')`)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+doc)); err != nil {
		t.Fatal(err)
	}
	checkTokens("document page", tokens(`#chunks .chunk-text code.hl-block`))
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/search?q=rotor+spin"), chromedp.WaitVisible(`#pg-hits .hit`)); err != nil {
		t.Fatal(err)
	}
	checkTokens("search playground", tokens(`#pg-hits .hit-text code.hl-block`))
	// Marked output without a known language stays plain text; a hostile "language" is inert.
	if got := eval[string](t, ctx, `(() => { const c = document.createElement('code'); ragdHighlight.fill(c, '<img src=x onerror=alert(1)>', 'nosuchlang'); return c.innerHTML; })()`); got != "&lt;img src=x onerror=alert(1)&gt;" {
		t.Errorf("unknown language: %q", got)
	}
	if e := errs(); len(e) > 0 {
		t.Fatalf("console errors: %q", e)
	}
}
