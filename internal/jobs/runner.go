package jobs

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	mrand "math/rand/v2"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
	_ "modernc.org/sqlite" // database/sql driver "sqlite" for jobs.db

	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
)

// Processor does the work of ingestion jobs: *ingest.Pipeline.
type Processor interface {
	// ProcessAttempt processes a document's pending version (see ingest.Pipeline.ProcessAttempt).
	ProcessAttempt(ctx context.Context, docID string, a ingest.Attempt) error
	// Abandon marks a pending version failed for good (see ingest.Pipeline.Abandon).
	Abandon(ctx context.Context, docID, contentHash string, reason error) error
}

// Documents is what start-up reconciliation reads: rag.Store.
type Documents interface {
	// PendingDocuments is rag.Store.PendingDocuments.
	PendingDocuments(ctx context.Context, limit int) ([]*rag.Document, error)
}

// Options configure a Runner. The zero value is an insert-only Runner with default settings.
type Options struct {
	// Work makes the Runner execute jobs (`ragd serve`, `ragd worker`); without it the Runner only
	// inserts them (a `serve` whose workers run elsewhere).
	Work bool
	// IngestWorkers is how many ingestion jobs this process runs at once (default: the number of CPUs).
	IngestWorkers int
	// PeriodicWorkers is how many periodic jobs this process runs at once (default 2); they have their own
	// queue so a long ingestion backlog does not delay them.
	PeriodicWorkers int
	// MaxAttempts is how many times an ingestion job is tried before the document is marked failed
	// (default 8).
	MaxAttempts int
	// RetryBase and RetryMax shape the back-off between attempts: RetryBase·2^(attempt-1), at most
	// RetryMax, ±10% jitter (defaults 5s and 10m: eight attempts span about ten minutes).
	RetryBase time.Duration
	RetryMax  time.Duration
	// Webhooks delivers webhook events (EnqueueWebhook) in a working Runner; nil runs no deliveries.
	Webhooks Deliverer
	// WebhookWorkers is how many deliveries this process makes at once (default 4), in their own queue.
	WebhookWorkers int
	// WebhookMaxAttempts is how many times an event is tried on a webhook (default 10); WebhookRetryBase and
	// WebhookRetryMax shape the back-off between tries as RetryBase and RetryMax do (defaults 30s and 1h).
	WebhookMaxAttempts int
	WebhookRetryBase   time.Duration
	WebhookRetryMax    time.Duration
	// JobTimeout cancels an attempt that runs longer (default 30m: large PDFs take minutes).
	JobTimeout time.Duration
	// StopTimeout is how long Stop lets running jobs finish before it cancels them; cancelled jobs are
	// released to run again, here or in another process (default 30s).
	StopTimeout time.Duration
	// Heartbeat is how often a working Runner records that it is alive and looks for jobs left running by
	// dead workers (default 5s). DeadAfter is how old a heartbeat must be for its worker to count as dead
	// (default 30s; a worker on this machine whose process is gone counts as dead at once).
	Heartbeat time.Duration
	DeadAfter time.Duration
	// PollInterval is how often idle workers look for new jobs (default 1s). Runners poll rather than
	// LISTEN on SQLite and on small PostgreSQL pools (fewer than 8 connections, e.g. PGlite's one), where a
	// listener would hold a connection for good.
	PollInterval time.Duration
	// ReconcileLimit bounds how many stuck documents one reconciliation re-enqueues (default 100000).
	ReconcileLimit int
	// Schema is the PostgreSQL schema of River's tables (default: the search_path).
	Schema string
	// ID names this process among the Runners sharing the database (default: host-pid-random).
	ID     string
	Logger *slog.Logger

	// testOnly skips River's staggered maintenance start-up in tests.
	testOnly bool
}

