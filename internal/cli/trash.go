package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/ragd/ragd/internal/rag"
)

// runDocuments is `ragd documents deleted|delete|restore|purge`: deletion after a window from the command
// line (docs/security.md "Deletion"). delete hides documents at once, restore brings them back and
// re-indexes them in the foreground, deleted lists what can still be restored, purge removes now what has
// waited RAGD_PURGE_AFTER (the documents.purge job of serve and worker does it on its own).
func runDocuments(ctx context.Context, env *Env, args []string) error {
	subs := []string{"deleted", "delete", "restore", "purge"}
	sub, args := subcommandOf(args)
	fset := newFlagSet("documents")
	c := common{quiet: true}
	c.register(fset, env)
	asJSON := fset.Bool("json", false, "print JSON (deleted)")
	pos, err := parse(fset, args, env.Stdout)
	if err != nil {
		return err
	}
	switch sub {
	case "":
		return usageErr("a subcommand is required: deleted, delete, restore or purge")
	case "delete", "restore":
		if len(pos) == 0 {
			return usageErr("ragd documents %s takes one or more document IDs", sub)
		}
	case "deleted", "purge":
		if len(pos) != 0 {
			return usageErr("ragd documents %s takes no arguments", sub)
		}
	default:
		return usageErr("unknown subcommand %q%s", sub, didYouMean(sub, subs, ""))
	}
	a, err := c.open(ctx, env)
	if err != nil {
		return err
	}
	defer a.Close()
	w, p, after := env.Stdout, rag.LocalPrincipal, a.Config.PurgeAfter
	switch sub {
	case "deleted":
		page, err := a.Store.ListDocuments(ctx, p, rag.DocumentQuery{Deleted: true, Limit: 500})
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(w, page)
		}
		for _, d := range page.Documents {
			fmt.Fprintf(w, "%s  deleted %s  purged after %s  %s\n", d.ID, d.DeletedAt.Format(time.RFC3339),
				d.DeletedAt.Add(after).Format(time.RFC3339), d.ExternalID)
		}
		fmt.Fprintf(w, "%d deleted document(s)\n", page.Total)
	case "delete":
		for _, id := range pos {
			d, err := a.Store.TrashDocument(ctx, p, id)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "%s deleted (%s); restorable until %s\n", d.ID, d.ExternalID, d.DeletedAt.Add(after).Format(time.RFC3339))
		}
	case "restore":
		for _, id := range pos {
			d, err := a.Store.RestoreDocument(ctx, p, id)
			if err != nil {
				return err
			}
			if d.PendingHash != "" {
				if err := a.Ingest.Process(ctx, d.ID); err != nil {
					return fmt.Errorf("%s restored, but indexing it failed: %w", d.ID, err)
				}
			}
			fmt.Fprintf(w, "%s restored (%s)\n", d.ID, d.ExternalID)
		}
	case "purge":
		n, err := a.Purge(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%d document(s) deleted over %s ago purged\n", n, after)
	}
	return nil
}
