package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/testkit"
)

// consoleErrors records the page's uncaught exceptions, console.error calls and the browser's error log
// entries (a failed request such as a missing /favicon.ico is one), from now on.
func consoleErrors(t *testing.T, ctx context.Context) func() []string {
	t.Helper()
	var mu sync.Mutex
	var out []string
	add := func(s string) {
		mu.Lock()
		out = append(out, s)
		mu.Unlock()
	}
	watch := func(seq func(yield func(string) bool)) { go seq(func(s string) bool { add(s); return true }) }
	exceptions := chromedp.Events(ctx, runtime.ExceptionThrown)
	consoles := chromedp.Events(ctx, runtime.ConsoleAPICalled)
	logs := chromedp.Events(ctx, log.EntryAdded)
	watch(func(yield func(string) bool) {
		for ev, err := range exceptions {
			if err != nil {
				return
			}
			d := ev.ExceptionDetails
			text := d.Text
			if d.Exception != nil {
				text += " " + d.Exception.Description
			}
			if !yield("exception: " + text) {
				return
			}
		}
	})
	watch(func(yield func(string) bool) {
		for ev, err := range consoles {
			if err != nil {
				return
			}
			if ev.Type == runtime.ConsoleAPICalledTypeError {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				if !yield("console.error: " + strings.Join(parts, " ")) {
					return
				}
			}
		}
	})
	watch(func(yield func(string) bool) {
		for ev, err := range logs {
			if err != nil {
				return
			}
			if ev.Entry.Level == log.EntryLevelError && !yield(fmt.Sprintf("log: %s %s", ev.Entry.Text, ev.Entry.URL)) {
				return
			}
		}
	})
	if _, err := chromedp.Call(ctx, log.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), out...)
	}
}

