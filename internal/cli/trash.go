package cli

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
)

// runDocuments is `ragd documents deleted|delete|restore|purge|versions|revert`: deletion after a window
// and versions from the command line (docs/security.md "Deletion", "Versions"). delete hides documents at
// once, restore brings them back and re-indexes them in the foreground, deleted lists what can still be
// restored, purge removes now what has waited RAGD_PURGE_AFTER (the documents.purge job of serve and worker
// does it on its own), versions lists a document's versions and revert makes one current again.
func runDocuments(ctx context.Context, env *Env, args []string) error {
	subs := []string{"deleted", "delete", "restore", "purge", "versions", "revert"}
	sub, args := subcommandOf(args)
	fset := newFlagSet("documents")
	c := common{quiet: true}
	c.register(fset, env)
	asJSON := fset.Bool("json", false, "print JSON (deleted, versions)")
	pos, err := parse(fset, args, env.Stdout)
	if err != nil {
		return err
	}
	switch sub {
	case "":
		return usageErr("a subcommand is required: deleted, delete, restore, purge, versions or revert")
	case "delete", "restore":
		if len(pos) == 0 {
			return usageErr("ragd documents %s takes one or more document IDs", sub)
		}
	case "versions":
		if len(pos) != 1 {
			return usageErr("ragd documents versions takes one document ID")
		}
	case "revert":
		if len(pos) != 2 {
			return usageErr("ragd documents revert takes a document ID and a version number")
		}
		if n, err := strconv.Atoi(pos[1]); err != nil || n < 1 {
			return usageErr("a version is a number from 1 (got %q)", pos[1])
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
	case "versions":
		vs, err := a.Store.ListVersions(ctx, p, pos[0])
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(w, map[string]any{"document_id": pos[0], "versions": vs})
		}
		for _, v := range vs {
			fmt.Fprintf(w, "%3d  %s  %8d bytes  %4d chunks  %s  %.12s\n", v.Version, v.CreatedAt.Format(time.RFC3339), v.Size, v.ChunkCount,
				v.MediaType, v.ContentHash)
		}
	case "revert":
		n, _ := strconv.Atoi(pos[1])
		d, outcome, err := a.Ingest.Revert(ctx, p, pos[0], n)
		if err != nil {
			return err
		}
		if outcome == ingest.Queued {
			if err := a.Ingest.Process(ctx, d.ID); err != nil {
				return fmt.Errorf("indexing version %d again failed: %w", n, err)
			}
			if d, err = a.Store.GetDocument(ctx, p, d.ID); err != nil {
				return err
			}
		}
		fmt.Fprintf(w, "%s: version %d is current as version %d (%s)\n", d.ID, n, d.Version, outcome)
	case "purge":
		n, err := a.Purge(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%d document(s) deleted over %s ago purged\n", n, after)
	}
	return nil
}
