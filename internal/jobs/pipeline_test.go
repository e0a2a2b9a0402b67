package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/ragd/ragd/internal/embed/hash"
	"github.com/ragd/ragd/internal/extract"
	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/hostile"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/openai"
	"github.com/ragd/ragd/internal/provider"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/store/sqlite"
	"github.com/ragd/ragd/internal/testkit"
)

// These tests run the real ingestion pipeline — SQLite store, extractor, chunker, embedder — under the
// Runner, as `ragd serve` does: Submit, EnqueueIngest, and the jobs do the rest.

// fixture reads a shared fixture.
func fixture(t testing.TB, rel string) []byte { return testkit.Fixture(t, rel) }

// pipelineEnv is a jobs database of a backend with its store and pipeline, as one ragd process opens them.
type pipelineEnv struct {
	b     backend
	db    string
	store rag.Store
	pipe  *ingest.Pipeline
}

// pipelineOn opens a new database of b, its store and a pipeline with emb (nil: hash), closed when the
// test ends.
func pipelineOn(t testing.TB, b backend, emb rag.Embedder) *pipelineEnv {
	t.Helper()
	db := b.fresh(t)
	st := b.store(t, db)
	ex, err := extract.New(extract.Options{PDFWorkers: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close() })
	return newPipeline(b, db, st, ex, emb, testLogger(t))
}

func newPipeline(b backend, db string, st rag.Store, ex *extract.Extractor, emb rag.Embedder, log *slog.Logger) *pipelineEnv {
	if emb == nil {
		emb = hash.New(256)
	}
	return &pipelineEnv{b: b, db: db, store: st, pipe: ingest.New(st, ex, emb, ingest.Options{Logger: log})}
}

// openPipeline is pipelineOn for the SQLite data directory dir (the crash tests, whose worker processes
// open the same directory).
func openPipeline(t testing.TB, dir string, emb rag.Embedder) *pipelineEnv {
	t.Helper()
	e, closeEnv, err := newPipelineEnv(dir, emb, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeEnv)
	return e
}

func newPipelineEnv(dir string, emb rag.Embedder, log *slog.Logger) (*pipelineEnv, func(), error) {
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "ragd.db"), sqlite.Options{})
	if err != nil {
		return nil, nil, fmt.Errorf("open store: %w", err)
	}
	ex, err := extract.New(extract.Options{PDFWorkers: 1})
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	e := newPipeline(sqliteBackend, filepath.Join(dir, "jobs.db"), st, ex, emb, log)
	return e, func() { ex.Close(); st.Close() }, nil
}

func (e *pipelineEnv) runner(t testing.TB, opt Options) *Runner {
	t.Helper()
	return e.b.open(t, e.db, e.store, e.pipe, opt)
}

// submit records a file as the HTTP API does before it answers 202, and enqueues its job.
func (e *pipelineEnv) submit(t testing.TB, r *Runner, name string, data []byte) *rag.Document {
	t.Helper()
	doc, outcome, err := e.pipe.Submit(context.Background(), rag.LocalPrincipal, ingest.Request{Name: name, Data: data})
	if err != nil || outcome != ingest.Queued {
		t.Fatalf("submit %s: %v (%s)", name, err, outcome)
	}
	if r != nil {
		if err := r.EnqueueIngest(context.Background(), doc.ID, doc.PendingHash); err != nil {
			t.Fatal(err)
		}
	}
	return doc
}

