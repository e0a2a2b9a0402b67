package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/ragd/ragd/internal/app"
	"github.com/ragd/ragd/internal/buildinfo"
)

// runVersion prints the build: version, commit, Go version and platform, and the hosted providers compiled
// in (none in an offline build, -tags ragd_offline).
func runVersion(_ context.Context, env *Env, args []string) error {
	fs := newFlagSet("version")
	if _, err := parse(fs, args, env.Stdout); err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, "ragd", buildinfo.Get())
	providers := "none (offline build)"
	if p := app.Providers(); len(p) > 0 {
		providers = strings.Join(p, ", ")
	}
	fmt.Fprintln(env.Stdout, "hosted providers:", providers)
	return nil
}