// conversationOf reads a conversation through the API.
func conversationOf(t *testing.T, base, id string) (title string, messages []string) {
	t.Helper()
	resp, err := http.Get(base + "/api/conversations/" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var c struct {
		Title    string
		Messages []struct{ Role, Content string }
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET conversation %s: %d", id, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Messages {
		messages = append(messages, m.Role+": "+m.Content)
	}
	return c.Title, messages
}

// TestConversationSurvivesReload: a question asked in the chat is kept on the server: after a reload the
// sidebar lists the conversation and the answer is shown again with its citations. Copy puts the answer's
// markdown on the clipboard, regenerate replaces the answer, edit-and-resend replaces the question and its
// answer, renaming and deleting in the sidebar reach the server — and no page logs an error.
func TestConversationSurvivesReload(t *testing.T) {
	ctx, _ := browser(t)
	srv := serveIngested(t, "pdf/bill_2125318_original.pdf")
	errs := consoleErrors(t, ctx)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	const q = "시행일은 공포 후 몇 개월인가요?"
	ask(t, ctx, q)
	done := `.msg-assistant[data-state="done"]`
	answer := eval[string](t, ctx, `document.querySelector('`+done+` .answer').textContent`)
	waitFor(t, ctx, "the sidebar to list the conversation", `document.querySelectorAll('#conv-list .conv-item').length === 1 && document.querySelector('#conv-list .conv-open').textContent.includes('시행일')`, 30*time.Second)
	id := eval[string](t, ctx, `document.querySelector('#conv-list .conv-item').dataset.id`)

	// Chips read in citation order: [1], [2], … whatever the passages' ranks.
	labels := eval[[]string](t, ctx, `[...document.querySelectorAll('`+done+` .answer button.cite')].map((b) => b.dataset.label)`)
	seen := map[string]bool{}
	next := 1
	for _, l := range labels {
		if !seen[l] {
			if l != fmt.Sprint(next) {
				t.Fatalf("citation chips %v are not numbered in order", labels)
			}
			seen[l] = true
			next++
		}
	}

	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the conversation after the reload", `document.querySelector('`+done+` .answer')`, 30*time.Second)
	if got := eval[string](t, ctx, `document.querySelector('`+done+` .answer').textContent`); got != answer {
		t.Fatalf("after the reload the answer reads %q, want %q", got, answer)
	}
	if got := eval[string](t, ctx, `document.querySelector('.msg-user .msg-text').textContent`); got != q {
		t.Fatalf("after the reload the question reads %q", got)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('`+done+` .answer button.cite').length`); n == 0 {
		t.Fatal("the reloaded answer has no citations")
	}
	if dbg := eval[string](t, ctx, `document.querySelector('`+done+` details.debug').textContent`); !strings.Contains(dbg, "generator extractive") || !strings.Contains(dbg, "passages") {
		t.Fatalf("the reloaded answer's debug panel lost its details: %q", dbg)
	}
	src := eval[string](t, ctx, `(() => { document.querySelector('`+done+` .answer button.cite').click(); return document.getElementById('source-title').textContent; })()`)
	if !strings.Contains(src, "bill_2125318") {
		t.Fatalf("the reloaded citation opens %q", src)
	}
	if eval[string](t, ctx, `document.querySelector('#conv-list .conv-item').getAttribute('aria-current')`) != "true" {
		t.Error("the sidebar does not mark the open conversation")
	}

	// Copy: the answer's markdown.
	eval[bool](t, ctx, `(() => { window.__copied = null; navigator.clipboard.writeText = async (t) => { window.__copied = t; }; return true; })()`)
	if err := chromedp.Do(ctx, chromedp.Click(done+` .answer-actions .copy`, chromedp.NodeVisible)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the copy", `window.__copied !== null`, 10*time.Second)
	copied := eval[string](t, ctx, `window.__copied`)
	// The answer's markdown, numbered as its chips are, then the sources it cites with their pages.
	if !strings.Contains(copied, "[1]") || strings.Contains(copied, "<") || !strings.Contains(copied, "\n\n[1] ") || !strings.Contains(copied, ", p. ") {
		t.Errorf("copied %q, want the answer's markdown with its citations and a list of its sources", copied)
	}

	// Shortcuts: / focuses the question box; Ctrl+Shift+C copies the last answer.
	eval[bool](t, ctx, `(() => { document.activeElement.blur(); window.__copied = null; return true; })()`)
	if err := chromedp.Do(ctx, chromedp.KeyEvent("/")); err != nil {
		t.Fatal(err)
	}
	if got := eval[string](t, ctx, `document.activeElement.id + '|' + document.getElementById('question').value`); got != "question|" {
		t.Errorf("after /, focus and question box: %q, want the empty question box focused", got)
	}
	eval[bool](t, ctx, `(() => { document.activeElement.blur(); return true; })()`)
	if err := chromedp.Do(ctx, chromedp.KeyEvent("c", chromedp.KeyModifiers(chromedp.ModifierCtrl, chromedp.ModifierShift))); err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(copied)
	waitFor(t, ctx, "Ctrl+Shift+C to copy the answer", `window.__copied === `+string(want), 10*time.Second)

	// Regenerate: the conversation still holds one question and one answer.
	eval[bool](t, ctx, recordStates)
	if err := chromedp.Do(ctx, chromedp.Click(done+` .answer-actions .regenerate`, chromedp.NodeVisible)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the regenerated answer", `window.__states.includes('done')`, time.Minute)
	if _, msgs := conversationOf(t, srv.URL, id); len(msgs) != 2 || msgs[0] != "user: "+q {
		t.Fatalf("after regenerating, the conversation holds %q", msgs)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('.msg[data-role]').length`); n != 2 {
		t.Fatalf("after regenerating, the page shows %d messages, want 2", n)
	}

	// Edit and resend the question.
	const edited = "이 법률안의 제안이유는 무엇인가요?"
	eval[bool](t, ctx, recordStates)
	if err := chromedp.Do(ctx,
		chromedp.Click(`.msg-user .edit`, chromedp.NodeVisible),
		chromedp.WaitVisible(chromedp.ID("editing")),
	); err != nil {
		t.Fatal(err)
	}
	if got := eval[string](t, ctx, `document.getElementById('question').value`); got != q {
		t.Fatalf("editing puts %q in the question box", got)
	}
	eval[bool](t, ctx, `(() => { document.getElementById('question').value = ''; return true; })()`)
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("question"), edited+kb.Enter)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the answer to the edited question", `window.__states.includes('done')`, time.Minute)
	if _, msgs := conversationOf(t, srv.URL, id); len(msgs) != 2 || msgs[0] != "user: "+edited {
		t.Fatalf("after editing, the conversation holds %q", msgs)
	}

	// Rename in the sidebar, then delete. The sidebar is listed again after every answer
	// (loadConversations replaces its nodes), so a click may find the node it looked up gone: it then
	// looks again.
	var err error
	for range 3 {
		if err = chromedp.Do(ctx,
			chromedp.Click(`#conv-list .conv-rename`, chromedp.NodeVisible),
			chromedp.WaitVisible(`#conv-list .conv-title-input`),
		); err == nil || !strings.Contains(err.Error(), "Could not find node") {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	eval[bool](t, ctx, `(() => { document.querySelector('#conv-list .conv-title-input').value = ''; return true; })()`)
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(`#conv-list .conv-title-input`, "법안 시행일"+kb.Enter),
	); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the new title", `(document.querySelector('#conv-list .conv-open') || {}).textContent === '법안 시행일'`, 10*time.Second)
	if title, _ := conversationOf(t, srv.URL, id); title != "법안 시행일" {
		t.Fatalf("the server has the title %q", title)
	}
	if err := chromedp.Do(ctx, chromedp.Click(`#conv-list .conv-delete`, chromedp.NodeVisible)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the conversation to be deleted", `document.querySelectorAll('#conv-list .conv-item').length === 0 && !document.querySelector('.msg[data-role]')`, 10*time.Second)
	if resp, err := http.Get(srv.URL + "/api/conversations/" + id); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("the deleted conversation: %v %v", resp.StatusCode, err)
	}

	// Every page, with no error in the console (a missing favicon is one).
	for _, p := range []string{"/", "/documents", "/board"} {
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+p), chromedp.WaitReady("body")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond) // the favicon and the API calls of the page
	}
	if e := errs(); len(e) > 0 {
		t.Fatalf("console errors: %q", e)
	}
}