func (e *pipelineEnv) doc(t testing.TB, id string) *rag.Document {
	t.Helper()
	d, err := e.store.GetDocument(context.Background(), rag.LocalPrincipal, id)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// checkIndexedOnce fails unless the document is ready with exactly one version whose chunks are numbered
// 0..n-1 once each.
func (e *pipelineEnv) checkIndexedOnce(t testing.TB, id string) {
	t.Helper()
	ctx := context.Background()
	d := e.doc(t, id)
	if d.Status != rag.StatusReady || d.PendingHash != "" || d.Version != 1 {
		t.Errorf("%s: status %s, version %d, pending %q; want ready version 1", d.Source, d.Status, d.Version, d.PendingHash)
	}
	vs, err := e.store.ListVersions(ctx, rag.LocalPrincipal, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 {
		t.Errorf("%s: %d versions, want 1 (processed more than once)", d.Source, len(vs))
	}
	chunks, err := e.store.ListChunks(ctx, rag.LocalPrincipal, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) == 0 {
		t.Errorf("%s: no chunks", d.Source)
	}
	for i, c := range chunks {
		if c.Index != i {
			t.Errorf("%s: chunk %d has index %d (duplicate or missing chunks)", d.Source, i, c.Index)
			break
		}
	}
}

func TestPipelineJobs(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		t.Run("IngestsInBackground", func(t *testing.T) {
			b.parallel(t)
			e := pipelineOn(t, b, nil)
			r := e.runner(t, testOptions(t))
			start(t, r)
			var ids []string
			files := []string{"md/ko_react_render-and-commit.md", "html/example-10k-1p.html", "pdf/bill_2125318_original.pdf"}
			if raceEnabled {
				files[2] = "docx/docx-tables.docx"
			}
			for _, f := range files {
				ids = append(ids, e.submit(t, r, filepath.Base(f), fixture(t, f)).ID)
			}
			waitFor(t, "documents ready", func() bool {
				for _, id := range ids {
					if e.doc(t, id).Status != rag.StatusReady {
						return false
					}
				}
				return true
			})
			for _, id := range ids {
				e.checkIndexedOnce(t, id)
			}
		})

		t.Run("NewVersionSupersedesQueuedOne", func(t *testing.T) {
			b.parallel(t)
			e := pipelineOn(t, b, nil)
			r := e.runner(t, testOptions(t))
			v1 := e.submit(t, r, "notes.md", []byte("# Notes\n\nThe first draft talks about apples."))
			v2 := e.submit(t, r, "notes.md", []byte("# Notes\n\nThe second draft talks about pears."))
			if v1.ID != v2.ID || v1.PendingHash == v2.PendingHash {
				t.Fatalf("want one document with two pending versions, got %s/%s", v1.ID, v2.ID)
			}
			start(t, r)
			waitFor(t, "both jobs done", func() bool {
				jobs := ingestJobs(t, r)
				return len(jobs) == 2 && jobs[0].State == rivertype.JobStateCompleted && jobs[1].State == rivertype.JobStateCompleted
			})
			e.checkIndexedOnce(t, v1.ID)
			if d := e.doc(t, v1.ID); d.ContentHash != v2.PendingHash {
				t.Fatalf("current content %s, want the second version %s", d.ContentHash, v2.PendingHash)
			}
		})

		t.Run("BackToEarlierContent", func(t *testing.T) {
			b.parallel(t)
			// A → B → A: the second A is a new version with the hash of a completed job; it must run.
			e := pipelineOn(t, b, nil)
			r := e.runner(t, testOptions(t))
			start(t, r)
			a, b := []byte("# Fruit\n\nApples are red."), []byte("# Fruit\n\nPears are green.")
			var id string
			for i, data := range [][]byte{a, b, a} {
				d := e.submit(t, r, "fruit.md", data)
				id = d.ID
				waitFor(t, fmt.Sprintf("version %d", i+1), func() bool {
					got := e.doc(t, id)
					return got.Version == i+1 && got.PendingHash == ""
				})
				// River records a job's completion a moment after its work; until then the job still counts as
				// live and an equal one is not inserted (see EnqueueIngest).
				waitFor(t, "the job recorded as completed", func() bool {
					for _, j := range ingestJobs(t, r) {
						if j.State != rivertype.JobStateCompleted {
							return false
						}
					}
					return true
				})
			}
			if got := e.doc(t, id); got.Status != rag.StatusReady || got.Version != 3 {
				t.Fatalf("document %s version %d, want ready version 3", got.Status, got.Version)
			}
			chunks, err := e.store.ListChunks(t.Context(), rag.LocalPrincipal, id)
			if err != nil || len(chunks) == 0 || !strings.Contains(chunks[0].Text, "Apples") {
				t.Fatalf("current chunks %v (%v), want the apples version", chunks, err)
			}
		})

		t.Run("CorruptFileNotRetried", func(t *testing.T) {
			b.parallel(t)
			e := pipelineOn(t, b, nil)
			r := e.runner(t, testOptions(t))
			start(t, r)
			d := e.submit(t, r, "broken.docx", []byte("PK\x03\x04 this is not a zip archive"))
			waitFor(t, "job cancelled", func() bool { return jobStateOf(t, r, d.ID) == rivertype.JobStateCancelled })
			got := e.doc(t, d.ID)
			if got.Status != rag.StatusFailed || got.ErrorCode != rag.CodeInvalid {
				t.Fatalf("document %s (%s: %s), want failed with invalid_request", got.Status, got.ErrorCode, got.Error)
			}
			if j := ingestJobs(t, r)[0]; j.Attempt != 1 {
				t.Fatalf("%d attempts, want 1", j.Attempt)
			}
		})

		t.Run("ZipBombCancelledNotRetried", func(t *testing.T) {
			b.parallel(t)
			// A DOCX whose document.xml inflates to 80 MiB (80 KB on disk), over the default 64 MiB per member.
			e := pipelineOn(t, b, nil)
			r := e.runner(t, testOptions(t))
			start(t, r)
			d := e.submit(t, r, "bomb.docx", hostile.DOCX(80<<20, nil))
			// Inflating 64 MiB before the limit stops it takes minutes under the race detector on a busy
			// machine (169 s at load average 12): the bound is against hanging.
			waitForLong(t, "job cancelled", 5*time.Minute, func() bool { return jobStateOf(t, r, d.ID) == rivertype.JobStateCancelled })
			got := e.doc(t, d.ID)
			if got.Status != rag.StatusFailed || got.ErrorCode != rag.CodeTooLarge || !strings.Contains(got.Error, "RAGD_MAX_MEMBER_BYTES") {
				t.Fatalf("document %s (%s: %s), want failed with too_large naming the limit", got.Status, got.ErrorCode, got.Error)
			}
			if j := ingestJobs(t, r)[0]; j.Attempt != 1 || got.PendingHash != "" {
				t.Fatalf("%d attempts, pending %q: want 1 and nothing left for a restart to pick up", j.Attempt, got.PendingHash)
			}
		})

		// An embedder outage: the OpenAI-compatible embedder against a local fake of the API that answers 503.
		outage := func(t *testing.T) (*fakeapi.OpenAI, rag.Embedder) {
			api := fakeapi.NewOpenAI("sk-test")
			t.Cleanup(api.Close)
			emb, err := openai.NewEmbedder(openai.EmbedderConfig{Config: provider.Config{APIKey: api.Key(), BaseURL: api.URL() + "/v1",
				Model: "text-embedding-3-small", Retry: provider.Retry{MaxAttempts: 1}}, Dim: 256})
			if err != nil {
				t.Fatal(err)
			}
			api.SetDown(true)
			return api, emb
		}

		t.Run("EmbedderOutageRetried", func(t *testing.T) {
			b.parallel(t)
			api, emb := outage(t)
			e := pipelineOn(t, b, emb)
			opt := testOptions(t)
			opt.MaxAttempts = 100 // the outage outlasts any small number of attempts
			r := e.runner(t, opt)
			start(t, r)
			d := e.submit(t, r, "render.md", fixture(t, "md/ko_react_render-and-commit.md"))
			waitFor(t, "a failed attempt", func() bool {
				j := ingestJobs(t, r)[0]
				return len(j.Errors) >= 2
			})
			// While it is retried the document waits in the queue with the reason; it is not failed.
			got := e.doc(t, d.ID)
			if got.Status == rag.StatusFailed || got.PendingHash == "" {
				t.Fatalf("document %s, pending %q during the outage: want it still queued", got.Status, got.PendingHash)
			}
			if got.Status == rag.StatusQueued && got.ErrorCode != rag.CodeEmbeddingFailed {
				t.Fatalf("queued document says %q (%s), want the embedding failure", got.Error, got.ErrorCode)
			}
			api.SetDown(false)
			waitFor(t, "document ready", func() bool { return e.doc(t, d.ID).Status == rag.StatusReady })
			e.checkIndexedOnce(t, d.ID)
			if got := e.doc(t, d.ID); got.Error != "" || got.ErrorCode != "" {
				t.Fatalf("ready document still says %q (%s)", got.Error, got.ErrorCode)
			}
		})

		t.Run("TimeoutOnLastAttempt", func(t *testing.T) {
			b.parallel(t)
			api, emb := outage(t)
			api.SetDown(false)
			api.FailNext(10, fakeapi.Fault{Delay: time.Minute}) // an embedder that hangs
			e := pipelineOn(t, b, emb)
			opt := testOptions(t)
			opt.MaxAttempts, opt.JobTimeout = 1, 500*time.Millisecond
			r := e.runner(t, opt)
			start(t, r)
			d := e.submit(t, r, "render.md", fixture(t, "md/ko_react_render-and-commit.md"))
			waitFor(t, "job discarded", func() bool { return jobStateOf(t, r, d.ID) == rivertype.JobStateDiscarded })
			got := e.doc(t, d.ID)
			if got.Status != rag.StatusFailed || got.PendingHash != "" {
				t.Fatalf("document %s (%s: %q, pending %q), want failed", got.Status, got.ErrorCode, got.Error, got.PendingHash)
			}
			t.Logf("timed-out document says: %s: %s", got.ErrorCode, got.Error)
		})

		t.Run("Abandon", func(t *testing.T) {
			b.parallel(t)
			e := pipelineOn(t, b, nil)
			d := e.submit(t, nil, "render.md", fixture(t, "md/ko_react_render-and-commit.md"))
			reason := rag.Errorf(rag.CodeInternal, "processing stopped its worker 8 times; giving up")
			if err := e.pipe.Abandon(t.Context(), d.ID, "another-hash", reason); err != nil {
				t.Fatal(err)
			}
			if got := e.doc(t, d.ID); got.Status != rag.StatusQueued || got.PendingHash != d.PendingHash {
				t.Fatalf("abandoning another version changed the document: %s, pending %q", got.Status, got.PendingHash)
			}
			if err := e.pipe.Abandon(t.Context(), d.ID, d.PendingHash, reason); err != nil {
				t.Fatal(err)
			}
			got := e.doc(t, d.ID)
			if got.Status != rag.StatusFailed || got.PendingHash != "" || got.Error != reason.Message {
				t.Fatalf("abandoned document %s (%q, pending %q)", got.Status, got.Error, got.PendingHash)
			}
		})

		t.Run("EmbedderOutageExhausted", func(t *testing.T) {
			b.parallel(t)
			_, emb := outage(t)
			e := pipelineOn(t, b, emb)
			opt := testOptions(t)
			opt.MaxAttempts = 2
			r := e.runner(t, opt)
			start(t, r)
			d := e.submit(t, r, "render.md", fixture(t, "md/ko_react_render-and-commit.md"))
			waitFor(t, "job discarded", func() bool { return jobStateOf(t, r, d.ID) == rivertype.JobStateDiscarded })
			got := e.doc(t, d.ID)
			if got.Status != rag.StatusFailed || got.ErrorCode != rag.CodeEmbeddingFailed || got.PendingHash != "" {
				t.Fatalf("document %s (%s, pending %q), want failed with embedding_failed", got.Status, got.ErrorCode, got.PendingHash)
			}
			if strings.HasPrefix(got.Error, "will retry") {
				t.Fatalf("final failure says %q", got.Error)
			}
		})
	})
}

// crashFiles are the 20 uploads of the crash test: every fixture, and the small ones again under other
// names so that there are 20 documents.
func crashFiles(t testing.TB) map[string][]byte {
	files := map[string][]byte{}
	for _, sub := range []string{"md", "html", "pdf", "docx"} {
		ents, err := os.ReadDir(testkit.FixturePath(sub))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			files[e.Name()] = fixture(t, filepath.Join(sub, e.Name()))
		}
	}
	for i, f := range []string{"md/ko_react_render-and-commit.md", "md/ko_react_importing-and-exporting-components.md",
		"html/example-10k-1p.html", "md/ko_react_queueing-a-series-of-state-updates.md", "pdf/senate-expenditures.pdf",
		"docx/docx-tables.docx"} {
		files[fmt.Sprintf("copy-%d-%s", i, filepath.Base(f))] = fixture(t, f)
	}
	if len(files) != 20 {
		t.Fatalf("%d crash test files, want 20", len(files))
	}
	return files
}
