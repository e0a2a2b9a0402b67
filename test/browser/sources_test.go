package browser

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ragd/ragd/internal/testkit"
)

// TestSourcesPanel: on the documents page, a folder is added as a source of a collection; the panel shows
// it syncing then in sync with its counts, the folder's file becomes a document, "run now" syncs again
// after a change, and a source whose folder is gone shows the sync's error.
func TestSourcesPanel(t *testing.T) {
	ctx, _ := browser(t)
	folder := t.TempDir()
	if err := os.WriteFile(filepath.Join(folder, "ledger.md"), []byte("# Ledger\n\nThe harbour ledger counts nineteen gales."), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := testkit.Serve(t, testkit.CleanEnv("RAGD_DATA_DIR="+t.TempDir()))
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/documents"), chromedp.WaitVisible(chromedp.ID("src-collection"))); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.ID("src-collection"), "harbour"),
		chromedp.Click(chromedp.ID("src-load"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the kinds", `[...document.querySelectorAll('#src-kind option')].some((o) => o.value === 'folder')`, 10*time.Second)
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.ID("src-kind"), "folder"),
		chromedp.SetValue(chromedp.ID("src-path"), folder),
		chromedp.SetValue(chromedp.ID("src-include"), "*.md"),
		chromedp.Click(chromedp.ID("src-add-button"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the source in sync", `(() => { const r = document.querySelector('#src-rows tr'); return !!r && r.dataset.status === 'in sync'; })()`, 20*time.Second)
	row := eval[string](t, ctx, `document.querySelector('#src-rows tr').textContent`)
	// The row shows the last sync: the add's (one added) or, when the folder's watcher started after it and
	// synced again before this read, the watcher's (one unchanged).
	if !strings.Contains(row, folder) || !strings.Contains(row, "+1") && !strings.Contains(row, "+0 ~0 −0 =1") {
		t.Errorf("source row %q: want the folder and its file counted (one added, or unchanged after a watch sync)", row)
	}
	waitFor(t, ctx, "the folder's document in the list", `[...document.querySelectorAll('#doc-rows tr')].some((r) => r.textContent.includes('Ledger') && r.textContent.includes('ready'))`, 20*time.Second)

	// A change, then "run now": the panel shows the update.
	if err := os.WriteFile(filepath.Join(folder, "ledger.md"), []byte("# Ledger\n\nThe harbour ledger now counts twenty gales."), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#src-rows button[data-action="sync"]`))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the update in the panel", `document.querySelector('#src-rows .src-last').textContent.includes('~1')`, 20*time.Second)

	// The folder goes: run now shows the sync's error.
	if err := os.RemoveAll(folder); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#src-rows button[data-action="sync"]`))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the last error", `document.querySelector('#src-rows .src-error').textContent.includes('no such file')`, 20*time.Second)
	if got := eval[string](t, ctx, `document.querySelector('#src-rows tr').dataset.status`); got != "failed" {
		t.Errorf("status %q after a failed sync, want failed", got)
	}
}
