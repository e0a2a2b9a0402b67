package app

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/ragd/ragd/internal/config"
	"github.com/ragd/ragd/internal/rag"
)

// The hosted providers compiled into this binary, by name (RAGD_EMBEDDER, RAGD_GENERATOR). Each registers
// itself from a file of its own (provider_gemini.go, …) that the ragd_offline build tag leaves out, so that an
// offline build links none of the providers' SDKs. The offline parts (hash, extractive) are always there.
var (
	embedders  = map[string]func(context.Context, config.Config, *slog.Logger) (rag.Embedder, error){}
	generators = map[string]func(context.Context, config.Config, *slog.Logger) (rag.Generator, error){}
)

// Providers lists the hosted providers compiled into this binary, sorted.
func Providers() []string {
	var names []string
	for n := range embedders {
		names = append(names, n)
	}
	for n := range generators {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// notBuilt is the start-up error of a configuration that names a provider this binary was built without.
func notBuilt(kind, name string) error {
	return fmt.Errorf("%s %q is not in this build of ragd (built with -tags ragd_offline, which has only the offline "+
		"embedder hash and generator extractive): use a release binary or `make build`, or set RAGD_%s",
		kind, name, map[string]string{"embedder": "EMBEDDER=hash", "generator": "GENERATOR=extractive"}[kind])
}
