package cli

import (
	"context"
	"fmt"

	"github.com/ragd/ragd/internal/audit"
	"github.com/ragd/ragd/internal/sealing"
)

// runKeysRotateData is `ragd keys rotate-data`: re-seal, now and in the foreground, every stored blob and
// chunk text that is not under the current encryption key (RAGD_ENCRYPTION_KEY), opening them with the
// current key or one of RAGD_ENCRYPTION_OLD_KEYS. ragd serve and ragd worker do the same in the background
// (the data.reseal job); this command shows the progress and ends when everything is under the new key, so
// the old key can then be dropped. Resumable: it can be stopped and run again.
func runKeysRotateData(ctx context.Context, env *Env, args []string) error {
	fset := newFlagSet("keys rotate-data")
	c := common{quiet: true}
	c.register(fset, env)
	pos, err := parse(fset, args, env.Stdout)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usageErr("ragd keys rotate-data takes no arguments")
	}
	cfg, err := c.load(env)
	if err != nil {
		return err
	}
	if cfg.EncryptionKey == "" {
		return usageErr("set RAGD_ENCRYPTION_KEY to the new key (and RAGD_ENCRYPTION_OLD_KEYS to the old ones) to rotate")
	}
	a, err := c.open(ctx, env)
	if err != nil {
		return err
	}
	defer a.Close()
	n, err := a.Reseal(ctx, func(done int) { fmt.Fprintf(env.Stderr, "\rre-sealed %d rows", done) })
	if n > 0 {
		fmt.Fprintln(env.Stderr)
	}
	e := audit.Event{Action: audit.KeyRotated, Status: n, Detail: "ragd keys rotate-data"}
	if k, perr := sealing.ParseKey(cfg.EncryptionKey); perr == nil {
		e.Target = sealing.KeyID(k) // the new key's ID, as stored beside each row (never the key)
	}
	recordCommand(ctx, env, a, e, err)
	if err != nil {
		return err
	}
	keys, err := a.Store.(interface {
		DataKeyIDs(ctx context.Context) ([]string, error)
	}).DataKeyIDs(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%d rows re-sealed; every blob and passage is under key %v\n", n, keys)
	return nil
}
