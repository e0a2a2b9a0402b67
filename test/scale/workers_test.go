package scale

import (
	"fmt"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/rag"

	"github.com/ragd/ragd/internal/testkit"
)

var (
	workerReady = regexp.MustCompile(`worker (\S+) running jobs against`)
	indexedLog  = regexp.MustCompile(`msg="document indexed" document=(\S+)`)
)

// TestWorkersShareJobs runs `ragd serve --no-worker` (it only queues) and two `ragd worker` processes on
// one database, uploads 40 files, and checks that the workers split the 40 ingestion jobs with none run
// twice: every job completed on its first attempt by one worker, every document committed once (one
// "document indexed" among both workers' logs, version 1), and each worker ran some.
func TestWorkersShareJobs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three ragd processes")
	}
	eachBackend(t, func(t *testing.T, b backend) {
		api, base := serve(t, "serve --no-worker", b, "--no-worker")
		workers := map[string]*process{}
		for i := range 2 {
			p, m := start(t, fmt.Sprintf("worker %d", i+1), b.env(), workerReady, "worker", "--concurrency", "2")
			workers[m[1]] = p
		}

		small := []string{"md/ko_react_render-and-commit.md", "md/ko_react_importing-and-exporting-components.md",
			"md/ko_react_queueing-a-series-of-state-updates.md", "md/LICENSE-ko.react.dev-DOCS.md",
			"html/example-10k-1p.html", "html/en_wikipedia_mozilla.html", "docx/docx-tables.docx"}
		var files []upload
		for i := range 40 {
			f := small[i%len(small)]
			files = append(files, upload{fmt.Sprintf("%02d-%s", i, filepath.Base(f)), testkit.Fixture(t, f)})
		}
		var ids []string
		for _, d := range uploadFiles(t, base, files) {
			ids = append(ids, d.ID)
		}
		testkit.WaitFor(t, "all 40 documents ready", 10*time.Minute, func() bool {
			n := countStatus(listDocuments(t, base), ids)
			if n[rag.StatusFailed] > 0 {
				t.Fatalf("%d documents failed", n[rag.StatusFailed])
			}
			return n[rag.StatusReady] == 40
		})
		for _, p := range workers {
			p.stop(t)
		}
		api.stop(t)

		// Who committed what, from the logs: once per document, never by the API process.
		commits := map[string]int{}
		byWorker := map[string]int{}
		for id, p := range workers {
			for _, m := range indexedLog.FindAllStringSubmatch(p.out.String(), -1) {
				commits[m[1]]++
				byWorker[id]++
			}
		}
		if m := indexedLog.FindString(api.out.String()); m != "" {
			t.Errorf("serve --no-worker indexed a document: %s", m)
		}
		for _, id := range ids {
			if commits[id] != 1 {
				t.Errorf("document %s indexed %d times, want 1", id, commits[id])
			}
		}

		// Who ran what, from River's table: each job once, by one of the two workers.
		jobs := ingestJobs(t, b)
		if len(jobs) != 40 {
			t.Errorf("%d ingestion jobs, want 40", len(jobs))
		}
		ran := map[string]int{}
		for _, j := range jobs {
			if j.state != "completed" || j.attempt != 1 || j.attempts != 1 || j.errors != 0 {
				t.Errorf("job of %s: %s, attempt %d, taken %d times, %d errors (%s); want completed on the first attempt",
					j.doc, j.state, j.attempt, j.attempts, j.errors, j.lastError)
			}
			if workers[j.lastWorker] == nil {
				t.Errorf("job of %s run by %q, not one of the workers", j.doc, j.lastWorker)
			}
			ran[j.lastWorker]++
		}
		t.Logf("%s: jobs per worker %v", b.name, ran)
		for id := range workers {
			if ran[id] == 0 {
				t.Errorf("worker %s ran no job: the jobs were not split", id)
			}
			if ran[id] != byWorker[id] {
				t.Errorf("worker %s: %d jobs in River, %d documents indexed in its log", id, ran[id], byWorker[id])
			}
		}
		checkIndexedOnce(t, b.openApp(t), ids)
	})
}