// TestCollectionPicker: documents in two collections; with one collection picked, the question is sent
// with that collection and answered from it only, and the pick is remembered with the conversation.
func TestCollectionPicker(t *testing.T) {
	ctx, _ := browser(t)
	dir := t.TempDir()
	env := testkit.CleanEnv("RAGD_LOG_LEVEL=info")
	for coll, f := range map[string]string{"react": "md/ko_react_render-and-commit.md", "bills": "pdf/bill_2125318_original.pdf"} {
		cmd := exec.Command(testkit.Binary(t), "ingest", "--data-dir", dir, "--collection", coll, testkit.FixturePath(f))
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("ragd ingest: %v\n%s", err, out)
		}
	}
	srv := testkit.Serve(t, env, "--data-dir", dir)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.ID("question")),
		chromedp.Click(`#coll-picker summary`, chromedp.NodeVisible)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the collections to be listed", `document.querySelectorAll('#coll-options input').length === 2`, 30*time.Second)
	eval[bool](t, ctx, `(() => { document.querySelector('#coll-options input[value="react"]').click(); return true; })()`)
	if got := eval[string](t, ctx, `document.getElementById('coll-picked').textContent`); got != "(react)" {
		t.Fatalf("the picker says %q", got)
	}
	// The document picker then lists only that collection's documents.
	if err := chromedp.Do(ctx, chromedp.Click(`#doc-picker summary`, chromedp.NodeVisible)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the react documents", `document.querySelectorAll('#doc-options input').length === 1`, 30*time.Second)
	eval[bool](t, ctx, `(() => { window.__bodies = []; const f = window.fetch; window.fetch = (u, o) => { if (String(u).includes('/api/chat')) window.__bodies.push(JSON.parse(o.body)); return f(u, o); }; return true; })()`)
	// A question about the bill: the bill is not in the picked collection, so it must not be a source.
	ask(t, ctx, "이 법률안의 시행일은 공포 후 몇 개월인가요?")
	if got := eval[[]string](t, ctx, `(window.__bodies[0].filters || {}).collections || []`); len(got) != 1 || got[0] != "react" {
		t.Fatalf("sent collections %v, want [react]", got)
	}
	srcs := eval[[]string](t, ctx, `[...document.querySelectorAll('.msg-assistant[data-state="done"] .answer button.cite')].map((b) => { b.click(); return document.getElementById('source-doc').textContent; })`)
	for _, s := range srcs {
		if !strings.Contains(s, "react") {
			t.Fatalf("a source outside the picked collection: %q", srcs)
		}
	}
	passages := eval[[]string](t, ctx, `[...document.querySelectorAll('.msg-assistant[data-state="done"] details.debug tbody tr td:nth-child(2)')].map((td) => td.textContent)`)
	for _, p := range passages {
		if strings.Contains(p, "bill") {
			t.Fatalf("a passage outside the picked collection was retrieved: %q", passages)
		}
	}
	// Remembered with the conversation: after a reload the picker still says react.
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the conversation's scope", `document.getElementById('coll-picked').textContent === '(react)'`, 30*time.Second)
	// … and a question asked then, without opening the picker, is limited to it.
	eval[bool](t, ctx, `(() => { window.__bodies = []; const f = window.fetch; window.fetch = (u, o) => { if (String(u).includes('/api/chat')) window.__bodies.push(JSON.parse(o.body)); return f(u, o); }; document.querySelector('.msg-assistant[data-state="done"]').dataset.state = 'first'; return true; })()`)
	ask(t, ctx, "커밋 단계에서는 무엇을 하나요?")
	if got := eval[[]string](t, ctx, `(window.__bodies[0].filters || {}).collections || []`); len(got) != 1 || got[0] != "react" {
		t.Fatalf("after the reload, sent collections %v, want the remembered [react]", got)
	}
}

