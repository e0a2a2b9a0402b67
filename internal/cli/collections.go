package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"go.yaml.in/yaml/v3"

	"github.com/ragd/ragd/internal/access"
	"github.com/ragd/ragd/internal/profile"
	"github.com/ragd/ragd/internal/rag"
)

// runCollections is `ragd collections apply FILE | show NAME | create NAME --owner O --visibility V`:
// collection profiles (docs/collections.md) and access (docs/security.md).
func runCollections(ctx context.Context, env *Env, args []string) error {
	subs := []string{"apply", "show", "create", "access"}
	sub, args := subcommandOf(args)
	fset := newFlagSet("collections")
	var c common
	registerAccess(fset, env, &c)
	asJSON := fset.Bool("json", false, "print JSON (show)")
	owner := fset.String("owner", "", "the collection's owner, `user:NAME` or team:NAME (create; default the local user)")
	visibility := fset.String("visibility", "private", "who reads it besides the owner: `private`, team or public (create)")
	description := fset.String("description", "", "a description (create)")
	pos, err := parse(fset, args, env.Stdout)
	if err != nil {
		return err
	}
	switch {
	case sub == "":
		return usageErr("a subcommand is required: apply, show, create or access")
	case sub == "create":
		if len(pos) != 1 {
			return usageErr("ragd collections create takes 1 argument")
		}
		return createCollection(ctx, env, &c, &rag.Collection{Name: pos[0], Owner: *owner, Visibility: rag.Visibility(*visibility), Description: *description})
	case sub == "access":
		if len(pos) != 1 {
			return usageErr("ragd collections access takes 1 argument")
		}
		vis := ""
		if flagSet(fset, "visibility") {
			vis = *visibility
		}
		if *owner == "" && vis == "" {
			return usageErr("ragd collections access needs --owner or --visibility")
		}
		return collectionAccess(ctx, env, &c, pos[0], *owner, rag.Visibility(vis))
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

// createCollection is `ragd collections create`: a new collection with an owner (an existing user or team)
// and a visibility.
func createCollection(ctx context.Context, env *Env, c *common, col *rag.Collection) error {
	if _, err := rag.CheckVisibility(col.Visibility); err != nil {
		return usageErr("--visibility: %s", rag.ErrorMessage(err))
	}
	if col.Owner != "" {
		if err := rag.CheckOwner("--owner", col.Owner); err != nil {
			return usageErr("%s", rag.ErrorMessage(err))
		}
	}
	a, ps, err := openPrincipals(ctx, env, c)
	if err != nil {
		return err
	}
	defer a.Close()
	if col.Owner == "" {
		col.Owner = rag.LocalPrincipal.ID
	} else if err := access.CheckOwner(ctx, ps, col.Owner); err != nil {
		return err
	}
	if err := a.Store.CreateCollection(ctx, col); err != nil {
		if errors.Is(err, rag.ErrConflict) {
			return rag.WrapError(rag.CodeConflict, err, "a collection named %q already exists", col.Name)
		}
		return err
	}
	fmt.Fprintf(env.Stdout, "collection %s created (owner %s, %s)\n", col.Name, col.Owner, col.Visibility)
	return nil
}

// collectionAccess is `ragd collections access`: a new owner (an existing user or team) or visibility.
func collectionAccess(ctx context.Context, env *Env, c *common, name, owner string, v rag.Visibility) error {
	if err := rag.CheckAccessChange(owner, v); err != nil {
		return usageErr("%s", rag.ErrorMessage(err))
	}
	a, ps, err := openPrincipals(ctx, env, c)
	if err != nil {
		return err
	}
	defer a.Close()
	if owner != "" {
		if err := access.CheckOwner(ctx, ps, owner); err != nil {
			return err
		}
	}
	as := a.Access()
	if as == nil {
		return fmt.Errorf("this store keeps no collection access")
	}
	col, err := as.SetCollectionAccess(ctx, name, owner, v)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "collection %s: owner %s, %s\n", col.Name, col.Owner, col.Visibility)
	return nil
}
