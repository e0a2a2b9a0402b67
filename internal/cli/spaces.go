package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
)

// runSpaces lists the store's embedding spaces (`ragd spaces`), runs the re-embed into the configured
// space in the foreground (`ragd spaces reembed`), or removes an old space's vectors (`ragd spaces drop`).
func runSpaces(ctx context.Context, env *Env, args []string) error {
	sub := ""
	if len(args) > 0 && (args[0] == "drop" || args[0] == "reembed") {
		sub, args = args[0], args[1:]
	}
	fs := newFlagSet("spaces")
	c := common{quiet: true}
	c.register(fs, env)
	asJSON := fs.Bool("json", false, "print the status as JSON (listing only)")
	force := fs.Bool("force", false, "drop the space searches use now (search is keyword-only until the re-embed completes)")
	pos, err := parse(fs, args, env.Stdout)
	if err != nil {
		return err
	}
	switch {
	case sub == "" && len(pos) > 0:
		return usageErr("unknown subcommand %q%s", pos[0], didYouMean(pos[0], []string{"reembed", "drop"}, ""))
	case sub == "drop" && len(pos) != 1:
		return usageErr("drop takes one space, PROVIDER/MODEL/DIM (got %d arguments)", len(pos))
	case sub == "reembed" && len(pos) > 0:
		return usageErr("reembed takes no arguments (got %q)", pos[0])
	}
	a, err := c.open(ctx, env)
	if err != nil {
		return err
	}
	defer a.Close()

	if sub == "reembed" {
		// The same work as the periodic job of serve and worker, resumable, embedding no chunk twice.
		if err := a.Reembed(ctx); err != nil {
			return err
		}
		st, err := a.Spaces.Status(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "re-embed %s: %d of %d chunks in %s; searches use %s\n", st.Reembed.State,
			st.Reembed.Done, st.Reembed.Total, st.Configured, describeSearch(st.Mode, st.Search))
		return nil
	}
	if sub == "drop" {
		n, err := a.Spaces.Drop(ctx, pos[0], *force)
		if err != nil {
			return err
		}
		if n == 0 {
			fmt.Fprintf(env.Stdout, "space %s has no vectors here: nothing to drop\n", pos[0])
			return nil
		}
		fmt.Fprintf(env.Stdout, "dropped %d vectors of %s\n", n, pos[0])
		return nil
	}
	st, err := a.Spaces.Status(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(env.Stdout, st)
	}
	fmt.Fprintf(env.Stdout, "chunks      %d\nsearch      %s\nre-embed    %s (%d of %d)\n", st.Chunks,
		describeSearch(st.Mode, st.Search), st.Reembed.State, st.Reembed.Done, st.Reembed.Total)
	if st.Reason != "" {
		fmt.Fprintf(env.Stdout, "why         %s\n", st.Reason)
	}
	fmt.Fprintln(env.Stdout)
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SPACE\tCHUNKS\t%\tROLE")
	for _, sp := range st.Spaces {
		var role []string
		if sp.Configured {
			role = append(role, "configured")
		}
		if sp.Search {
			role = append(role, "searched")
		}
		if sp.Unusable != "" {
			role = append(role, "unusable: "+sp.Unusable)
		}
		if len(role) == 0 {
			role = append(role, "old (ragd spaces drop "+sp.ID+" reclaims it)")
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%s\n", sp.ID, sp.Chunks, sp.Percent, strings.Join(role, ", "))
	}
	return tw.Flush()
}

func describeSearch(mode, space string) string {
	if space == "" {
		return mode
	}
	return mode + " in " + space
}