// TestStopWhileStreaming: with a hosted generator that is slow to answer, Stop ends the answer; the
// exchange stays in the conversation marked stopped, and the page logs no error.
func TestStopWhileStreaming(t *testing.T) {
	ctx, _ := browser(t)
	fake := fakeapi.NewOpenAI("sk-test")
	t.Cleanup(fake.Close)
	dir := t.TempDir()
	env := testkit.CleanEnv("RAGD_LOG_LEVEL=info")
	cmd := exec.Command(testkit.Binary(t), "ingest", "--data-dir", dir, testkit.FixturePath("md/ko_react_render-and-commit.md"))
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ragd ingest: %v\n%s", err, out)
	}
	srv := testkit.Serve(t, append(env, "RAGD_GENERATOR=openai", "RAGD_GENERATE_MODEL=gpt-4o-mini", "OPENAI_API_KEY=sk-test",
		"OPENAI_BASE_URL="+fake.BaseURL()), "--data-dir", dir)
	fake.FailNext(1, fakeapi.Fault{Delay: time.Minute})
	errs := consoleErrors(t, ctx)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.ID("question"))); err != nil {
		t.Fatal(err)
	}
	eval[bool](t, ctx, recordStates)
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("question"), "렌더링은 왜 일어나나요?"+kb.Enter)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the answer to stream", `window.__states.includes('streaming')`, 30*time.Second)
	if eval[bool](t, ctx, `document.getElementById('stop').hidden`) {
		t.Fatal("no Stop button while the answer streams")
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("stop"), chromedp.NodeVisible)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the answer to stop", `document.querySelector('.msg-assistant[data-state="stopped"]')`, 10*time.Second)
	if !eval[bool](t, ctx, `document.getElementById('stop').hidden && !document.getElementById('send').hidden`) {
		t.Error("after stopping, Send does not come back")
	}
	waitFor(t, ctx, "the stopped exchange to be saved", `document.querySelector('.msg-assistant[data-state="stopped"]').dataset.id`, 10*time.Second)
	id := eval[string](t, ctx, `localStorage.getItem('ragd.conversation')`)
	if _, msgs := conversationOf(t, srv.URL, id); len(msgs) != 2 || !strings.HasPrefix(msgs[0], "user: 렌더링") {
		t.Fatalf("the conversation holds %q", msgs)
	}
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the stopped answer after a reload", `document.querySelector('.msg-assistant[data-state="stopped"] .stopped-note')`, 30*time.Second)
	if e := errs(); len(e) > 0 {
		t.Fatalf("console errors: %q", e)
	}
}

