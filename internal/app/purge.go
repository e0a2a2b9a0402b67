package app

import (
	"context"
	"log/slog"
	"time"
)

// PurgeJob is the name of the periodic job that removes deleted documents for good once RAGD_PURGE_AFTER
// has passed since their deletion (docs/security.md "Deletion").
const PurgeJob = "documents.purge"

// purgeBatch is how many documents one transaction of the purge removes.
const purgeBatch = 100

// PurgeInterval is how often the purge job runs for a window of after: a quarter of it, between a second
// and an hour, so that a document is gone at most that long after its window ends.
func PurgeInterval(after time.Duration) time.Duration {
	return min(max(after/4, time.Second), time.Hour)
}

// Purge removes every document deleted more than Config.PurgeAfter ago (by the App's clock), a batch per
// transaction, and returns how many it removed.
func (a *App) Purge(ctx context.Context) (int, error) {
	before := a.now().Add(-a.Config.PurgeAfter)
	n := 0
	for {
		ids, err := a.Store.PurgeDocuments(ctx, before, purgeBatch)
		for _, id := range ids {
			a.Logger.Info("deleted document purged", slog.String("document", id))
		}
		n += len(ids)
		if err != nil || len(ids) < purgeBatch {
			return n, err
		}
	}
}

// now is the App's clock (Now, else time.Now).
func (a *App) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}
