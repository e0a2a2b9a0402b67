package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/sources"
)

// runSources is `ragd sources add|list|sync|remove`: a collection's sources from the command line
// (docs/connectors.md). add takes the source as the API does (a JSON object) or, for a folder, as
// `folder DIR`; sync runs one sync in the foreground, processing what it finds before it returns.
func runSources(ctx context.Context, env *Env, args []string) error {
	subs := []string{"add", "list", "sync", "remove"}
	sub, args := subcommandOf(args)
	fset := newFlagSet("sources")
	c := common{quiet: true}
	c.register(fset, env)
	collection := fset.String("collection", "", "`NAME` of the collection (add: required; list: only its sources)")
	schedule := fset.String("schedule", "", "cron `EXPR` of the full syncs (add; default @hourly, \"none\" for none)")
	credsFile := fset.String("credentials-file", "", "`FILE` holding the source's token or key (add; stored encrypted)")
	var include, exclude multi
	fset.Var(&include, "include", "glob `PATTERN` of the files a folder source takes (add folder; repeatable)")
	fset.Var(&exclude, "exclude", "glob `PATTERN` of the files a folder source leaves out (add folder; repeatable)")
	asJSON := fset.Bool("json", false, "print JSON")
	pos, err := parse(fset, args, env.Stdout)
	if err != nil {
		return err
	}
	switch sub {
	case "":
		return usageErr("a subcommand is required: add, list, sync or remove")
	case "add":
		if *collection == "" || len(pos) == 0 {
			return usageErr("ragd sources add --collection NAME (JSON | folder DIR)")
		}
	case "list":
		if len(pos) != 0 {
			return usageErr("ragd sources list takes no arguments")
		}
	case "sync", "remove":
		if len(pos) != 1 {
			return usageErr("ragd sources %s takes one source ID", sub)
		}
	default:
		return usageErr("unknown subcommand %q%s", sub, didYouMean(sub, subs, ""))
	}
	var spec json.RawMessage
	if sub == "add" {
		if spec, err = sourceSpec(pos, include, exclude, *schedule, *credsFile); err != nil {
			return err
		}
	}
	a, err := c.open(ctx, env)
	if err != nil {
		return err
	}
	defer a.Close()
	w, svc := env.Stdout, a.Sources
	switch sub {
	case "add":
		if _, err := a.Store.EnsureCollection(ctx, *collection, rag.LocalPrincipal.ID); err != nil {
			return err
		}
		src, err := svc.Add(ctx, sources.AddRequest{Collection: *collection, Spec: spec, Owner: rag.LocalPrincipal.ID})
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(w, src)
		}
		fmt.Fprintf(w, "%s added: %s %s to %s (schedule %q); sync it with ragd sources sync %s, or run ragd serve\n",
			src.ID, src.Kind, src.Settings, *collection, src.Schedule, src.ID)
	case "list":
		list, err := svc.List(ctx, *collection)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(w, map[string]any{"sources": list})
		}
		for _, src := range list {
			fmt.Fprintf(w, "%s  %s %s  %s\n", src.ID, src.Kind, src.Settings, stateLine(src.State))
		}
		fmt.Fprintf(w, "%d source(s)\n", len(list))
	case "sync":
		err := <-svc.SyncSoon(pos[0])
		src, gerr := a.Store.(rag.SyncStore).GetSource(ctx, pos[0])
		if gerr != nil {
			return errors.Join(err, gerr)
		}
		if *asJSON {
			if werr := writeJSON(w, src); werr != nil {
				return werr
			}
		} else {
			fmt.Fprintf(w, "%s %s: %s\n", src.ID, src.Kind, stateLine(src.State))
		}
		if err != nil {
			return fmt.Errorf("sync failed: %w", err)
		}
		if src.State.Failed > 0 {
			return fmt.Errorf("%d item(s) failed (ragd sources list --json shows the source; GET …/sources/%s lists them)", src.State.Failed, src.ID)
		}
	case "remove":
		src, err := a.Store.(rag.SyncStore).GetSource(ctx, pos[0])
		if err != nil {
			return err
		}
		if err := svc.Remove(ctx, src.CollectionID, src.ID); err != nil {
			return err
		}
		fmt.Fprintf(w, "%s removed; its documents stay\n", src.ID)
	}
	return nil
}

// sourceSpec builds the JSON of a new source from the command line: a JSON object as is, or `folder DIR`
// with the flags.
func sourceSpec(pos []string, include, exclude []string, schedule, credsFile string) (json.RawMessage, error) {
	fields := map[string]any{}
	if strings.HasPrefix(strings.TrimSpace(pos[0]), "{") {
		if len(pos) != 1 {
			return nil, usageErr("a source given as JSON takes no other arguments")
		}
		if err := json.Unmarshal([]byte(pos[0]), &fields); err != nil {
			return nil, usageErr("the source is not a JSON object: %v", err)
		}
	} else {
		if pos[0] != "folder" || len(pos) != 2 {
			return nil, usageErr("ragd sources add --collection NAME folder DIR, or the source as JSON ('{\"kind\":\"web\",…}')")
		}
		dir, err := filepath.Abs(pos[1])
		if err != nil {
			return nil, err
		}
		fields["kind"], fields["path"] = "folder", dir
		if len(include) > 0 {
			fields["include"] = include
		}
		if len(exclude) > 0 {
			fields["exclude"] = exclude
		}
	}
	switch schedule {
	case "":
	case "none":
		fields["schedule"] = ""
	default:
		fields["schedule"] = schedule
	}
	if credsFile != "" {
		b, err := os.ReadFile(credsFile)
		if err != nil {
			return nil, err
		}
		fields["credentials"] = strings.TrimSpace(string(b))
	}
	return json.Marshal(fields)
}

// stateLine sums up a source's sync state on one line.
func stateLine(st rag.SyncState) string {
	if st.LastRunAt == nil {
		return "never synced"
	}
	s := fmt.Sprintf("last run %s: added %d, updated %d, deleted %d, unchanged %d, failed %d",
		st.LastRunAt.Format(time.RFC3339), st.Added, st.Updated, st.Deleted, st.Unchanged, st.Failed)
	if st.LastError != "" {
		s += "; error: " + st.LastError
	}
	if st.Paused {
		s += "; paused: " + st.PauseReason
	}
	return s
}