// TestUploadRowsAndPhone: on the documents page an upload row follows its document to "ready", and a
// rejected file keeps its name visible with a red bar; then, at 390 px (a phone), no page scrolls
// sideways, the header's status is one line, the question box shows its whole placeholder, the debug table
// stays inside the answer and a citation opens the source sheet with its highlight in view.
func TestUploadRowsAndPhone(t *testing.T) {
	ctx, _ := browser(t)
	srv := startRagd(t)
	pdf, err := filepath.Abs(testkit.FixturePath("pdf/bill_2125318_original.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "a-rather-long-file-name-of-a-program-that-ragd-cannot-read-"+strings.Repeat("x", 40)+".exe")
	if err := os.WriteFile(bad, []byte("MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00binary"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/documents"),
		chromedp.WaitVisible(chromedp.ID("dropzone")),
		chromedp.SetUploadFiles(chromedp.ID("file-input"), []string{pdf, bad}),
	); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the upload row to turn ready", `(() => { const li = document.querySelector('#uploads li[data-file="bill_2125318_original.pdf"]'); return li && li.dataset.status === 'ready' && li.querySelector('.result').textContent === 'ready'; })()`, 3*time.Minute)
	waitFor(t, ctx, "the rejected file", `document.querySelector('#uploads li[data-state="error"]')`, time.Minute)
	rejected := eval[map[string]any](t, ctx, `(() => {
	  const li = document.querySelector('#uploads li[data-state="error"]');
	  const name = li.querySelector('.name').getBoundingClientRect();
	  return { nameWidth: name.width, accent: getComputedStyle(li.querySelector('progress')).accentColor,
	    bad: getComputedStyle(document.documentElement).getPropertyValue('--bad').trim(), text: li.querySelector('.result').textContent };
	})()`)
	if w, _ := rejected["nameWidth"].(float64); w < 200 {
		t.Errorf("the rejected file's name is %.0f px wide: its error hides it (%v)", w, rejected)
	}
	if rejected["accent"] != "rgb(179, 38, 30)" { // --bad, #b3261e
		t.Errorf("the rejected file's bar has accent colour %v, want --bad %v", rejected["accent"], rejected["bad"])
	}

	// A phone. (The rejected upload's 415 was logged by the browser, as it should be: the errors counted
	// start here.)
	errs := consoleErrors(t, ctx)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(3)), chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the status line", `document.getElementById('status-generator')`, 30*time.Second)
	if h := eval[float64](t, ctx, `document.getElementById('model-status').getBoundingClientRect().height`); h > 24 {
		t.Errorf("the header's status is %.0f px high at 390 px: more than one line", h)
	}
	fits := eval[map[string]any](t, ctx, `(() => {
	  const q = document.getElementById('question');
	  const cs = getComputedStyle(q);
	  const c = document.createElement('canvas').getContext('2d');
	  c.font = cs.font;
	  const room = q.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
	  return { text: c.measureText(q.placeholder).width, room };
	})()`)
	if fits["text"].(float64) > fits["room"].(float64) {
		t.Errorf("the placeholder needs %.0f px, the question box has %.0f", fits["text"], fits["room"])
	}
	ask(t, ctx, "시행일은 공포 후 몇 개월인가요?")
	eval[bool](t, ctx, `(() => { document.querySelector('.msg-assistant[data-state="done"] details.debug').open = true; return true; })()`)
	overflow := `document.scrollingElement.scrollWidth <= window.innerWidth`
	if !eval[bool](t, ctx, overflow) {
		t.Errorf("the chat page scrolls sideways at 390 px: %d > %d", eval[int](t, ctx, `document.scrollingElement.scrollWidth`), eval[int](t, ctx, `window.innerWidth`))
	}
	debug := eval[map[string]float64](t, ctx, `(() => {
	  const a = document.querySelector('.msg-assistant[data-state="done"]').getBoundingClientRect();
	  const d = document.querySelector('.msg-assistant[data-state="done"] details.debug table').getBoundingClientRect();
	  return { answerRight: a.right, tableRight: d.right };
	})()`)
	if debug["tableRight"] > debug["answerRight"]+0.5 {
		t.Errorf("the debug table overflows the answer: right edge %.0f > %.0f", debug["tableRight"], debug["answerRight"])
	}
	// Each citation: the sheet opens with its first highlight inside the visible part of the sheet.
	n := eval[int](t, ctx, `document.querySelectorAll('.msg-assistant[data-state="done"] .answer button.cite').length`)
	if n == 0 {
		t.Fatal("no citation to open")
	}
	for i := range n {
		got := eval[map[string]any](t, ctx, fmt.Sprintf(`(() => {
		  document.querySelectorAll('.msg-assistant[data-state="done"] .answer button.cite')[%d].click();
		  const panel = document.getElementById('source-panel').getBoundingClientRect();
		  const m = document.querySelector('#source-passage mark');
		  if (!m) return { mark: false };
		  const r = m.getBoundingClientRect();
		  return { mark: true, top: r.top, bottom: r.bottom, panelTop: panel.top, panelBottom: Math.min(panel.bottom, window.innerHeight) };
		})()`, i))
		if got["mark"] != true {
			continue
		}
		if got["top"].(float64) < got["panelTop"].(float64) || got["bottom"].(float64) > got["panelBottom"].(float64) {
			t.Errorf("citation %d: the highlight (%v–%v) is outside the sheet's view (%v–%v)", i+1, got["top"], got["bottom"], got["panelTop"], got["panelBottom"])
		}
	}
	screenshot(t, ctx, "chat-390.png")
	// The conversations drawer: opens from "Chats", opens a conversation and closes.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("source-close"), chromedp.NodeVisible), chromedp.Click(chromedp.ID("sidebar-toggle"), chromedp.NodeVisible)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the drawer", `getComputedStyle(document.getElementById('sidebar')).visibility === 'visible' && document.querySelector('#conv-list .conv-open')`, 10*time.Second)
	if err := chromedp.Do(ctx, chromedp.Click(`#conv-list .conv-open`, chromedp.NodeVisible)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the drawer to close on the opened conversation", `!document.body.classList.contains('sidebar-open') && document.querySelector('.msg-assistant[data-state="done"]')`, 10*time.Second)
	if !eval[bool](t, ctx, overflow) {
		t.Errorf("with the drawer used, the chat page scrolls sideways at 390 px")
	}
	for _, p := range []string{"/documents", "/board"} {
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+p), chromedp.WaitReady("body")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
		if !eval[bool](t, ctx, overflow) {
			t.Errorf("%s scrolls sideways at 390 px: %d > %d", p, eval[int](t, ctx, `document.scrollingElement.scrollWidth`), eval[int](t, ctx, `window.innerWidth`))
		}
	}
	if e := errs(); len(e) > 0 {
		t.Fatalf("console errors: %q", e)
	}
}

// TestDarkMode: the header's toggle switches the theme, which a reload keeps; without a choice the page
// follows the system's prefers-color-scheme.
func TestDarkMode(t *testing.T) {
	ctx, _ := browser(t)
	srv := startRagd(t)
	bg := `getComputedStyle(document.documentElement).backgroundColor`
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.ID("theme-toggle"))); err != nil {
		t.Fatal(err)
	}
	light := eval[string](t, ctx, bg)
	if light != "rgb(246, 247, 249)" {
		t.Fatalf("light background %s", light)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("theme-toggle"), chromedp.NodeVisible)); err != nil {
		t.Fatal(err)
	}
	if got := eval[string](t, ctx, bg); got != "rgb(18, 21, 25)" {
		t.Fatalf("after the toggle the background is %s, want the dark one", got)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/documents"), chromedp.WaitVisible(chromedp.ID("theme-toggle"))); err != nil {
		t.Fatal(err)
	}
	if got := eval[string](t, ctx, bg); got != "rgb(18, 21, 25)" {
		t.Fatalf("another page forgot the dark theme: %s", got)
	}
	screenshot(t, ctx, "documents-dark.png")
	// No choice: the system's scheme.
	eval[bool](t, ctx, `(() => { localStorage.removeItem('ragd.theme'); return true; })()`)
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.ID("theme-toggle"))); err != nil {
		t.Fatal(err)
	}
	if got := eval[string](t, ctx, bg); got != "rgb(18, 21, 25)" {
		t.Fatalf("with a dark system the background is %s", got)
	}
	screenshot(t, ctx, "chat-dark.png")
}
