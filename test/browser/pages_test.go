package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ragd/ragd/internal/testkit"
)

// noOverflowAt390 checks that the page does not scroll sideways on a phone, then restores the window size.
func noOverflowAt390(t *testing.T, ctx context.Context, page, shot string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // relayout; images re-fit
	if w := eval[int](t, ctx, `document.scrollingElement.scrollWidth`); w > 390 {
		wide := eval[string](t, ctx, `[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > 391).slice(0, 5).map((e) => e.tagName + '.' + e.className + '#' + e.id).join(' ')`)
		t.Errorf("%s is %d px wide at a 390 px viewport (too wide: %s)", page, w, wide)
	}
	screenshot(t, ctx, shot)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
}

// TestCitationShowsPageImage: a citation of a PDF passage opens the source panel with the page it came from
// rendered as an image (GET /api/documents/{id}/pages/{n}.png), the page the citation names, and a link to
// the document page at that chunk.
func TestCitationShowsPageImage(t *testing.T) {
	ctx, _ := browser(t)
	errs := consoleErrors(t, ctx)
	srv := serveIngested(t, "pdf/bill_2125318_original.pdf")
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	ask(t, ctx, "시행일은 공포 후 몇 개월인가요?")
	eval[bool](t, ctx, `(() => { document.querySelector('.msg-assistant[data-state="done"] .answer button.cite').click(); return true; })()`)
	waitFor(t, ctx, "the page image", `(document.querySelector('#source-figure') || {}).dataset?.state === 'ready'`, time.Minute)
	img := eval[map[string]any](t, ctx, `(() => {
	  const i = document.querySelector('#source-figure img.page-image');
	  return {src: i.src.slice(0, 22), w: i.naturalWidth, h: i.naturalHeight, shown: i.getBoundingClientRect().width,
	    page: document.getElementById('source-figure').dataset.page, cited: document.getElementById('source-page').textContent,
	    label: document.querySelector('#source-figure .page-label').textContent,
	    href: document.getElementById('source-open-document').getAttribute('href'), alt: i.alt};
	})()`)
	t.Logf("page image: %v", img)
	if img["src"] != "data:image/png;base64," || img["w"].(float64) < 200 || img["h"].(float64) <= img["w"].(float64) || img["shown"].(float64) < 100 {
		t.Fatalf("the source panel shows no rendered page: %v", img)
	}
	cited := regexp.MustCompile(`p\. (\d+)`).FindStringSubmatch(img["cited"].(string))
	if cited == nil || img["page"] != cited[1] || !strings.HasPrefix(img["label"].(string), "p. "+cited[1]+" / 10") {
		t.Errorf("the image is page %v (%v) but the citation says %v", img["page"], img["label"], img["cited"])
	}
	if !regexp.MustCompile(`^/documents/[^/?]+\?page=\d+&chunk=\d+$`).MatchString(img["href"].(string)) {
		t.Errorf("open-document link %v", img["href"])
	}
	// The cited words are marked on the page too, over the image.
	waitFor(t, ctx, "the marks on the page", `Number(document.getElementById('source-figure').dataset.marks) > 0`, 30*time.Second)
	inside := eval[bool](t, ctx, `(() => {
	  const i = document.querySelector('#source-figure img.page-image').getBoundingClientRect();
	  return [...document.querySelectorAll('#source-figure .page-mark')].every((m) => {
	    const r = m.getBoundingClientRect();
	    return r.width > 10 && r.height > 3 && r.left >= i.left - 1 && r.right <= i.right + 1 && r.top >= i.top - 1 && r.bottom <= i.bottom + 1;
	  });
	})()`)
	if !inside {
		t.Error("a mark lies outside the page image")
	}
	// The next page, and back.
	eval[bool](t, ctx, `(() => { document.querySelector('#source-figure .page-next').click(); return true; })()`)
	waitFor(t, ctx, "the next page", fmt.Sprintf(`document.getElementById('source-figure').dataset.page === '%d' && document.getElementById('source-figure').dataset.state === 'ready'`, atoi(cited[1])+1), 30*time.Second)
	screenshot(t, ctx, "chat-source-page.png")

	// A citation of a non-PDF source shows no page (checked on the same panel with a Markdown source).
	eval[bool](t, ctx, `(() => { sourcePage.show(document.getElementById('source-panel'), {media_type: 'text/markdown', page_start: 0, document_id: 'x'}); return true; })()`)
	if n := eval[int](t, ctx, `document.querySelectorAll('#source-panel .page-viewer').length`); n != 0 {
		t.Errorf("a Markdown source left %d page viewers", n)
	}
	eval[bool](t, ctx, `(() => { document.querySelector('.msg-assistant[data-state="done"] .answer button.cite').click(); return true; })()`)
	waitFor(t, ctx, "the page image again", `(document.querySelector('#source-figure') || {}).dataset?.state === 'ready'`, 30*time.Second)
	noOverflowAt390(t, ctx, "the chat with a page image", "chat-source-page-phone.png")
	if e := errs(); len(e) > 0 {
		t.Errorf("console errors: %q", e)
	}
}

