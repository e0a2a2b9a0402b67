package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ragd/ragd/internal/audit"
)

// runAudit is `ragd audit`: the audit log, newest first, filtered as GET /api/admin/audit filters it
// (docs/security.md "Audit log").
func runAudit(ctx context.Context, env *Env, args []string) error {
	fset := newFlagSet("audit")
	c := common{quiet: true}
	c.register(fset, env)
	var q audit.Query
	fset.StringVar(&q.Principal, "principal", "", "only events of this principal `ID` (e.g. user:alice)")
	fset.StringVar(&q.Action, "action", "", "only this `ACTION` (search, chat, document.read, document.download, document.upload, document.delete, document.restore, grant, key.created, key.revoked, login.failure)")
	fset.StringVar(&q.Document, "document", "", "only events that touched this document `ID`")
	fset.StringVar(&q.Outcome, "outcome", "", "only this `OUTCOME`: ok, denied or failed")
	since := fset.Duration("since", 0, "only events of this last `DURATION` (e.g. 24h)")
	fset.IntVar(&q.Limit, "limit", 100, fmt.Sprintf("at most this many events, 1 to %d", audit.MaxLimit))
	fset.Int64Var(&q.BeforeID, "before", 0, "only events older than this event `ID` (the next page)")
	asJSON := fset.Bool("json", false, "print JSON")
	pos, err := parse(fset, args, env.Stdout)
	if err != nil {
		return err
	}
	switch {
	case len(pos) != 0:
		return usageErr("ragd audit takes no arguments")
	case q.Limit < 1 || q.Limit > audit.MaxLimit:
		return usageErr("--limit must be between 1 and %d (got %d)", audit.MaxLimit, q.Limit)
	case *since < 0:
		return usageErr("--since must be positive (got %s)", *since)
	}
	if *since > 0 {
		q.Since = time.Now().Add(-*since)
	}
	a, err := c.open(ctx, env)
	if err != nil {
		return err
	}
	defer a.Close()
	st, ok := a.Store.(audit.Store)
	if !ok {
		return fmt.Errorf("store %T keeps no audit log", a.Store)
	}
	events, err := st.ListAudit(ctx, q)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(env.Stdout, map[string]any{"events": events})
	}
	for _, e := range events {
		fmt.Fprintf(env.Stdout, "%d  %s  %-14s %-18s %-6s %3d  %s  %s  %s\n", e.ID, e.At.Format(time.RFC3339), e.Principal, e.Action,
			e.Outcome, e.Status, e.Client, e.Target, strings.Join(e.Documents, ","))
	}
	fmt.Fprintf(env.Stdout, "%d event(s)\n", len(events))
	return nil
}
