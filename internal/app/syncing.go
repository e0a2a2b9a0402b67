package app

import (
	"context"
	"fmt"

	"github.com/ragd/ragd/internal/sources"
)

// SourcesJob is the name of the periodic job that syncs the sources whose schedule has come.
const SourcesJob = "sources.sync"

// openSources builds the sync engine of the collections' sources. A synced item's version is processed
// by the job runner once OpenJobs has opened it (a server, a worker), else at once in this process (a
// command that runs one sync).
func (a *App) openSources() error {
	st, ok := a.Store.(sources.Store)
	if !ok {
		return fmt.Errorf("store %T keeps no sources", a.Store)
	}
	process := func(ctx context.Context, id, hash string) error {
		if a.Jobs != nil {
			return a.Jobs.EnqueueIngest(ctx, id, hash)
		}
		return a.Ingest.Process(ctx, id)
	}
	a.Sources = sources.New(st, a.Ingest, process, sources.Options{
		Kinds: Kinds(),
		// Web, Git, Notion and Drive sources reach the network only through this client: it refuses
		// loopback, private and link-local addresses unless RAGD_FETCH_ALLOW_PRIVATE (docs/security.md).
		HTTP:     a.HTTP,
		MaxBytes: a.Config.MaxUploadBytes,
		Logger:   a.Logger,
	})
	a.closers = append(a.closers, a.Sources.Close)
	return nil
}
