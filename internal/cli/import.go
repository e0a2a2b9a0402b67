package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/ragd/ragd/internal/graph"
)

// runImport loads a knowledge graph bundle (`ragd import graph DIR`) or a record table
// (`ragd import table FILE.csv --name N`) into a collection (docs/graph.md).
func runImport(ctx context.Context, env *Env, args []string) error {
	subs := []string{"graph", "table"}
	sub, args := subcommandOf(args)
	fs := newFlagSet("import")
	c := common{quiet: true}
	c.register(fs, env)
	collection := fs.String("collection", "", "the collection to load into (required)")
	name := fs.String("name", "", "the record table's name, as declared in the collection's graph section (table only)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	pos, err := parse(fs, args, env.Stdout)
	if err != nil {
		return err
	}
	switch {
	case sub == "":
		return usageErr("a subcommand is required: graph or table")
	case sub != "graph" && sub != "table":
		return usageErr("unknown subcommand %q%s", sub, didYouMean(sub, subs, ""))
	case len(pos) != 1 && sub == "graph":
		return usageErr("graph takes one folder with %s (got %d arguments)", strings.Join(graph.BundleFiles, ", "), len(pos))
	case len(pos) != 1:
		return usageErr("table takes one CSV file (got %d arguments)", len(pos))
	case *collection == "":
		return usageErr("--collection is required")
	case sub == "table" && *name == "":
		return usageErr("--name is required: the table's name in the collection's graph section")
	case sub == "graph" && *name != "":
		return usageErr("--name is for import table")
	}
	a, err := c.open(ctx, env)
	if err != nil {
		return err
	}
	defer a.Close()

	var out any
	if sub == "graph" {
		b, err := graph.ReadDir(pos[0])
		if err != nil {
			return err
		}
		if _, err := a.Store.EnsureCollection(ctx, *collection, "local"); err != nil {
			return err
		}
		res, err := a.Graph.Import(ctx, *collection, b)
		if err != nil {
			return err
		}
		out = res
		if !*asJSON {
			fmt.Fprintf(env.Stdout, "collection %s: %s; %d entities embedded in %s\n", res.Collection, describeImport(res), res.Embedded, res.Space)
		}
	} else {
		f, err := os.Open(pos[0])
		if err != nil {
			return err
		}
		defer f.Close()
		res, err := a.Graph.ImportTable(ctx, *collection, *name, f)
		if err != nil {
			return err
		}
		out = res
		if !*asJSON {
			what := "unchanged"
			if res.Changed {
				what = "replaced"
			}
			fmt.Fprintf(env.Stdout, "collection %s: table %s %s, %d rows\n", res.Collection, res.Table, what, res.Rows)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	return nil
}

// describeImport says what an import changed, kind by kind.
func describeImport(r *graph.ImportResult) string {
	if !r.Changed {
		return "unchanged"
	}
	var parts []string
	for _, k := range []struct {
		name string
		c    graph.Counts
	}{{"sections", r.Sections}, {"entities", r.Entities}, {"relations", r.Relations}, {"chunks", r.Chunks}} {
		parts = append(parts, fmt.Sprintf("%s +%d ~%d -%d =%d", k.name, k.c.Added, k.c.Updated, k.c.Removed, k.c.Unchanged))
	}
	return strings.Join(parts, ", ")
}
