package browser

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ragd/ragd/internal/testkit"
)

// loadSample runs examples/NAME/load on the shared sample of that name against srv, as a user would.
func loadSample(t *testing.T, srv *testkit.Server, name string) {
	t.Helper()
	dir := testkit.Shared("samples", name)
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared sample %s: %v", name, err)
	}
	cmd := exec.Command("../../examples/"+name+"/load", dir)
	cmd.Env = append(os.Environ(), "RAGD_URL="+srv.URL)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("examples/%s/load: %v\n%s", name, err, out)
	}
}

// pickCollection checks only the collection name in the chat's collection picker.
func pickCollection(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	eval[bool](t, ctx, `(() => { const d = document.getElementById('coll-picker'); if (!d.open) d.querySelector('summary').click(); return true; })()`)
	waitFor(t, ctx, "the collections to be listed", `document.querySelector('#coll-options input[value="`+name+`"]')`, 30*time.Second)
	eval[bool](t, ctx, `(() => {
	  for (const c of document.querySelectorAll('#coll-options input')) if (c.checked !== (c.value === '`+name+`')) c.click();
	  return true;
	})()`)
	if got := eval[string](t, ctx, `document.getElementById('coll-picked').textContent`); got != "("+name+")" {
		t.Fatalf("the picker says %q, want (%s)", got, name)
	}
}

