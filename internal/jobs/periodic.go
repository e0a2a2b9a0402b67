package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"runtime/debug"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Schedule says when a periodic job runs next (river.PeriodicSchedule).
type Schedule interface {
	// Next returns the first run time after t.
	Next(t time.Time) time.Time
}

// Every runs a periodic job every d (at least one second), counted from when this process's scheduler
// started it.
func Every(d time.Duration) Schedule { return river.PeriodicInterval(d) }

// Daily runs a periodic job once a day at hour:minute in loc (nil means UTC).
func Daily(hour, minute int, loc *time.Location) Schedule {
	if loc == nil {
		loc = time.UTC
	}
	return daily{hour: hour, minute: minute, loc: loc}
}

type daily struct {
	hour, minute int
	loc          *time.Location
}

func (d daily) Next(t time.Time) time.Time {
	t = t.In(d.loc)
	next := time.Date(t.Year(), t.Month(), t.Day(), d.hour, d.minute, 0, 0, d.loc)
	if !next.After(t) {
		next = time.Date(t.Year(), t.Month(), t.Day()+1, d.hour, d.minute, 0, 0, d.loc)
	}
	return next
}

// PeriodicFunc is the work of a periodic job. An error is logged; the job runs again at its next time.
type PeriodicFunc func(ctx context.Context) error

// PeriodicOptions adjust one periodic job.
type PeriodicOptions struct {
	// RunOnStart also runs the job when a scheduler starts (a process becomes River's leader), which
	// matters for long intervals that a restart would otherwise keep postponing.
	RunOnStart bool
}

var periodicName = regexp.MustCompile(`^[a-z][a-z0-9_.-]{0,63}$`)

// AddPeriodic registers a periodic job: fn runs on schedule in one process among all that share the
// database (River's elected leader inserts the job, any working Runner runs it), never twice at once.
// Every working process should register the same names before Start, since any of them may become the
// scheduler or run the job; an insert-only Runner accepts them and never schedules. name is lowercase
// letters, digits and ._- (at most 64).
func (r *Runner) AddPeriodic(name string, schedule Schedule, fn PeriodicFunc, opts *PeriodicOptions) error {
	if !periodicName.MatchString(name) {
		return fmt.Errorf("jobs: periodic job name %q is not valid", name)
	}
	if schedule == nil || fn == nil {
		return errors.New("jobs: periodic job needs a schedule and a function")
	}
	if opts == nil {
		opts = &PeriodicOptions{}
	}
	r.mu.Lock()
	started := r.started
	r.mu.Unlock()
	if started {
		return fmt.Errorf("jobs: periodic job %q added after start", name)
	}
	r.pmu.Lock()
	defer r.pmu.Unlock()
	if _, ok := r.periodic[name]; ok {
		return fmt.Errorf("jobs: periodic job %q added twice", name)
	}
	r.periodic[name] = fn
	_, err := r.client.PeriodicJobs().AddSafely(river.NewPeriodicJob(schedule,
		func() (river.JobArgs, *river.InsertOpts) { return PeriodicArgs{Name: name}, nil },
		&river.PeriodicJobOpts{ID: name, RunOnStart: opts.RunOnStart}))
	if err != nil {
		delete(r.periodic, name)
		return fmt.Errorf("jobs: periodic job %q: %w", name, err)
	}
	return nil
}

// PeriodicArgs are the arguments of a periodic job run.
type PeriodicArgs struct {
	Name string `json:"name" river:"unique"`
}

// Kind implements river.JobArgs.
func (PeriodicArgs) Kind() string { return "ragd_periodic" }

// InsertOpts implements river.JobArgsWithInsertOpts: one attempt (the next run is the retry) and at most
// one live run per name, so a slow run is not joined by the next.
func (PeriodicArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queuePeriodic, MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: liveStates}}
}

type periodicWorker struct {
	river.WorkerDefaults[PeriodicArgs]
	r *Runner
}

// Timeout implements river.Worker.
func (w *periodicWorker) Timeout(*river.Job[PeriodicArgs]) time.Duration { return w.r.opt.JobTimeout }

// Work implements river.Worker.
func (w *periodicWorker) Work(ctx context.Context, job *river.Job[PeriodicArgs]) (err error) {
	w.r.pmu.RLock()
	fn := w.r.periodic[job.Args.Name]
	w.r.pmu.RUnlock()
	if fn == nil {
		// Registered by another process (a newer version?) but not by this one.
		return river.JobCancel(fmt.Errorf("periodic job %q is not registered in worker %s", job.Args.Name, w.r.opt.ID))
	}
	defer func() {
		if v := recover(); v != nil {
			w.r.opt.Logger.Error("jobs: periodic job panicked", slog.String("name", job.Args.Name),
				slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
			err = fmt.Errorf("periodic job %q panicked: %v", job.Args.Name, v)
		}
	}()
	if err := fn(ctx); err != nil {
		return fmt.Errorf("periodic job %q: %w", job.Args.Name, err)
	}
	return nil
}

func unmarshalArgs(job *rivertype.JobRow, v any) error {
	return json.Unmarshal(job.EncodedArgs, v)
}
