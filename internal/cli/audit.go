package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ragd/ragd/internal/app"
	"github.com/ragd/ragd/internal/audit"
	"github.com/ragd/ragd/internal/rag"
)

// runAudit is `ragd audit`: the audit log, newest first, filtered as GET /api/admin/audit filters it
// (docs/security.md "Audit log").
func runAudit(ctx context.Context, env *Env, args []string) error {
	fset := newFlagSet("audit")
	c := common{quiet: true}
	c.register(fset, env)
	var q audit.Query
	fset.StringVar(&q.Principal, "principal", "", "only events of this principal `ID` (e.g. user:alice)")
	fset.StringVar(&q.Action, "action", "", "only this `ACTION` (search, chat, document.read, document.download, document.upload, document.delete, document.restore, grant, key.created, key.revoked, key.rotated, login.failure)")
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

// recordCommand stores the audit event of a command that changes keys (ragd keys create, revoke,
// rotate-data) at once: the CLI is short-lived, so it writes to the store itself rather than through the
// buffered log. The principal is the local operator, the client "cli", the detail the command; err, when
// not nil, makes the outcome failed. A failure to record is reported on stderr, not returned: the command
// has been carried out.
func recordCommand(ctx context.Context, env *Env, a *app.App, e audit.Event, err error) {
	st, ok := a.Store.(audit.Store)
	if !ok {
		return
	}
	e.At, e.Principal, e.Client, e.Outcome = time.Now(), rag.LocalPrincipal.ID, "cli", audit.OK
	if err != nil {
		e.Outcome, e.Detail = audit.Failed, e.Detail+": "+string(rag.ErrorCode(err))
	}
	if werr := st.AppendAudit(context.WithoutCancel(ctx), []audit.Event{e}); werr != nil {
		fmt.Fprintf(env.Stderr, "warning: the audit event of %q was not stored: %v\n", e.Detail, werr)
	}
}
