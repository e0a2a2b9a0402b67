package cli

import (
	"context"
	"fmt"
)

func runMigrate(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet("migrate")
	var c common
	c.register(fs, env)
	pos, err := parse(fs, args, env.Stdout)
	if err != nil {
		return err
	}
	if err := noArgs("migrate", pos); err != nil {
		return err
	}
	// Opening the store applies every pending migration in a transaction.
	a, err := c.open(ctx, env)
	if err != nil {
		return err
	}
	defer a.Close()
	if err := a.Store.Ping(ctx); err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, "migrations applied")
	return nil
}
