package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"

	"github.com/ragd/ragd/internal/migration"
)

// River (without its commercial add-ons) only notices that a worker died when a running job passes
// RescueStuckJobsAfter, which must exceed the longest job: far too late for a restarted server. So each
// working Runner keeps a heartbeat row in a small table of its own beside River's (ragd_job_client, made by the
// numbered migrations of migrate.go), and running jobs whose worker has no fresh heartbeat are released through
// River's own driver operations.

// beat is one worker's heartbeat as read back.
type beat struct {
	ID   string
	Host string // hostKey() of the worker's machine and PID namespace, "" when unknown
	PID  int
	Age  time.Duration
}

// liveness stores heartbeats; one implementation per database engine.
type liveness interface {
	// init applies the pending numbered migrations of the heartbeat table (migrate.go).
	init(ctx context.Context) error
	beat(ctx context.Context, id string) error
	remove(ctx context.Context, id string) error
	list(ctx context.Context) ([]beat, error)
	// beatTx reads one worker's heartbeat inside a rescuer's transaction.
	beatTx(ctx context.Context, tx riverdriver.ExecutorTx, id string) (beat, bool, error)
	// prune forgets workers silent for longer than d.
	prune(ctx context.Context, d time.Duration) error
	// lockSQL serialises rescuers inside a transaction ("" when transactions already do).
	lockSQL() string
}

type sqliteLiveness struct {
	db     *sql.DB
	unwrap func(riverdriver.ExecutorTx) *sql.Tx
}

// init applies jobs.db's pending migrations (migrate.go) in one immediate transaction: other processes
// opening the file wait on its write lock.
func (l *sqliteLiveness) init(ctx context.Context) error {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS ragd_jobs_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)`); err != nil {
		return err
	}
	rows, err := tx.QueryContext(ctx, `SELECT version FROM ragd_jobs_migrations`)
	if err != nil {
		return err
	}
	var done []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return err
		}
		done = append(done, v)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	exec := func(ctx context.Context, q string, args ...any) error {
		_, err := tx.ExecContext(ctx, q, args...)
		return err
	}
	if _, err := migration.Apply(ctx, sqliteMigrations, done, exec,
		`INSERT INTO ragd_jobs_migrations (version, name) VALUES (?, ?)`); err != nil {
		return err
	}
	return tx.Commit()
}

func (l *sqliteLiveness) beat(ctx context.Context, id string) error {
	_, err := l.db.ExecContext(ctx, `INSERT INTO ragd_job_client (id, host, pid, heartbeat_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at`, id, hostKey(), os.Getpid(), time.Now().UnixMilli())
	return err
}

func (l *sqliteLiveness) remove(ctx context.Context, id string) error {
	_, err := l.db.ExecContext(ctx, `DELETE FROM ragd_job_client WHERE id = ?`, id)
	return err
}

func (l *sqliteLiveness) prune(ctx context.Context, d time.Duration) error {
	_, err := l.db.ExecContext(ctx, `DELETE FROM ragd_job_client WHERE heartbeat_at < ?`, time.Now().Add(-d).UnixMilli())
	return err
}

func (l *sqliteLiveness) list(ctx context.Context) ([]beat, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT id, host, pid, heartbeat_at FROM ragd_job_client`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	now := time.Now().UnixMilli()
	var out []beat
	for rows.Next() {
		var b beat
		var at int64
		if err := rows.Scan(&b.ID, &b.Host, &b.PID, &at); err != nil {
			return nil, err
		}
		b.Age = time.Duration(now-at) * time.Millisecond
		out = append(out, b)
	}
	return out, rows.Err()
}

func (l *sqliteLiveness) beatTx(ctx context.Context, tx riverdriver.ExecutorTx, id string) (beat, bool, error) {
	b := beat{ID: id}
	var at int64
	err := l.unwrap(tx).QueryRowContext(ctx, `SELECT host, pid, heartbeat_at FROM ragd_job_client WHERE id = ?`, id).Scan(&b.Host, &b.PID, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return b, false, nil
	}
	b.Age = time.Duration(time.Now().UnixMilli()-at) * time.Millisecond
	return b, err == nil, err
}

func (l *sqliteLiveness) lockSQL() string { return "" } // immediate transactions hold the write lock

// pgLiveness keeps heartbeats in PostgreSQL with the database's clock, so that workers on machines whose
// clocks disagree still agree on ages.
type pgLiveness struct {
	pool   *pgxpool.Pool
	prefix string // pgPrefix of the schema
	table  string // the heartbeat table, with prefix
	unwrap func(riverdriver.ExecutorTx) pgx.Tx
}

// pgPrefix is what names a table of schema: `"schema".`, or nothing for the search_path.
func pgPrefix(schema string) string {
	if schema == "" {
		return ""
	}
	return pgx.Identifier{schema}.Sanitize() + "."
}

