package browser

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestFeedbackRoundTrip: ask in the chat, rate a cited source down with a comment and the answer up (the
// clicks and keys of a user), and find both ratings through the API — the source's with its passage, page
// and comment — and the thumbs-down in the export as a regression item that avoids that page. Clicking the
// answer's thumb again removes its rating.
func TestFeedbackRoundTrip(t *testing.T) {
	ctx, _ := browser(t)
	srv := serveIngested(t, "pdf/bill_2125318_original.pdf", "pdf/assembly_minutes_21_414_1_env_labor.pdf")
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	question := "이 법률안은 누가 대표발의했나요?"
	ask(t, ctx, question)
	done := `.msg-assistant[data-state="done"]`
	if n := eval[int](t, ctx, `document.querySelectorAll('`+done+` .source-item').length`); n == 0 {
		t.Fatal("the answer lists no source to rate")
	}
	comment := "회의록이 아니라 법안 원문을 봐야 합니다"
	first := done + ` .source-item:first-child`
	if err := chromedp.Do(ctx,
		chromedp.Click(done+` .sources-rating summary`, chromedp.NodeVisible),
		chromedp.Click(first+` .thumb-down`, chromedp.NodeVisible),
		chromedp.WaitVisible(first+` .feedback-comment`),
		chromedp.SendKeys(first+` .feedback-comment`, comment),
		chromedp.Click(first+` .feedback-save`, chromedp.NodeVisible),
	); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the comment to be saved", `(document.querySelector('`+first+` .feedback-status') || {}).textContent.includes('comment saved')`, 30*time.Second)
	if err := chromedp.Do(ctx, chromedp.Click(done+` .answer-rating .thumb-up`, chromedp.NodeVisible)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the answer's rating", `document.querySelector('`+done+` .answer-rating .feedback').dataset.id`, 30*time.Second)
	if got := eval[string](t, ctx, `document.querySelector('`+first+` .thumb-down').getAttribute('aria-pressed')`); got != "true" {
		t.Errorf("the source's thumb down shows aria-pressed=%s", got)
	}
	chunk := eval[float64](t, ctx, `Number(document.querySelector('`+first+`').dataset.chunk)`)
	screenshot(t, ctx, "feedback.png")

	type passage struct {
		ChunkID   int64  `json:"chunk_id"`
		File      string `json:"file"`
		PageStart int    `json:"page_start"`
	}
	var list struct {
		Feedback []struct {
			ID, Principal, Target, Comment, Question, Answer string
			Rating                                           int
			Passages                                         []passage
		}
	}
	getJSON(t, srv.URL+"/api/feedback", &list)
	if len(list.Feedback) != 2 {
		t.Fatalf("%d ratings stored, want 2: %+v", len(list.Feedback), list.Feedback)
	}
	var src, ans = list.Feedback[1], list.Feedback[0] // newest first
	if src.Target != "source" || src.Rating != -1 || src.Comment != comment || src.Question != question || src.Principal != "local" ||
		len(src.Passages) != 1 || src.Passages[0].ChunkID != int64(chunk) || src.Passages[0].PageStart < 1 {
		t.Errorf("source rating %+v", src)
	}
	if ans.Target != "answer" || ans.Rating != 1 || ans.Answer == "" || len(ans.Passages) == 0 {
		t.Errorf("answer rating %+v", ans)
	}
	var ex struct {
		Items []struct {
			Question string
			File     string
			Avoid    []struct {
				File  string
				Pages []int
			}
			Comment string
		}
	}
	getJSON(t, srv.URL+"/api/feedback/export", &ex)
	if len(ex.Items) != 1 || ex.Items[0].Question != question || len(ex.Items[0].Avoid) != 1 || ex.Items[0].Comment != comment ||
		!strings.HasSuffix(ex.Items[0].Avoid[0].File, src.Passages[0].File[strings.LastIndex(src.Passages[0].File, "/")+1:]) ||
		ex.Items[0].Avoid[0].Pages[0] != src.Passages[0].PageStart {
		t.Errorf("export %+v", ex.Items)
	}

	// The answer's thumb clicked again: its rating is removed.
	if err := chromedp.Do(ctx, chromedp.Click(done+` .answer-rating .thumb-up`, chromedp.NodeVisible)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the answer's rating to be removed", `document.querySelector('`+done+` .answer-rating .feedback').dataset.rating === '0' && !document.querySelector('`+done+` .answer-rating .feedback').dataset.id`, 30*time.Second)
	getJSON(t, srv.URL+"/api/feedback", &list)
	if len(list.Feedback) != 1 || list.Feedback[0].Target != "source" {
		t.Errorf("after removing the answer's rating: %+v", list.Feedback)
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}