// WithDefaults returns o with zero fields set to their defaults.
func (o Options) WithDefaults() Options {
	if o.IngestWorkers <= 0 {
		o.IngestWorkers = max(1, runtime.NumCPU())
	}
	if o.PeriodicWorkers <= 0 {
		o.PeriodicWorkers = 2
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 8
	}
	if o.RetryBase <= 0 {
		o.RetryBase = 5 * time.Second
	}
	if o.RetryMax <= 0 {
		o.RetryMax = 10 * time.Minute
	}
	if o.WebhookWorkers <= 0 {
		o.WebhookWorkers = 4
	}
	if o.WebhookMaxAttempts <= 0 {
		o.WebhookMaxAttempts = 10
	}
	if o.WebhookRetryBase <= 0 {
		o.WebhookRetryBase = 30 * time.Second
	}
	if o.WebhookRetryMax <= 0 {
		o.WebhookRetryMax = time.Hour
	}
	if o.JobTimeout <= 0 {
		o.JobTimeout = 30 * time.Minute
	}
	if o.StopTimeout <= 0 {
		o.StopTimeout = 30 * time.Second
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = 5 * time.Second
	}
	if o.DeadAfter <= 0 {
		o.DeadAfter = 30 * time.Second
	}
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	if o.ReconcileLimit <= 0 {
		o.ReconcileLimit = 100000
	}
	if o.ID == "" {
		o.ID = newClientID()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

func (o Options) validate() error {
	switch {
	case o.DeadAfter < 3*o.Heartbeat:
		return fmt.Errorf("jobs: dead-after %s must be at least three heartbeats (%s)", o.DeadAfter, 3*o.Heartbeat)
	case len(o.ID) > 100:
		return fmt.Errorf("jobs: id %q is longer than 100 characters", o.ID)
	}
	return nil
}

// client is the part of *river.Client[TTx] a Runner uses, whatever the driver's transaction type.
type client interface {
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
	Subscribe(kinds ...river.EventKind) (<-chan *river.Event, func())
	PeriodicJobs() *river.PeriodicJobBundle
	JobList(ctx context.Context, params *river.JobListParams) (*river.JobListResult, error)
	ID() string
}

// Runner inserts and (with Options.Work) executes ragd's background jobs. Open it with OpenSQLite or
// OpenPostgres; it can insert jobs at once, and runs them between Start and Stop.
type Runner struct {
	opt     Options
	docs    Documents
	proc    Processor
	client  client
	exec    riverdriver.Executor
	live    liveness
	closeDB func() error

	pmu      sync.RWMutex
	periodic map[string]PeriodicFunc

	mu      sync.Mutex // guards the fields below; held through Start and Stop
	started bool
	stopped bool
	cancel  context.CancelFunc // ends the heartbeat and rescue loops
	loops   sync.WaitGroup
}

// OpenSQLite opens (creating and migrating) the SQLite jobs database at path — <data-dir>/jobs.db, a file
// of its own beside the document store — for a Runner. proc may be nil when !opt.Work; docs may be nil to
// skip start-up reconciliation. Close releases the database.
func OpenSQLite(ctx context.Context, path string, docs Documents, proc Processor, opt Options) (*Runner, error) {
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("jobs: database path %q must not contain ? or #", path)
	}
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("jobs: open %s: %w", path, err)
	}
	// River's services run concurrently; SQLite has one writer. One connection per process serialises them
	// here, and immediate transactions plus busy_timeout serialise processes without SQLITE_BUSY.
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("jobs: open %s: %w", path, err)
	}
	driver := riversqlite.New(db)
	live := &sqliteLiveness{db: db, unwrap: driver.UnwrapTx}
	r, err := newRunner(ctx, driver, live, true, db.Close, docs, proc, opt)
	if err != nil {
		db.Close()
		return nil, err
	}
	return r, nil
}

// OpenPostgres prepares a Runner whose jobs live in the PostgreSQL database of pool — the document store's
// own pool, which the Runner shares and does not close. It migrates River's tables.
func OpenPostgres(ctx context.Context, pool *pgxpool.Pool, docs Documents, proc Processor, opt Options) (*Runner, error) {
	pollOnly := pool.Config().MaxConns < 8
	if opt.Schema != "" {
		create := func() error {
			_, err := pool.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{opt.Schema}.Sanitize())
			return err
		}
		if err := retry(ctx, "create schema", create); err != nil {
			return nil, err
		}
	}
	driver := riverpgxv5.New(pool)
	live := &pgLiveness{pool: pool, prefix: pgPrefix(opt.Schema), table: pgPrefix(opt.Schema) + "ragd_job_client", unwrap: driver.UnwrapTx}
	return newRunner(ctx, driver, live, pollOnly, func() error { return nil }, docs, proc, opt)
}

