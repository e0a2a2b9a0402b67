package browser

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ragd/ragd/internal/testkit"
)

// TestBoard: the lecture course's Q&A board in the browser. The ask form shows similar earlier questions
// while typing; a question opens with its AI answer card (marked AI) whose lecture/week references open the
// passage; a person answers beside the AI.
func TestBoard(t *testing.T) {
	ctx, dialogs := browser(t)
	srv := startRagd(t, "RAGD_QA_INTERVAL=1h")
	load := exec.Command(filepath.Join(testkit.Root(), "examples", "lectures", "load"), testkit.Shared("samples", "lectures"))
	load.Env = append(os.Environ(), "RAGD_URL="+srv.URL, "RAGD_API_KEY=")
	if out, err := load.CombinedOutput(); err != nil {
		t.Fatalf("load: %v\n%s", err, out)
	}
	post := func(path string, body any) {
		b, _ := json.Marshal(body)
		resp, err := http.Post(srv.URL+path, "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			t.Fatalf("POST %s: HTTP %d", path, resp.StatusCode)
		}
	}
	post("/api/questions", map[string]string{"collection": "lectures", "title": "학습 단계는 보통 언제 끝나나요?"})
	post("/api/questions", map[string]string{"collection": "lectures", "title": "홈페이지 방문자 리타겟팅할때 최대 며칠 전 방문자까지 모을 수 있어요?"})

	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/board?collection=lectures"),
		chromedp.WaitVisible(chromedp.ID("ask-title")),
	); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the questions", `document.querySelectorAll('#questions li').length === 2`, 30*time.Second)
	if st := eval[string](t, ctx, `document.querySelector('#questions .badge').textContent`); st != "open" {
		t.Errorf("status before the pass: %q", st)
	}
	// The answer pass from the page.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("run-now"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the pass", `/answered 2/.test(document.getElementById('run-info').textContent)`, time.Minute)

	// Typing a question like an earlier one shows it.
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("ask-title"), "학습 단계가 끝나는 기준이 뭔가요?")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "similar questions", `!document.getElementById('similar').hidden && document.querySelectorAll('#similar-list li').length > 0`, 30*time.Second)
	if first := eval[string](t, ctx, `document.querySelector('#similar-list .similar-question').textContent`); !strings.Contains(first, "학습 단계") {
		t.Errorf("most similar earlier question = %q", first)
	}

	// Open it from the similar list: the AI answer card with its lecture/week references.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#similar-list .similar-question`))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the AI answer", `document.querySelector('#answers .ai-answer')`, 30*time.Second)
	card := eval[string](t, ctx, `document.querySelector('#answers .ai-answer').textContent`)
	if !strings.Contains(card, "AI") || !strings.Contains(card, "50회") || !strings.Contains(card, "6주차") {
		t.Fatalf("AI answer card = %q", card)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#answers .ai-answer .source-ref`))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the passage", `!document.getElementById('passage').hidden && document.getElementById('passage-text').textContent.length > 20`, 30*time.Second)
	if p := eval[string](t, ctx, `document.getElementById('passage-text').textContent`); !strings.Contains(p, "50회") {
		t.Errorf("passage = %q", p)
	}

	// A person's answer beside the AI's.
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("answer-body"), "전환 50회를 7일 안에 모으면 끝나요."),
		chromedp.Click(chromedp.ID("answer-submit")),
	); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the person's answer", `document.querySelectorAll('#answers .answer-card').length === 2`, 30*time.Second)
	if n := eval[int](t, ctx, `document.querySelectorAll('#answers .ai-answer').length`); n != 1 {
		t.Errorf("%d AI answer cards", n)
	}
	screenshot(t, ctx, "board.png")
	if len(*dialogs) > 0 {
		t.Errorf("dialogs opened: %v", *dialogs)
	}
}