// init applies the pending migrations (migrate.go) in one transaction under an advisory lock that other
// processes wait on.
func (l *pgLiveness) init(ctx context.Context) error {
	tx, err := l.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // a no-op after Commit
	p := strings.NewReplacer("{P}", l.prefix)
	exec := func(ctx context.Context, q string, args ...any) error {
		_, err := tx.Exec(ctx, p.Replace(q), args...)
		return err
	}
	if err := exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrateLockKey); err != nil {
		return err
	}
	if err := exec(ctx, `CREATE TABLE IF NOT EXISTS {P}ragd_jobs_migrations (
		version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return err
	}
	rows, _ := tx.Query(ctx, p.Replace(`SELECT version FROM {P}ragd_jobs_migrations`))
	done, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return err
	}
	if _, err := migration.Apply(ctx, postgresMigrations, done, exec,
		`INSERT INTO {P}ragd_jobs_migrations (version, name) VALUES ($1, $2)`); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

func (l *pgLiveness) beat(ctx context.Context, id string) error {
	_, err := l.pool.Exec(ctx, `INSERT INTO `+l.table+` (id, host, pid, heartbeat_at) VALUES ($1, $2, $3, now())
		ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()`, id, hostKey(), os.Getpid())
	return err
}

func (l *pgLiveness) remove(ctx context.Context, id string) error {
	_, err := l.pool.Exec(ctx, `DELETE FROM `+l.table+` WHERE id = $1`, id)
	return err
}

func (l *pgLiveness) prune(ctx context.Context, d time.Duration) error {
	_, err := l.pool.Exec(ctx, `DELETE FROM `+l.table+` WHERE heartbeat_at < now() - $1::bigint * interval '1 millisecond'`, d.Milliseconds())
	return err
}

func (l *pgLiveness) list(ctx context.Context) ([]beat, error) {
	rows, err := l.pool.Query(ctx, `SELECT id, host, pid, (extract(epoch FROM now() - heartbeat_at) * 1000)::bigint FROM `+l.table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []beat
	for rows.Next() {
		var b beat
		var ms int64
		if err := rows.Scan(&b.ID, &b.Host, &b.PID, &ms); err != nil {
			return nil, err
		}
		b.Age = time.Duration(ms) * time.Millisecond
		out = append(out, b)
	}
	return out, rows.Err()
}

func (l *pgLiveness) beatTx(ctx context.Context, tx riverdriver.ExecutorTx, id string) (beat, bool, error) {
	b := beat{ID: id}
	var ms int64
	err := l.unwrap(tx).QueryRow(ctx, `SELECT host, pid, (extract(epoch FROM now() - heartbeat_at) * 1000)::bigint FROM `+l.table+`
		WHERE id = $1`, id).Scan(&b.Host, &b.PID, &ms)
	if errors.Is(err, pgx.ErrNoRows) {
		return b, false, nil
	}
	b.Age = time.Duration(ms) * time.Millisecond
	return b, err == nil, err
}

func (l *pgLiveness) lockSQL() string { return `SELECT pg_advisory_xact_lock(7411820190355208571)` }

// hostKey names this machine's boot and PID namespace: two workers with the same key see the same
// process IDs, so one can tell at once that the other's process is gone. "" where that cannot be known.
var hostKey = sync.OnceValue(func() string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(boot)) + "/" + ns
})

// rescueOrphans releases running jobs whose worker is dead: made available again (an attempt is counted
// and an error recorded), or discarded when that was their last attempt. It returns how many it released.
func (r *Runner) rescueOrphans(ctx context.Context) (int, error) {
	// Jobs before heartbeats: a worker writes its heartbeat before it takes any job, so every job read here
	// belongs to a worker whose heartbeat the next read sees, if it is alive.
	var stuck []*rivertype.JobRow
	for after := int64(0); ; {
		batch, err := r.exec.JobGetStuck(ctx, &riverdriver.JobGetStuckParams{
			AfterID: after, Max: 500, Schema: r.opt.Schema, StuckHorizon: time.Now().Add(24 * time.Hour),
		})
		if err != nil {
			return 0, fmt.Errorf("jobs: list running jobs: %w", err)
		}
		stuck = append(stuck, batch...)
		if len(batch) < 500 {
			break
		}
		after = batch[len(batch)-1].ID
	}
	if len(stuck) == 0 {
		return 0, nil
	}
	beats, err := r.live.list(ctx)
	if err != nil {
		return 0, fmt.Errorf("jobs: list heartbeats: %w", err)
	}
	alive := map[string]bool{r.opt.ID: true}
	ages := map[string]time.Duration{}
	for _, b := range beats {
		if b.ID != r.opt.ID {
			alive[b.ID], ages[b.ID] = r.isAlive(b), b.Age
		}
	}
	n := 0
	for _, job := range stuck {
		owner := lastAttemptedBy(job)
		if alive[owner] {
			continue
		}
		age, seen := ages[owner]
		r.opt.Logger.Debug("jobs: worker of a running job is dead", slog.Int64("job", job.ID), slog.String("worker", owner),
			slog.Bool("heartbeat", seen), slog.Duration("heartbeat_age", age))
		ok, err := r.release(ctx, job, owner)
		if err != nil {
			return n, err
		}
		if ok {
			n++
		}
	}
	return n, nil
}

func (r *Runner) isAlive(b beat) bool {
	if b.Age > r.opt.DeadAfter {
		return false
	}
	// Another process of this machine that is gone is dead now. (Runners in one process, as in tests, share
	// a PID; and a PID reused by a new process only delays the verdict until the heartbeat is stale.)
	if local := hostKey(); local != "" && b.Host == local && b.PID != os.Getpid() {
		return processExists(b.PID)
	}
	return true
}

func lastAttemptedBy(job *rivertype.JobRow) string {
	if len(job.AttemptedBy) == 0 {
		return ""
	}
	return job.AttemptedBy[len(job.AttemptedBy)-1]
}

// release moves one orphaned job out of running, unless another rescuer or its worker got there first.
func (r *Runner) release(ctx context.Context, job *rivertype.JobRow, owner string) (bool, error) {
	tx, err := r.exec.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("jobs: release job %d: %w", job.ID, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit it is a no-op
	if q := r.live.lockSQL(); q != "" {
		if err := tx.Exec(ctx, q); err != nil {
			return false, fmt.Errorf("jobs: release job %d: lock: %w", job.ID, err)
		}
	}
	cur, err := tx.JobGetByID(ctx, &riverdriver.JobGetByIDParams{ID: job.ID, Schema: r.opt.Schema})
	if err != nil {
		return false, fmt.Errorf("jobs: release job %d: %w", job.ID, err)
	}
	if cur.State != rivertype.JobStateRunning || len(cur.AttemptedBy) != len(job.AttemptedBy) || lastAttemptedBy(cur) != owner {
		return false, nil
	}
	// Judge the worker again under the lock: it may have beaten since the list was read.
	if b, ok, err := r.live.beatTx(ctx, tx, owner); err != nil {
		return false, fmt.Errorf("jobs: release job %d: heartbeat: %w", job.ID, err)
	} else if ok && r.isAlive(b) {
		return false, nil
	}
	now := time.Now().UTC()
	errData, err := json.Marshal(rivertype.AttemptError{
		At: now, Attempt: cur.Attempt, Error: fmt.Sprintf("worker %s stopped while running the job", owner),
	})
	if err != nil {
		return false, err
	}
	final := cur.Attempt >= cur.MaxAttempts
	p := riverdriver.JobSetStateErrorAvailable(cur.ID, now, errData, nil)
	if final {
		p = riverdriver.JobSetStateDiscarded(cur.ID, now, errData, nil)
	}
	if _, err := tx.JobSetStateIfRunningMany(ctx, &riverdriver.JobSetStateIfRunningManyParams{
		ID: []int64{p.ID}, Attempt: []*int{p.Attempt}, ErrData: [][]byte{p.ErrData}, FinalizedAt: []*time.Time{p.FinalizedAt},
		MetadataDoMerge: []bool{false}, MetadataUpdates: [][]byte{nil}, Now: &now, ScheduledAt: []*time.Time{p.ScheduledAt},
		Schema: r.opt.Schema, State: []rivertype.JobState{p.State},
	}); err != nil {
		return false, fmt.Errorf("jobs: release job %d: %w", job.ID, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return false, fmt.Errorf("jobs: release job %d: %w", job.ID, err)
	}
	r.opt.Logger.Warn("jobs: released a job whose worker died", slog.Int64("job", cur.ID), slog.String("kind", cur.Kind),
		slog.String("worker", owner), slog.String("by", r.opt.ID), slog.Int("attempt", cur.Attempt), slog.Bool("discarded", final))
	if final {
		r.abandoned(ctx, cur)
	}
	return true, nil
}

// heartbeatLoop keeps this worker's heartbeat fresh until ctx ends. It runs apart from the rescue loop so
// that a slow rescue never makes this worker look dead.
func (r *Runner) heartbeatLoop(ctx context.Context) {
	t := time.NewTicker(r.opt.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := r.live.beat(ctx, r.opt.ID); err != nil && ctx.Err() == nil {
			r.opt.Logger.Error("jobs: heartbeat", slog.Any("err", err))
		}
	}
}

// rescueLoop releases the jobs of dead workers until ctx ends.
func (r *Runner) rescueLoop(ctx context.Context) {
	t := time.NewTicker(r.opt.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := r.rescueOrphans(ctx); err != nil && ctx.Err() == nil {
			r.opt.Logger.Error("jobs: release orphaned jobs", slog.Any("err", err))
		}
		if err := r.live.prune(ctx, max(time.Hour, 10*r.opt.DeadAfter)); err != nil && ctx.Err() == nil {
			r.opt.Logger.Warn("jobs: prune heartbeats", slog.Any("err", err))
		}
	}
}