func newRunner[TTx any](ctx context.Context, driver riverdriver.Driver[TTx], live liveness, pollOnly bool, closeDB func() error,
	docs Documents, proc Processor, opt Options) (*Runner, error) {
	opt = opt.WithDefaults()
	if err := opt.validate(); err != nil {
		return nil, err
	}
	if opt.Work && proc == nil {
		return nil, errors.New("jobs: a working runner needs a processor")
	}
	r := &Runner{opt: opt, docs: docs, proc: proc, live: live, closeDB: closeDB, periodic: map[string]PeriodicFunc{}}

	if err := retry(ctx, "migrate jobs database", func() error { return migrate(ctx, driver, opt) }); err != nil {
		return nil, err
	}
	if err := retry(ctx, "migrate heartbeat table", func() error { return live.init(ctx) }); err != nil {
		return nil, err
	}

	cfg := &river.Config{
		ID:                   opt.ID,
		Logger:               riverLogger(opt.Logger),
		Schema:               opt.Schema,
		MaxAttempts:          opt.MaxAttempts,
		RetryPolicy:          &backoff{base: opt.RetryBase, max: opt.RetryMax},
		JobTimeout:           opt.JobTimeout,
		RescueStuckJobsAfter: opt.JobTimeout + 30*time.Minute,
		SoftStopTimeout:      opt.StopTimeout,
		FetchPollInterval:    opt.PollInterval,
		FetchCooldown:        min(100*time.Millisecond, opt.PollInterval),
		PollOnly:             pollOnly,
		ErrorHandler:         &errorHandler{log: opt.Logger},
		Middleware:           []rivertype.Middleware{&workTelemetry{}},
		TestOnly:             opt.testOnly,
	}
	if opt.Work {
		workers := river.NewWorkers()
		river.AddWorker(workers, &ingestWorker{r: r})
		river.AddWorker(workers, &periodicWorker{r: r})
		cfg.Workers = workers
		cfg.Queues = map[string]river.QueueConfig{
			queueIngest:   {MaxWorkers: opt.IngestWorkers},
			queuePeriodic: {MaxWorkers: opt.PeriodicWorkers},
		}
		if opt.Webhooks != nil {
			river.AddWorker(workers, &webhookWorker{r: r})
			cfg.Queues[queueWebhooks] = river.QueueConfig{MaxWorkers: opt.WebhookWorkers}
		}
	}
	c, err := river.NewClient(driver, cfg)
	if err != nil {
		return nil, fmt.Errorf("river client: %w", err)
	}
	r.client, r.exec = c, driver.GetExecutor()
	return r, nil
}

// migrate brings River's tables up to date.
func migrate[TTx any](ctx context.Context, driver riverdriver.Driver[TTx], opt Options) error {
	m, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: riverLogger(opt.Logger), Schema: opt.Schema})
	if err != nil {
		return err
	}
	_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	return err
}

// retry runs f until it succeeds, a few times: processes that start together race to create the same
// tables, and the loser of each race succeeds on the next try because the winner's work is then visible.
func retry(ctx context.Context, what string, f func() error) error {
	var err error
	for attempt := range 6 {
		if err = f(); err == nil {
			return nil
		}
		wait := time.Duration(50<<attempt)*time.Millisecond + time.Duration(mrand.Int64N(int64(50*time.Millisecond)))
		select {
		case <-ctx.Done():
			return fmt.Errorf("jobs: %s: %w", what, errors.Join(err, ctx.Err()))
		case <-time.After(wait):
		}
	}
	return fmt.Errorf("jobs: %s: %w", what, err)
}

// ID returns the name of this Runner's River client among those sharing the database.
func (r *Runner) ID() string { return r.opt.ID }

