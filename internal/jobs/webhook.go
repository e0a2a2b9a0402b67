package jobs

import (
	"context"
	"errors"
	"log/slog"
	"math"
	mrand "math/rand/v2"
	"runtime/debug"
	"time"

	"github.com/riverqueue/river"

	"github.com/ragd/ragd/internal/rag"
)

const queueWebhooks = "webhooks"

// Deliverer makes one attempt at delivering a webhook event (*webhooks.Service).
type Deliverer interface {
	// Deliver tries ev once; final says no retry follows a failure. nil when delivered; an error wrapping
	// rag.ErrNotFound (the webhook is gone) or a *rag.Error with CodeInvalid (its URL may no longer be
	// reached) stops the retries; any other error is retried.
	Deliver(ctx context.Context, ev rag.WebhookEvent, attempt int, final bool) error
}

// WebhookArgs are the arguments of a webhook delivery job: one event to one webhook.
type WebhookArgs struct {
	rag.WebhookEvent
}

// Kind implements river.JobArgs.
func (WebhookArgs) Kind() string { return "ragd_webhook" }

// EnqueueWebhook queues the delivery of ev to its webhook: Options.WebhookMaxAttempts tries, the n-th
// retry after WebhookRetryBase·2^(n-1) (at most WebhookRetryMax, ±10%). CodeInvalid for an event without a
// webhook or ID; CodeDBError when the jobs database cannot take it.
func (r *Runner) EnqueueWebhook(ctx context.Context, ev rag.WebhookEvent) error {
	if ev.WebhookID == "" || ev.ID == "" || ev.Event == "" {
		return rag.Errorf(rag.CodeInvalid, "a webhook job needs a webhook, an event and its id")
	}
	_, err := r.client.Insert(ctx, WebhookArgs{ev}, &river.InsertOpts{Queue: queueWebhooks, MaxAttempts: r.opt.WebhookMaxAttempts})
	if err != nil {
		return rag.WrapError(rag.CodeDBError, err, "cannot queue the webhook delivery")
	}
	return nil
}

// webhookWorker runs deliveries through the Deliverer with the webhooks' own back-off.
type webhookWorker struct {
	river.WorkerDefaults[WebhookArgs]
	r *Runner
}

// Timeout implements river.Worker: an attempt is bounded by the Deliverer's own timeout; this is a backstop.
func (w *webhookWorker) Timeout(*river.Job[WebhookArgs]) time.Duration { return 5 * time.Minute }

// NextRetry implements river.Worker.
func (w *webhookWorker) NextRetry(job *river.Job[WebhookArgs]) time.Time {
	n := max(job.Attempt, 1)
	d := float64(w.r.opt.WebhookRetryBase) * math.Pow(2, float64(n-1))
	d = min(d, float64(w.r.opt.WebhookRetryMax))
	d *= 0.9 + 0.2*mrand.Float64()
	return time.Now().Add(time.Duration(d))
}

// Work implements river.Worker.
func (w *webhookWorker) Work(ctx context.Context, job *river.Job[WebhookArgs]) (err error) {
	defer func() {
		if v := recover(); v != nil {
			w.r.opt.Logger.Error("jobs: webhook delivery panicked", slog.String("webhook", job.Args.WebhookID),
				slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
			err = rag.Errorf(rag.CodeInternal, "webhook delivery crashed")
		}
	}()
	err = w.r.opt.Webhooks.Deliver(ctx, job.Args.WebhookEvent, job.Attempt, job.Attempt >= job.MaxAttempts)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return err
	case errors.Is(err, rag.ErrNotFound), rag.ErrorCode(err) == rag.CodeInvalid:
		return river.JobCancel(err)
	}
	return err
}
