package server

import (
	"context"
	"log/slog"
	"sync"

	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
)

// localQueue processes uploaded documents in-process with a few workers. It is the server's fallback when
// no job runner is configured (WithEnqueuer): uploads are recorded durably by Submit before they are queued
// here, and documents left queued or processing by a previous process are queued again at start.
type localQueue struct {
	ingest *ingest.Pipeline
	log    *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// requeued is closed when the documents of a previous process have been queued again.
	requeued chan struct{}

	mu      sync.Mutex
	pending []string
	queued  map[string]bool // document IDs in pending (a document is processed once per enqueue burst)
	running map[string]bool // document IDs being processed: never two workers on one document
	wake    chan struct{}
}

func newLocalQueue(p *ingest.Pipeline, store rag.Store, log *slog.Logger, workers int) *localQueue {
	if workers < 1 {
		workers = 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	q := &localQueue{ingest: p, log: log, ctx: ctx, cancel: cancel, queued: map[string]bool{}, running: map[string]bool{}, wake: make(chan struct{}, 1), requeued: make(chan struct{})}
	for range workers {
		q.wg.Add(1)
		go q.work()
	}
	q.wg.Add(1)
	go func() {
		defer q.wg.Done()
		defer close(q.requeued)
		q.requeue(store)
	}()
	return q
}

// requeue queues the documents a previous process left unfinished.
func (q *localQueue) requeue(store rag.Store) {
	docs, err := store.DocumentsByStatus(q.ctx, []rag.Status{rag.StatusQueued, rag.StatusProcessing}, 10000)
	if err != nil {
		if q.ctx.Err() == nil {
			q.log.Error("re-queue unfinished documents", slog.Any("err", err))
		}
		return
	}
	for _, d := range docs {
		if d.PendingHash != "" {
			_ = q.EnqueueIngest(q.ctx, d.ID, d.PendingHash)
		}
	}
	if len(docs) > 0 {
		q.log.Info("re-queued unfinished documents", slog.Int("count", len(docs)))
	}
}

// EnqueueIngest queues a document for processing; it never blocks.
func (q *localQueue) EnqueueIngest(_ context.Context, documentID, _ string) error {
	q.mu.Lock()
	if !q.queued[documentID] {
		q.queued[documentID] = true
		q.pending = append(q.pending, documentID)
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return nil
}

// next takes the first pending document that no worker is processing.
func (q *localQueue) next() (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, id := range q.pending {
		if q.running[id] {
			continue
		}
		q.pending = append(q.pending[:i], q.pending[i+1:]...)
		delete(q.queued, id)
		q.running[id] = true
		return id, true
	}
	return "", false
}

func (q *localQueue) work() {
	defer q.wg.Done()
	for {
		id, ok := q.next()
		if !ok {
			select {
			case <-q.ctx.Done():
				return
			case <-q.wake:
				continue
			}
		}
		// Process records failures on the document itself; the log gets the rest.
		if err := q.ingest.Process(q.ctx, id); err != nil && q.ctx.Err() == nil {
			q.log.Warn("ingestion failed", slog.String("document", id), slog.String("code", string(rag.ErrorCode(err))),
				slog.String("reason", rag.ErrorMessage(err)))
		}
		// Several workers share one wake-up: pass it on while work is left.
		q.mu.Lock()
		delete(q.running, id)
		more := len(q.pending) > 0
		q.mu.Unlock()
		if more {
			select {
			case q.wake <- struct{}{}:
			default:
			}
		}
		if q.ctx.Err() != nil {
			return
		}
	}
}

// close stops the workers, cancelling the documents in progress: they stay "processing" and are re-queued
// at the next start.
func (q *localQueue) close() {
	q.cancel()
	q.wg.Wait()
}
