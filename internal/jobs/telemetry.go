package jobs

import (
	"context"
	"errors"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"

	"github.com/ragd/ragd/internal/telemetry"
)

// workTelemetry is the River worker middleware that counts, times and traces every job attempt this
// process works (ragd_jobs_worked_total, ragd_job_duration_seconds, a "job <kind>" span). A periodic job is
// labelled by its name ("periodic:<name>"), whose set is fixed by the code.
type workTelemetry struct{ river.MiddlewareDefaults }

func (*workTelemetry) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	kind := job.Kind
	if kind == (PeriodicArgs{}).Kind() {
		var a PeriodicArgs
		if unmarshalArgs(job, &a) == nil && a.Name != "" {
			kind = "periodic:" + a.Name
		}
	}
	ctx, done := telemetry.Job(ctx, kind, job.Attempt)
	err := doInner(ctx)
	done(outcome(ctx, job, err), err)
	return err
}

// outcome names what becomes of a job attempt that returned err: succeeded, cancelled (permanent failure),
// snoozed, released (shutdown: River runs it again without counting the attempt), discarded (the last
// attempt failed) or retried.
func outcome(ctx context.Context, job *rivertype.JobRow, err error) string {
	var cancel *rivertype.JobCancelError
	var snooze *rivertype.JobSnoozeError
	switch {
	case err == nil:
		return "succeeded"
	case errors.As(err, &cancel):
		return "cancelled"
	case errors.As(err, &snooze):
		return "snoozed"
	case errors.Is(ctx.Err(), context.Canceled):
		return "released"
	case job.Attempt >= job.MaxAttempts:
		return "discarded"
	}
	return "retried"
}

// JobCounts counts the jobs in the queue by River state (available, scheduled, running, retryable,
// completed, cancelled, discarded, pending), whichever process inserted or works them.
func (r *Runner) JobCounts(ctx context.Context) (map[string]int, error) {
	counts, err := r.exec.JobCountByAllStates(ctx, &riverdriver.JobCountByAllStatesParams{Schema: r.opt.Schema})
	if err != nil {
		return nil, err
	}
	out := make(map[string]int, len(rivertype.JobStates()))
	for _, st := range rivertype.JobStates() {
		out[string(st)] = counts[st]
	}
	return out, nil
}
