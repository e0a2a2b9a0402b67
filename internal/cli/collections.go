package cli

import (
	"context"
	"fmt"
	"os"

	"go.yaml.in/yaml/v3"

	"github.com/ragd/ragd/internal/profile"
	"github.com/ragd/ragd/internal/rag"
)

// runCollections is `ragd collections apply FILE | show NAME`: collection profiles (docs/collections.md).
func runCollections(ctx context.Context, env *Env, args []string) error {
	subs := []string{"apply", "show"}
	sub, args := subcommandOf(args)
	fset := newFlagSet("collections")
	c := common{quiet: true}
	c.register(fset, env)
	asJSON := fset.Bool("json", false, "print JSON (show)")
	pos, err := parse(fset, args, env.Stdout)
	if err != nil {
		return err
	}
	switch {
	case sub == "":
		return usageErr("a subcommand is required: apply or show")
	case sub != "apply" && sub != "show":
		return usageErr("unknown subcommand %q%s", sub, didYouMean(sub, subs, ""))
	case len(pos) != 1:
		return usageErr("ragd collections %s takes 1 argument", sub)
	}
	var p *profile.Profile
	if sub == "apply" {
		// The file is read and checked before the store is opened: a bad file changes nothing.
		data, err := os.ReadFile(pos[0])
		if err != nil {
			return rag.WrapError(rag.CodeInvalid, err, "cannot read %s", pos[0])
		}
		if p, err = profile.Decode(pos[0], data); err != nil {
			return err
		}
		if p.Name == "" {
			return rag.Errorf(rag.CodeInvalid, "%s: name: required (the collection the profile is for)", pos[0])
		}
	}
	a, err := c.open(ctx, env)
	if err != nil {
		return err
	}
	defer a.Close()
	var col *rag.Collection
	if sub == "apply" {
		var created bool
		if col, created, err = profile.Put(ctx, a.Store, p.Name, p, rag.LocalPrincipal.ID); err != nil {
			return err
		}
		verb := "updated"
		if created {
			verb = "created"
		}
		fmt.Fprintf(env.Stdout, "collection %s %s from %s\n", col.Name, verb, pos[0])
		return nil
	}
	if col, err = a.Store.GetCollection(ctx, pos[0]); err != nil {
		return err
	}
	eff, err := profile.Of(col)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(env.Stdout, eff)
	}
	out, err := yaml.Marshal(eff)
	if err != nil {
		return err
	}
	_, err = env.Stdout.Write(out)
	return err
}