// TestGraphAndRecordAnswers: the real binary with the 품셈 and housing samples loaded by their load scripts.
// A cost question over the graph shows its sources as entity → relation rows with their section path and the
// cost table, and the debug panel lists the graph steps; a housing list question shows the filter read out
// of it as chips and the rows as a table, and removing a chip asks again without it (more rows). No console
// error, and at 390 px no page scrolls sideways, also for a reopened graph conversation.
func TestGraphAndRecordAnswers(t *testing.T) {
	ctx, _ := browser(t)
	srv := startRagd(t)
	loadSample(t, srv, "pumsem")
	loadSample(t, srv, "housing")
	errs := consoleErrors(t, ctx)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.ID("question"))); err != nil {
		t.Fatal(err)
	}

	// A graph answer.
	pickCollection(t, ctx, "pumsem")
	ask(t, ctx, "관 보온 D100 비용")
	const done = `.msg-assistant[data-state="done"]`
	entity := eval[string](t, ctx, `document.querySelector('`+done+` .graph-sources .graph-entity h4').textContent`)
	path := eval[string](t, ctx, `document.querySelector('`+done+` .graph-sources .graph-entity .section-path').textContent`)
	if !strings.Contains(entity, "관 보온") || !strings.Contains(entity, "WorkType") || path != "기계설비부문 > 제3장 보온공사 > 3-1 관 보온" {
		t.Fatalf("first graph source %q, path %q", entity, path)
	}
	rows := eval[[][]string](t, ctx, `[...document.querySelector('`+done+` .graph-sources .graph-entity').querySelectorAll('.relation-rows tbody tr')].map((tr) => [...tr.cells].map((td) => td.textContent))`)
	labour := false
	for _, r := range rows {
		if len(r) != 3 || r[0] != "관 보온" {
			t.Fatalf("relation row %q: want entity, relation, other", r)
		}
		labour = labour || strings.Contains(r[1], "REQUIRES_LABOR") && strings.HasSuffix(r[2], "인")
	}
	if !labour {
		t.Fatalf("no labour row (entity → 투입 인력 → worker with quantity) among %q", rows)
	}
	head := eval[[]string](t, ctx, `[...document.querySelectorAll('`+done+` .graph-records .record-table th')].map((th) => th.textContent)`)
	cost := eval[[][]string](t, ctx, `[...document.querySelectorAll('`+done+` .graph-records .record-table tbody tr')].map((tr) => [...tr.cells].map((td) => td.textContent))`)
	if len(head) == 0 || head[len(head)-1] != "합계" || len(cost) != 1 || cost[0][1] != "D100" || cost[0][len(cost[0])-1] != "32,088" {
		t.Fatalf("cost table %q %q: want the D100 row with its total", head, cost)
	}
	steps := eval[[]string](t, ctx, `[...document.querySelectorAll('`+done+` details.debug .graph-steps li')].map((li) => li.dataset.step + ' ' + li.textContent)`)
	if len(steps) != 5 || !strings.HasPrefix(steps[0], "entities entities found: ") || strings.HasPrefix(steps[0], "entities entities found: 0") ||
		!strings.Contains(steps[2], "intent cost") || !strings.Contains(steps[2], "spec D100") {
		t.Fatalf("graph steps %q", steps)
	}
	screenshot(t, ctx, "chat-graph-1280.png")
	graphConv := eval[string](t, ctx, `location.hash`)

	// A housing list question: chips and a table; removing a chip asks again without it.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("new-conversation"))); err != nil {
		t.Fatal(err)
	}
	pickCollection(t, ctx, "housing")
	ask(t, ctx, "LH 공고 중 보증금 1000만원 이하인 곳 알려줘")
	chips := eval[[]string](t, ctx, `[...document.querySelectorAll('`+done+` .filter-chips .chip')].map((c) => c.dataset.field + '=' + c.querySelector('.chip-text').textContent)`)
	if strings.Join(chips, "|") != "provider=공급기관: LH|deposit=보증금 ≤ 1,000만원" {
		t.Fatalf("chips %q", chips)
	}
	before := eval[int](t, ctx, `document.querySelectorAll('`+done+` .answer table tbody tr').length`)
	if before == 0 || eval[string](t, ctx, `document.querySelector('`+done+`').dataset.route`) != "list" {
		t.Fatal("the list answer is not a table of rows")
	}
	eval[bool](t, ctx, `(() => { window.__bodies = []; const f = window.fetch; window.fetch = (u, o) => { if (String(u).includes('/api/chat')) window.__bodies.push(JSON.parse(o.body)); return f(u, o); }; return true; })()`)
	eval[bool](t, ctx, recordStates)
	eval[bool](t, ctx, `(() => { document.querySelector('`+done+` .chip[data-field="deposit"] .chip-action').click(); return true; })()`)
	waitFor(t, ctx, "the answer without the deposit", `window.__bodies.length === 1 && document.querySelector('`+done+` .chip[data-field="deposit"][data-dropped="true"]')`, 2*time.Minute)
	if got := eval[[]string](t, ctx, `window.__bodies[0].drop_filters || []`); len(got) != 1 || got[0] != "deposit" {
		t.Fatalf("sent drop_filters %q", got)
	}
	after := eval[int](t, ctx, `document.querySelectorAll('`+done+` .answer table tbody tr').length`)
	if after <= before || eval[int](t, ctx, `document.querySelectorAll('.msg-assistant[data-role="assistant"]').length`) != 1 {
		t.Fatalf("without the deposit chip: %d rows (with it %d), %d answers on the page (the answer is replaced)", after, before,
			eval[int](t, ctx, `document.querySelectorAll('.msg-assistant[data-role="assistant"]').length`))
	}
	if eval[string](t, ctx, `document.querySelector('`+done+` .chip[data-field="provider"]').dataset.dropped`) != "false" {
		t.Fatal("the provider chip was dropped too")
	}

	screenshot(t, ctx, "chat-records-1280.png")

	// A phone: neither answer makes the page scroll sideways (the graph one reopened from its address; the query
	// string makes it a new page load, not a change of the hash).
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(3))); err != nil {
		t.Fatal(err)
	}
	overflow := `document.scrollingElement.scrollWidth <= window.innerWidth && document.getElementById('conversation').scrollWidth <= document.getElementById('conversation').clientWidth`
	if !eval[bool](t, ctx, overflow) {
		t.Errorf("the housing answer scrolls sideways at 390 px: %d > %d", eval[int](t, ctx, `document.scrollingElement.scrollWidth`), eval[int](t, ctx, `window.innerWidth`))
	}
	time.Sleep(300 * time.Millisecond) // the sidebar's slide into a drawer
	screenshot(t, ctx, "chat-records-390.png")
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/?reopen"+graphConv), chromedp.WaitVisible(chromedp.ID("question"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the reopened graph answer", `document.querySelector('`+done+` .graph-sources .record-table')`, 30*time.Second)
	if !eval[bool](t, ctx, overflow) {
		t.Errorf("the graph answer scrolls sideways at 390 px: %d > %d", eval[int](t, ctx, `document.scrollingElement.scrollWidth`), eval[int](t, ctx, `window.innerWidth`))
	}
	screenshot(t, ctx, "chat-graph-390.png")
	if e := errs(); len(e) > 0 {
		t.Fatalf("console errors: %q", e)
	}
}