// Start starts the Runner: with Options.Work it records its heartbeat, releases jobs left running by dead
// workers, re-enqueues documents left queued or processing (Reconcile) and starts working; without it, it
// only reconciles. ctx bounds start-up only: the Runner runs until Stop.
func (r *Runner) Start(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started {
		return errors.New("jobs: runner already started")
	}
	if r.opt.Work {
		if err := r.live.beat(ctx, r.opt.ID); err != nil {
			return fmt.Errorf("jobs: heartbeat: %w", err)
		}
		if _, err := r.rescueOrphans(ctx); err != nil {
			return err
		}
		// Before this process works any job: a job of its own that completed between reconciliation's read of
		// the pending documents and its insert would no longer block the insert, and its document would be
		// processed twice.
		r.reconcileAtStart(ctx)
		// Job contexts descend from this one: it must outlive the start-up ctx.
		runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		if err := r.client.Start(runCtx); err != nil {
			cancel()
			return fmt.Errorf("jobs: start: %w", err)
		}
		r.cancel = cancel
		r.loops.Go(func() { r.heartbeatLoop(runCtx) })
		r.loops.Go(func() { r.rescueLoop(runCtx) })
	} else {
		r.reconcileAtStart(ctx)
	}
	r.started = true
	return nil
}

// reconcileAtStart runs Reconcile and logs its outcome; a failure does not stop the start.
func (r *Runner) reconcileAtStart(ctx context.Context) {
	if r.docs == nil {
		return
	}
	n, err := r.Reconcile(ctx)
	if err != nil {
		r.opt.Logger.Error("jobs: start-up reconciliation failed", slog.Any("err", err))
	} else if n > 0 {
		r.opt.Logger.Info("jobs: re-enqueued interrupted documents", slog.Int("documents", n))
	}
}

// Stop stops working gracefully: no new jobs start; running ones get Options.StopTimeout to finish, then
// are cancelled and released (their documents go back to queued and another process, or the next start,
// picks them up). If ctx ends first, running jobs are cancelled at once. Stop is safe to call more than
// once and on a Runner that never started.
func (r *Runner) Stop(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.started || r.stopped || !r.opt.Work {
		r.stopped = true
		return nil
	}
	r.stopped = true
	err := r.client.Stop(ctx)
	if err != nil {
		hard, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
		err = r.client.StopAndCancel(hard)
		cancel()
	}
	// The heartbeat stops only now: jobs finishing during a soft stop must not look orphaned.
	r.cancel()
	r.loops.Wait()
	gone, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if derr := r.live.remove(gone, r.opt.ID); derr != nil {
		r.opt.Logger.Warn("jobs: remove heartbeat", slog.Any("err", derr))
	}
	if err != nil {
		return fmt.Errorf("jobs: stop: %w", err)
	}
	return nil
}

// Close stops the Runner if it runs (with a short grace) and releases the jobs database it opened (the
// SQLite file; a PostgreSQL pool belongs to the store).
func (r *Runner) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), r.opt.StopTimeout+5*time.Second)
	defer cancel()
	err := r.Stop(ctx)
	return errors.Join(err, r.closeDB())
}

// backoff is the retry policy of every job: exponential from base, capped at max, with jitter so that
// jobs failing together (an embedder outage) do not all come back at once.
type backoff struct{ base, max time.Duration }

// NextRetry implements river.ClientRetryPolicy.
func (b *backoff) NextRetry(job *rivertype.JobRow) time.Time {
	n := max(job.Attempt, 1)
	d := float64(b.base) * math.Pow(2, float64(n-1))
	d = min(d, float64(b.max))
	d *= 0.9 + 0.2*mrand.Float64()
	return time.Now().Add(time.Duration(d))
}

// errorHandler logs failed attempts; the retry decision stays with the workers and the retry policy.
type errorHandler struct{ log *slog.Logger }

// HandleError implements river.ErrorHandler.
func (h *errorHandler) HandleError(ctx context.Context, job *rivertype.JobRow, err error) *river.ErrorHandlerResult {
	h.log.Warn("jobs: attempt failed", slog.String("kind", job.Kind), slog.Int64("job", job.ID),
		slog.Int("attempt", job.Attempt), slog.Int("max_attempts", job.MaxAttempts), slog.Any("err", err))
	return nil
}

// HandlePanic implements river.ErrorHandler. The workers recover their own panics; this sees only River's.
func (h *errorHandler) HandlePanic(ctx context.Context, job *rivertype.JobRow, panicVal any, trace string) *river.ErrorHandlerResult {
	h.log.Error("jobs: attempt panicked", slog.String("kind", job.Kind), slog.Int64("job", job.ID),
		slog.Any("panic", panicVal), slog.String("trace", trace))
	return nil
}

func newClientID() string {
	host, _ := os.Hostname()
	host = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '_'
	}, host)
	if len(host) > 60 {
		host = host[:60]
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
}
