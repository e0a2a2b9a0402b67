package scale

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/rag"

	"github.com/ragd/ragd/internal/testkit"
)

// crashFiles are the 20 uploads of the crash test: every fixture (PDFs, DOCX, HTML, Markdown), and small
// ones again under other names.
func crashFiles(t *testing.T) []upload {
	t.Helper()
	var files []upload
	for _, sub := range []string{"pdf", "docx", "html", "md"} {
		ents, err := os.ReadDir(testkit.FixturePath(sub))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			files = append(files, upload{e.Name(), testkit.Fixture(t, filepath.Join(sub, e.Name()))})
		}
	}
	for i, f := range []string{"md/ko_react_render-and-commit.md", "pdf/senate-expenditures.pdf", "html/example-10k-1p.html",
		"md/ko_react_importing-and-exporting-components.md", "docx/docx-tables.docx", "md/ko_react_queueing-a-series-of-state-updates.md"} {
		files = append(files, upload{fmt.Sprintf("copy-%d-%s", i, filepath.Base(f)), testkit.Fixture(t, f)})
	}
	if len(files) != 20 {
		t.Fatalf("%d crash test files, want 20", len(files))
	}
	return files
}

// TestCrashMidIngestion runs `ragd serve`, uploads 20 files over HTTP, kills the server with SIGKILL while
// it is ingesting them, and starts it again on the same data: all 20 become ready, each committed once
// (one version, chunks numbered 0..n-1 once each), none left queued or processing.
func TestCrashMidIngestion(t *testing.T) {
	if testing.Short() {
		t.Skip("ingests 20 files with the real binary")
	}
	eachBackend(t, func(t *testing.T, b backend) {
		files := crashFiles(t)
		first, base := serve(t, "serve (first)", b)
		var ids []string
		for _, d := range uploadFiles(t, base, files) {
			ids = append(ids, d.ID)
		}

		// Kill once some documents are done and another is being worked on.
		testkit.WaitFor(t, "two documents ready and one processing", 10*time.Minute, func() bool {
			n := countStatus(listDocuments(t, base), ids)
			return n[rag.StatusReady] >= 2 && n[rag.StatusProcessing] >= 1
		})
		first.kill(t)

		// What the dead process left: the documents it was working on stay processing until a restart.
		a := b.openApp(t)
		var ready, processing int
		for _, id := range ids {
			d, err := a.Store.GetDocument(t.Context(), rag.LocalPrincipal, id)
			if err != nil {
				t.Fatal(err)
			}
			switch d.Status {
			case rag.StatusReady:
				ready++
			case rag.StatusProcessing:
				processing++
			}
		}
		a.Close()
		t.Logf("%s: killed the server with %d of 20 documents ready and %d processing", b.name, ready, processing)
		if ready == 20 || processing == 0 {
			t.Fatalf("the server was not killed mid-ingestion (%d ready, %d processing)", ready, processing)
		}

		restarted := time.Now()
		second, base := serve(t, "serve (restarted)", b)
		testkit.WaitFor(t, "all 20 documents ready", 15*time.Minute, func() bool {
			return countStatus(listDocuments(t, base), ids)[rag.StatusReady] == 20
		})
		t.Logf("%s: all 20 ready %s after the restart", b.name, time.Since(restarted).Round(time.Second))
		second.stop(t)

		checkIndexedOnce(t, b.openApp(t), ids)
		// One job per document (the restart's reconciliation added none beside the live ones); the jobs the
		// dead server was running were released and run again — at least one per document left processing.
		jobs := ingestJobs(t, b)
		perDoc := map[string]int{}
		released := 0
		for _, j := range jobs {
			perDoc[j.doc]++
			if j.state != "completed" {
				t.Errorf("job of %s is %s, want completed", j.doc, j.state)
			}
			if j.attempt > 1 {
				released++
				t.Logf("%s: job of %s on attempt %d after: %s", b.name, j.doc, j.attempt, j.lastError)
			}
		}
		for _, id := range ids {
			if perDoc[id] != 1 {
				t.Errorf("document %s has %d ingestion jobs, want 1", id, perDoc[id])
			}
		}
		if len(jobs) != len(ids) {
			t.Errorf("%d ingestion jobs, want %d", len(jobs), len(ids))
		}
		t.Logf("%s: %d job(s) released after the crash and run again", b.name, released)
		if released < processing {
			t.Errorf("%d jobs were released after the crash, want at least %d (the documents left processing)", released, processing)
		}
	})
}
