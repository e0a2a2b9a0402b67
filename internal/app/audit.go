package app

import (
	"context"
	"log/slog"

	"github.com/ragd/ragd/internal/audit"
)

// AuditPruneJob is the name of the periodic job that removes audit events older than RAGD_AUDIT_RETENTION.
const AuditPruneJob = "audit.prune"

// OpenAudit starts the audit log's writer into the store (once; later calls return the same log) and makes
// it the process's log for audit.Record. Close stops it after writing what is queued, before the store
// closes.
func (a *App) OpenAudit() *audit.Log {
	if a.Audit != nil {
		return a.Audit
	}
	st, ok := a.Store.(audit.Store)
	if !ok {
		return nil
	}
	l := audit.New(st, audit.Options{Logger: a.Logger})
	ctx, cancel := context.WithCancel(context.Background())
	go l.Run(ctx)
	a.Audit = l
	audit.SetDefault(l)
	a.closers = append(a.closers, func() error {
		cancel()
		l.Wait()
		audit.SetDefault(nil)
		return nil
	})
	return l
}

// PruneAudit removes the audit events older than Config.AuditRetention (none when it is 0) by the App's
// clock, and returns how many.
func (a *App) PruneAudit(ctx context.Context) (int, error) {
	if a.Config.AuditRetention <= 0 {
		return 0, nil
	}
	st, ok := a.Store.(audit.Store)
	if !ok {
		return 0, nil
	}
	n, err := st.PruneAudit(ctx, a.now().Add(-a.Config.AuditRetention))
	if n > 0 {
		a.Logger.Info("audit events past their retention removed", slog.Int("events", n))
	}
	return n, err
}
