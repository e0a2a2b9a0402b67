package sources

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/ragd/ragd/internal/connector"
	"github.com/ragd/ragd/internal/rag"
)

// watchSet is the watchers Watch runs, one per source of a kind that watches.
type watchSet struct {
	refresh chan struct{}
	mu      sync.Mutex
	running map[string]context.CancelFunc
}

// refreshWatches asks a running Watch to look for added and removed sources now.
func (s *Service) refreshWatches() {
	select {
	case s.watch.refresh <- struct{}{}:
	default:
	}
}

// Watch runs the watchers of the sources whose kind watches (connector.Watcher) until ctx ends: a change
// syncs the source once it has been quiet for Options.Debounce. Sources added or removed are picked up at
// once in this process (Add, Remove) and within Options.Refresh when another process changed them. Call
// it once per Service.
func (s *Service) Watch(ctx context.Context) {
	ws := s.watch
	var wg sync.WaitGroup
	defer func() {
		ws.mu.Lock()
		for _, cancel := range ws.running {
			cancel()
		}
		ws.mu.Unlock()
		wg.Wait()
	}()
	t := time.NewTicker(s.opt.Refresh)
	defer t.Stop()
	for {
		s.syncWatchers(ctx, ws, &wg)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-ws.refresh:
		}
	}
}

// syncWatchers starts the watchers of new sources and stops those of removed ones.
func (s *Service) syncWatchers(ctx context.Context, ws *watchSet, wg *sync.WaitGroup) {
	all, err := s.store.ListSources(ctx, "")
	if err != nil {
		if ctx.Err() == nil {
			s.opt.Logger.Warn("sources: list for watching", slog.Any("err", err))
		}
		return
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	live := map[string]bool{}
	for _, src := range all {
		live[src.ID] = true
		if _, ok := ws.running[src.ID]; ok {
			continue
		}
		creds, err := s.store.SourceCredentials(ctx, src.ID)
		if err != nil {
			continue
		}
		reader, err := s.opt.Kinds.New(src.Kind, s.config(src.Settings, creds))
		if err != nil {
			continue
		}
		w, ok := reader.(connector.Watcher)
		if !ok {
			continue
		}
		wctx, cancel := context.WithCancel(ctx)
		ws.running[src.ID] = cancel
		wg.Go(func() { s.watchOne(wctx, src, w) })
	}
	for id, cancel := range ws.running {
		if !live[id] {
			cancel()
			delete(ws.running, id)
		}
	}
}

// watchOne runs one source's watcher and syncs the source after each burst of changes.
func (s *Service) watchOne(ctx context.Context, src *rag.SyncSource, w connector.Watcher) {
	log := s.opt.Logger.With(slog.String("source", src.ID), slog.String("kind", src.Kind))
	changed := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			err := w.Watch(ctx, func() {
				select {
				case changed <- struct{}{}:
				default:
				}
			})
			if ctx.Err() != nil {
				return
			}
			// A watcher that stops (its folder vanished, the system's watch limit) is started again a
			// little later; the schedule's full syncs cover the meantime.
			log.Warn("source watcher stopped; restarting", slog.Any("err", err))
			select {
			case <-ctx.Done():
				return
			case <-time.After(10 * s.opt.Debounce):
			}
		}
	}()
	defer func() { <-done }()
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
		// Debounce: sync once the source has been quiet for a while.
		quiet := time.NewTimer(s.opt.Debounce)
	wait:
		for {
			select {
			case <-ctx.Done():
				quiet.Stop()
				return
			case <-changed:
				quiet.Reset(s.opt.Debounce)
			case <-quiet.C:
				break wait
			}
		}
		_, err := s.Sync(ctx, src.ID, TriggerWatch)
		if errors.Is(err, ErrBusy) {
			// Another sync runs and may have listed before this change: try again after it.
			select {
			case changed <- struct{}{}:
			default:
			}
		}
	}
}

// SyncSoon runs a sync of a source on request in the background, waiting for a running one to finish
// first (so a change made before the call is seen), and returns a channel that yields its outcome. The
// sync outlives the caller; Close stops it.
func (s *Service) SyncSoon(id string) <-chan error {
	out := make(chan error, 1)
	ctx := s.base
	s.back.Go(func() {
		for {
			_, err := s.Sync(ctx, id, TriggerRequest)
			if !errors.Is(err, ErrBusy) {
				out <- err
				return
			}
			select {
			case <-ctx.Done():
				out <- ctx.Err()
				return
			case <-time.After(250 * time.Millisecond):
			}
		}
	})
	return out
}
