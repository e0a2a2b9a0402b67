package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
)

const (
	queueIngest   = "ingest"
	queuePeriodic = "periodic"
)

// liveStates are the job states in which a unique job blocks an equal one. Completed is left out on
// purpose: a document can go A → B → A, and the second A needs a job; re-running a completed version is
// harmless anyway, because the pipeline only processes a document's pending hash.
var liveStates = []rivertype.JobState{
	rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
	rivertype.JobStateRetryable, rivertype.JobStateScheduled,
}

// IngestArgs are the arguments of an ingestion job: one pending version of one document.
type IngestArgs struct {
	DocumentID  string `json:"document_id" river:"unique"`
	ContentHash string `json:"content_hash" river:"unique"`
	// Again marks a version processed a second time (EnqueueIngestAgain), so that a live job of the same
	// version does not stand in for it.
	Again string `json:"again,omitempty" river:"unique"`
}

// Kind implements river.JobArgs.
func (IngestArgs) Kind() string { return "ragd_ingest" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (IngestArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queueIngest, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: liveStates}}
}

// EnqueueIngest queues the processing of a document's pending version contentHash (as recorded by
// ingest.Pipeline.Submit). Enqueueing a version that already has a live job does nothing. Errors:
// CodeInvalid for empty arguments, CodeDBError when the jobs database cannot take the job (the document
// stays queued and the next start-up reconciliation enqueues it).
//
// A job counts as live until River records its completion, up to about 250 ms after its work ended. A
// version re-submitted in that window after a different version was processed in between (A, B, then A
// again within a quarter of a second) finds the old job live and is not processed until it is submitted
// again.
func (r *Runner) EnqueueIngest(ctx context.Context, documentID, contentHash string) error {
	_, err := r.enqueueIngest(ctx, documentID, contentHash)
	return err
}

// EnqueueIngestAgain is EnqueueIngest for a version processed a second time — a restored document, an
// older version made current again — when a job of that same version may still count as live: its work
// ended less than about 250 ms ago, or the deletion stopped it. That job does not stand in for this one.
func (r *Runner) EnqueueIngestAgain(ctx context.Context, documentID, contentHash string) error {
	_, err := r.enqueue(ctx, IngestArgs{DocumentID: documentID, ContentHash: contentHash, Again: strconv.FormatInt(time.Now().UnixNano(), 36)})
	return err
}

func (r *Runner) enqueueIngest(ctx context.Context, documentID, contentHash string) (inserted bool, err error) {
	return r.enqueue(ctx, IngestArgs{DocumentID: documentID, ContentHash: contentHash})
}

func (r *Runner) enqueue(ctx context.Context, args IngestArgs) (inserted bool, err error) {
	if args.DocumentID == "" || args.ContentHash == "" {
		return false, rag.Errorf(rag.CodeInvalid, "an ingestion job needs a document id and a content hash")
	}
	res, err := r.client.Insert(ctx, args, nil)
	if err != nil {
		return false, rag.WrapError(rag.CodeDBError, err, "cannot queue the document for processing")
	}
	return !res.UniqueSkippedAsDuplicate, nil
}

// Reconcile enqueues every document with a pending version (queued, processing, or ready with its next
// version waiting), so that uploads survive a crash between their Submit and their EnqueueIngest, and
// documents whose job was lost do not stay in a running state. Documents whose job is alive are skipped by
// uniqueness. It returns how many jobs it inserted. Start runs it; it is safe to run at any time and in
// several processes at once.
func (r *Runner) Reconcile(ctx context.Context) (int, error) {
	if r.docs == nil {
		return 0, nil
	}
	docs, err := r.docs.PendingDocuments(ctx, r.opt.ReconcileLimit)
	if err != nil {
		return 0, fmt.Errorf("jobs: reconcile: %w", err)
	}
	n := 0
	for _, d := range docs {
		if d.PendingHash == "" {
			continue
		}
		ok, err := r.enqueueIngest(ctx, d.ID, d.PendingHash)
		if err != nil {
			return n, fmt.Errorf("jobs: reconcile %s: %w", d.ID, err)
		}
		if ok {
			n++
		}
	}
	return n, nil
}

// ingestWorker runs ingestion jobs through the Processor.
type ingestWorker struct {
	river.WorkerDefaults[IngestArgs]
	r *Runner
}

// Timeout implements river.Worker.
func (w *ingestWorker) Timeout(*river.Job[IngestArgs]) time.Duration { return w.r.opt.JobTimeout }

// Work implements river.Worker. Transient failures are returned for River to retry; permanent ones cancel
// the job. On the last attempt the pipeline records any failure on the document as final.
func (w *ingestWorker) Work(ctx context.Context, job *river.Job[IngestArgs]) (err error) {
	a := job.Args
	final := job.Attempt >= job.MaxAttempts
	defer func() {
		if v := recover(); v != nil {
			w.r.opt.Logger.Error("jobs: ingestion panicked", slog.String("document", a.DocumentID),
				slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
			err = rag.Errorf(rag.CodeInternal, "processing crashed")
			if final {
				w.abandon(ctx, a, err)
			}
		}
	}()
	err = w.r.proc.ProcessAttempt(ctx, a.DocumentID, ingest.Attempt{ContentHash: a.ContentHash, Retry: !final})
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		// Shutdown (River releases the job without counting the attempt) or timeout (retried).
		return err
	case !ingest.Transient(err):
		return river.JobCancel(err)
	}
	return err
}

func (w *ingestWorker) abandon(ctx context.Context, a IngestArgs, reason error) {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := w.r.proc.Abandon(actx, a.DocumentID, a.ContentHash, reason); err != nil {
		w.r.opt.Logger.Error("jobs: record abandoned ingestion", slog.String("document", a.DocumentID), slog.Any("err", err))
	}
}

// abandoned is told of a job discarded by the orphan rescuer, whose worker died on its last attempt.
func (r *Runner) abandoned(ctx context.Context, job *rivertype.JobRow) {
	if job.Kind != (IngestArgs{}).Kind() || r.proc == nil {
		return
	}
	var a IngestArgs
	if err := unmarshalArgs(job, &a); err != nil {
		r.opt.Logger.Error("jobs: decode abandoned job", slog.Int64("job", job.ID), slog.Any("err", err))
		return
	}
	reason := rag.Errorf(rag.CodeInternal, "processing stopped its worker %d times; giving up", job.Attempt)
	(&ingestWorker{r: r}).abandon(ctx, a, reason)
}
