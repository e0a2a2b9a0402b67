package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/ragd/ragd/internal/jobs"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/webhooks"
)

// openWebhooks builds the collections' webhooks (docs/integrations.md "Webhooks"). Their events are
// delivered by the job runner: a process that has not opened one (a command such as `ragd ingest`) opens
// an insert-only runner when it first has an event to queue, and `ragd serve` or `ragd worker` delivers it.
func (a *App) openWebhooks() error {
	st, ok := a.Store.(webhooks.Store)
	if !ok {
		return fmt.Errorf("store %T keeps no webhooks", a.Store)
	}
	cfg := a.Config.Webhooks
	a.Webhooks = webhooks.New(st, a.enqueueWebhook, webhooks.Options{AllowPrivate: cfg.AllowPrivate, Timeout: cfg.Timeout, Logger: a.Logger})
	return nil
}

func (a *App) enqueueWebhook(ctx context.Context, ev rag.WebhookEvent) error {
	r, err := a.OpenJobs(ctx, jobs.Options{}) // the runner already open, else an insert-only one
	if err != nil {
		return err
	}
	return r.EnqueueWebhook(ctx, ev)
}

// emit queues an event for the webhooks of a collection; a failure is logged, never the work's.
func (a *App) emit(ctx context.Context, event, collectionID string, data any) {
	if err := a.Webhooks.Emit(ctx, event, collectionID, data); err != nil {
		a.Logger.Warn("webhooks: event not queued", slog.String("event", event), slog.String("collection", collectionID), slog.Any("err", err))
	}
}

// documentSettled is the ingestion's Settled: document.ready or document.failed.
func (a *App) documentSettled(ctx context.Context, doc *rag.Document, failure error) {
	event := rag.EventDocumentReady
	if failure != nil {
		event = rag.EventDocumentFailed
	}
	a.emit(ctx, event, doc.CollectionID, webhooks.DocumentData(doc))
}

// questionAnswered is the boards' Answered: question.answered.
func (a *App) questionAnswered(ctx context.Context, q *rag.Question, ans *rag.BoardAnswer) {
	a.emit(ctx, rag.EventQuestionAnswered, q.CollectionID, webhooks.AnswerData(q, ans))
}
