package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/ragd/ragd/internal/server"
)

func runServe(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet("serve")
	var c common
	c.register(fs)
	addr := fs.String("addr", "", "listen address HOST:PORT (env RAGD_ADDR, default 127.0.0.1:8080)")
	if _, err := parse(fs, args, env.Stderr); err != nil {
		return err
	}
	cfg, err := c.load(env)
	if err != nil {
		return err
	}
	if *addr != "" {
		cfg.Addr = *addr
	}
	c.dataDir = cfg.DataDir
	a, err := c.open(ctx, env)
	if err != nil {
		return err
	}
	defer a.Close()

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           server.New(a),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	store := "sqlite " + cfg.DataDir
	if cfg.DatabaseURL != "" {
		store = "postgres"
	}
	fmt.Fprintf(env.Stdout, "ragd %s listening on http://%s (store %s, embedder %s, generator %s)\n",
		Version, ln.Addr(), store, a.Embedder.Space().ID(), a.Generator.Name())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Stop accepting, let in-flight requests finish, then close the app (workers, store) via defer.
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	fmt.Fprintln(env.Stdout, "ragd stopped")
	return nil
}