// evalAsync evaluates js and waits for the promise it returns.
func evalAsync[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

func atoi(s string) int {
	n := 0
	fmt.Sscan(s, &n)
	return n
}

// TestDocumentPage: the documents list links each title to its page, which shows the document's facts, its
// version, every chunk with page, section and tokens, the PDF's pages beside them (a chunk's "show page"
// turns to its page), and a download of the original.
func TestDocumentPage(t *testing.T) {
	ctx, _ := browser(t)
	errs := consoleErrors(t, ctx)
	srv := serveIngested(t, "pdf/bill_2125318_original.pdf", "md/ko_react_render-and-commit.md")
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/documents")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the list", `document.querySelectorAll('#doc-rows tr[data-status="ready"]').length === 2`, 30*time.Second)
	href := eval[string](t, ctx, `[...document.querySelectorAll('#doc-rows a.title')].find((a) => a.closest('tr').textContent.includes('PDF')).getAttribute('href')`)
	if !strings.HasPrefix(href, "/documents/") {
		t.Fatalf("the title links to %q", href)
	}
	// The list re-renders its rows while documents report progress, so a click can land on a row just
	// replaced (under load the test waited out its whole deadline that way): follow the link by its href,
	// which the line above checked.
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+href), chromedp.WaitVisible(`#doc-facts dd`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the chunks", `document.querySelectorAll('#chunks .chunk').length > 0`, 30*time.Second)
	waitFor(t, ctx, "the first page", `(document.querySelector('#page-viewer') || {}).dataset?.state === 'ready'`, time.Minute)

	facts := eval[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll('#doc-facts dd')].map((d) => [d.dataset.fact, d.textContent]))`)
	chunks := eval[[]map[string]string](t, ctx, `[...document.querySelectorAll('#chunks .chunk')].map((c) => ({
	  pages: (c.querySelector('.chunk-pages') || {}).textContent || '', tokens: c.querySelector('.chunk-tokens').textContent,
	  section: (c.querySelector('.chunk-section') || {}).textContent || '', text: c.querySelector('.chunk-text').textContent}))`)
	t.Logf("facts %v; %d chunks, first %v", facts, len(chunks), chunks[0])
	if facts["type"] != "application/pdf" || !strings.HasPrefix(facts["status"], "ready") || facts["version"] != "1" {
		t.Errorf("facts %v", facts)
	}
	if fmt.Sprint(len(chunks)) != facts["chunks"] {
		t.Errorf("%d chunks listed, the document has %s", len(chunks), facts["chunks"])
	}
	sections := 0
	for i, c := range chunks {
		if !regexp.MustCompile(`^p\. \d+(–\d+)?$`).MatchString(c["pages"]) || !regexp.MustCompile(`^[1-9]\d* tokens$`).MatchString(c["tokens"]) || c["text"] == "" {
			t.Errorf("chunk %d: %v", i, c)
		}
		if c["section"] != "" {
			sections++
		}
	}
	if sections == 0 {
		t.Error("no chunk shows a section")
	}
	if v := eval[int](t, ctx, `document.querySelectorAll('#version-rows tr').length`); v != 1 {
		t.Errorf("%d versions listed, want 1", v)
	}
	// "show page" of a chunk on a later page turns the viewer to it.
	// "show page" of a chunk on one later page turns the viewer to it and marks the chunk there.
	page := eval[string](t, ctx, `(() => { const c = [...document.querySelectorAll('#chunks .chunk')].find((c) => Number(c.dataset.page) > 2 && !c.querySelector('.chunk-pages').textContent.includes('–') && c.querySelector('.chunk-text').textContent.length > 200); c.querySelector('.chunk-show-page').click(); return c.dataset.page; })()`)
	waitFor(t, ctx, "page "+page, fmt.Sprintf(`document.getElementById('page-viewer').dataset.page === %q && document.getElementById('page-viewer').dataset.state === 'ready'`, page), 30*time.Second)
	waitFor(t, ctx, "the chunk marked on its page", `Number(document.getElementById('page-viewer').dataset.marks) > 0`, 30*time.Second)
	if sel := eval[string](t, ctx, `document.querySelector('#chunks .chunk.selected').dataset.page`); sel != page {
		t.Errorf("the selected chunk is on page %s, want %s", sel, page)
	}
	// The download is the original file, named as it was uploaded.
	dl := evalAsync[string](t, ctx, `fetch(document.getElementById('doc-download').href).then(async (r) => r.status + ' ' + r.headers.get('content-type') + ' ' + r.headers.get('content-disposition') + ' ' + (await r.arrayBuffer()).byteLength)`)
	if !strings.HasPrefix(dl, "200 application/pdf attachment; filename=\"bill_2125318_original.pdf\"") {
		t.Errorf("download: %s", dl)
	}
	screenshot(t, ctx, "document.png")
	noOverflowAt390(t, ctx, "the document page", "document-phone.png")

	// ?page and ?chunk (the chat's link) open that page and select that chunk.
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+href+"?page=3&chunk=2")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "page 3", `(document.querySelector('#page-viewer') || {}).dataset?.page === '3' && document.querySelector('#chunks .chunk.selected')?.dataset.index === '2'`, 30*time.Second)

	// A Markdown document: chunks with sections, no page viewer.
	md := evalAsync[string](t, ctx, `fetch('/api/documents?type=markdown').then((r) => r.json()).then((b) => b.documents[0].id)`)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/documents/"+md)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the Markdown chunks", `document.querySelectorAll('#chunks .chunk').length > 0`, 30*time.Second)
	if shown := eval[bool](t, ctx, `!document.getElementById('pages-card').hidden || !!document.querySelector('.chunk-show-page')`); shown {
		t.Error("a Markdown document shows a page viewer")
	}
	// An unknown document says so.
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/documents/no-such-id")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the error", `!document.getElementById('doc-error').hidden`, 10*time.Second)
	if e := eval[string](t, ctx, `document.getElementById('doc-error').textContent`); !strings.Contains(e, "Not found.") {
		t.Errorf("unknown document: %q", e)
	}
	// The API's 404 for the unknown document is logged by the browser as a failed load; nothing else may be.
	for _, e := range errs() {
		if !strings.Contains(e, "/api/documents/no-such-id") {
			t.Errorf("console error: %s", e)
		}
	}
}

// TestSearchPlayground: /search runs a search with filters and shows each hit's vector, keyword, fused and
// final scores; the form is kept in the address; a bad k shows the API's error.
func TestSearchPlayground(t *testing.T) {
	ctx, _ := browser(t)
	errs := consoleErrors(t, ctx)
	srv := serveIngested(t, "pdf/bill_2125318_original.pdf", "md/ko_react_render-and-commit.md")
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/search"), chromedp.WaitVisible(chromedp.ID("pg-query")),
		chromedp.SendKeys(chromedp.ID("pg-query"), "탄소중립 녹색성장 위원회\n")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the hits", `document.querySelectorAll('#pg-hits .hit').length > 0`, 30*time.Second)
	hits := eval[[]map[string]string](t, ctx, `[...document.querySelectorAll('#pg-hits .hit')].map((h) => Object.fromEntries(
	  [['title', h.querySelector('.hit-head a').textContent], ...[...h.querySelectorAll('.score')].map((s) => [s.dataset.score, s.querySelector('b').textContent + ' ' + ((s.querySelectorAll('span')[1] || {}).textContent || '')])]))`)
	t.Logf("%d hits, first %v; summary %q", len(hits), hits[0], eval[string](t, ctx, `document.getElementById('pg-summary').textContent`))
	if len(hits) > 10 {
		t.Errorf("%d hits for k=10", len(hits))
	}
	number := regexp.MustCompile(`^\d+\.\d+`)
	first := hits[0]
	for _, s := range []string{"final", "fused", "vector", "keyword"} {
		if !number.MatchString(first[s]) {
			t.Errorf("the first hit's %s score is %q", s, first[s])
		}
	}
	if !strings.Contains(first["vector"], "rank ") || !strings.Contains(first["keyword"], "rank ") {
		t.Errorf("ranks missing: %v", first)
	}
	if !strings.Contains(first["title"], "bill_2125318") && !strings.Contains(first["title"], "탄소중립") {
		t.Errorf("the first hit is %q, want the bill", first["title"])
	}
	if s := eval[string](t, ctx, `document.getElementById('pg-summary').textContent`); !strings.Contains(s, "candidates: vector") || !strings.Contains(s, "total") {
		t.Errorf("summary %q", s)
	}
	if q := eval[string](t, ctx, `location.search`); !strings.Contains(q, "q=") {
		t.Errorf("the address %q does not keep the query", q)
	}

	// Only Markdown: every hit is the React page.
	eval[bool](t, ctx, `(() => { document.getElementById('pg-query').value = '렌더링 커밋'; document.getElementById('pg-type').value = 'markdown'; document.getElementById('pg-run').click(); return true; })()`)
	waitFor(t, ctx, "the Markdown hits", `[...document.querySelectorAll('#pg-hits .hit .sub')].length > 0 && [...document.querySelectorAll('#pg-hits .hit .sub')].every((s) => s.textContent.includes('text/markdown'))`, 30*time.Second)

	// Reloading the address runs the same search.
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the search after reload", `document.getElementById('pg-type').value === 'markdown' && document.querySelectorAll('#pg-hits .hit').length > 0`, 30*time.Second)
	screenshot(t, ctx, "search.png")
	noOverflowAt390(t, ctx, "the search playground", "search-phone.png")

	// k over the API's limit: the API's error, shown.
	eval[bool](t, ctx, `(() => { document.getElementById('pg-k').value = '101'; document.getElementById('pg-run').click(); return true; })()`)
	waitFor(t, ctx, "the error", `!!document.getElementById('pg-error')`, 10*time.Second)
	if e := eval[string](t, ctx, `document.getElementById('pg-error').textContent`); !strings.Contains(e, "Invalid request.") {
		t.Errorf("k=101: %q", e)
	}
	for _, e := range errs() {
		if !strings.Contains(e, "/api/search") { // the 400 of k=101 is a failed load in the browser's log
			t.Errorf("console error: %s", e)
		}
	}
}

// TestPagesWithAPIKey: with API keys the page images, the marks and the download are fetched with the tab's
// key (an <img src> or a plain link could not send it).
func TestPagesWithAPIKey(t *testing.T) {
	ctx, _ := browser(t)
	errs := consoleErrors(t, ctx)
	const key = "pages-test-key-1"
	srv := startRagd(t, "RAGD_API_KEYS="+key)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", "bill_2125318_original.pdf")
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(testkit.Fixture(t, "pdf/bill_2125318_original.pdf"))
	mw.Close()
	call := func(method, path string, r io.Reader, ctype string) []byte {
		req, err := http.NewRequest(method, srv.URL+path, r)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-RAG-API-Key", key)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
		return b
	}
	var up struct {
		Documents []struct{ ID string } `json:"documents"`
	}
	if err := json.Unmarshal(call("POST", "/api/documents", &body, mw.FormDataContentType()), &up); err != nil || len(up.Documents) != 1 {
		t.Fatalf("upload: %v %+v", err, up)
	}
	id := up.Documents[0].ID
	testkit.WaitFor(t, "the document to be ready", 2*time.Minute, func() bool {
		return strings.Contains(string(call("GET", "/api/documents/"+id, nil, "")), `"status":"ready"`)
	})
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/documents/"+id+"?chunk=3"),
		chromedp.WaitVisible(chromedp.ID("api-key-input")), chromedp.SendKeys(chromedp.ID("api-key-input"), key),
		chromedp.Click(chromedp.ID("api-key-save"))); err != nil {
		t.Fatal(err)
	}
	// ?chunk=3 alone opens that chunk's page (3) with the chunk marked on it.
	waitFor(t, ctx, "the page with its marks", `(document.querySelector('#page-viewer') || {}).dataset?.page === '3' && Number(document.getElementById('page-viewer').dataset.marks) > 0`, time.Minute)
	dl := evalAsync[string](t, ctx, `new Promise((resolve) => {
	  const orig = URL.createObjectURL;
	  URL.createObjectURL = (b) => { resolve(b.type + ' ' + b.size); return orig(b); };
	  document.getElementById('doc-download').click();
	})`)
	if !strings.HasPrefix(dl, "application/pdf ") || dl == "application/pdf 0" {
		t.Errorf("download with the key: %q", dl)
	}
	for _, e := range errs() {
		// The first requests, before the key was entered, were refused: the browser logs those loads.
		if !strings.Contains(e, "401") {
			t.Errorf("console error: %s", e)
		}
	}
}
