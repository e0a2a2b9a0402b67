package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ragd/ragd/internal/app"
	"github.com/ragd/ragd/internal/config"
	"github.com/ragd/ragd/internal/jobs"
	"github.com/ragd/ragd/internal/server"
)

// stopTimeout bounds each step of a graceful shutdown: in-flight requests, then running jobs (which are
// released for another process, or the next start, when they do not finish in time).
const stopTimeout = 30 * time.Second

func runServe(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet("serve")
	var c common
	c.register(fs, env)
	fs.StringVar(&c.cfg.Addr, "addr", c.cfg.Addr, "listen address `HOST:PORT` (env RAGD_ADDR)")
	noWorker := fs.Bool("no-worker", false, "only queue background jobs, for ragd worker processes to run (env RAGD_WORKER=false)")
	pprofAddr := fs.String("pprof", "", "serve Go profiles (/debug/pprof/, with mutex and block contention) on the loopback `HOST:PORT`")
	pos, err := parse(fs, args, env.Stdout)
	if err != nil {
		return err
	}
	if err := noArgs("serve", pos); err != nil {
		return err
	}
	cfg, err := c.load(env)
	if err != nil {
		return err
	}
	if *noWorker {
		cfg.Worker = false
	}
	if *pprofAddr != "" {
		addr, stop, err := servePprof(*pprofAddr)
		if err != nil {
			return err
		}
		defer stop()
		runtime.SetMutexProfileFraction(100)
		runtime.SetBlockProfileRate(int(100 * time.Microsecond))
		fmt.Fprintf(env.Stdout, "profiles on http://%s/debug/pprof/\n", addr)
	}
	stopTracing, err := startTracing(ctx, env)
	if err != nil {
		return err
	}
	defer stopTracing() // after the store is closed and the jobs stopped: their last spans are flushed
	work := cfg.Worker
	a, err := c.openConfig(ctx, env, cfg)
	if err != nil {
		return err
	}
	defer a.Close() // last: the runner (if still running), then the store
	if err := announceAccess(ctx, a); err != nil {
		return err
	}

	runner, err := a.OpenJobs(ctx, jobs.Options{Work: work})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	handler, err := server.New(a.ServerDeps(runner))
	if err != nil {
		ln.Close()
		return err
	}
	// The timeouts end connections that send their request slowly or not at all (RAGD_READ_HEADER_TIMEOUT,
	// RAGD_READ_TIMEOUT for the whole request with its body, RAGD_IDLE_TIMEOUT between requests); a
	// streamed answer lifts the read deadline once its request is read. RAGD_MAX_CONNECTIONS bounds how many
	// such connections are open at once.
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		IdleTimeout:       cfg.IdleTimeout,
	}
	// Before serving: Start re-enqueues the uploads a previous process left unfinished.
	if err := runner.Start(ctx); err != nil {
		ln.Close()
		return err
	}
	warmCtx, stopWarm := context.WithCancel(ctx)
	defer stopWarm()
	var warming sync.WaitGroup
	warming.Go(func() { warm(warmCtx, a) })
	// A process that runs jobs also watches the sources that can be watched (folders): a change syncs
	// the source within seconds (docs/connectors.md).
	if work {
		warming.Go(func() { a.Sources.Watch(warmCtx) })
	}

	jobsMode := "jobs run here"
	if !work {
		jobsMode = "jobs queued for ragd worker"
	}
	fmt.Fprintf(env.Stdout, "ragd %s listening on http://%s (store %s, embedder %s, generator %s, %s)\n",
		Version, ln.Addr(), storeName(cfg), a.Embedder.Space().ID(), a.Generator.Name(), jobsMode)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(server.LimitListener(ln, cfg.MaxConnections)) }()
	var serveErr error
	select {
	case serveErr = <-errc:
	case <-ctx.Done():
	}
	// Ordered shutdown: stop accepting and finish in-flight requests (so no upload is half-queued), then
	// stop the jobs, then (deferred) close the store.
	hctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	if err := srv.Shutdown(hctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		serveErr = errors.Join(serveErr, err)
	}
	// The watchers stop before the jobs: a sync they started enqueues its documents' processing.
	stopWarm()
	warming.Wait()
	jctx, cancelJobs := context.WithTimeout(context.Background(), stopTimeout+15*time.Second)
	defer cancelJobs()
	if err := runner.Stop(jctx); err != nil {
		serveErr = errors.Join(serveErr, err)
	}
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	fmt.Fprintln(env.Stdout, "ragd stopped")
	return nil
}

// warm loads the embedded store's keyword index and vectors in the background, so that the first search
// does not.
func warm(ctx context.Context, a *app.App) {
	start := time.Now()
	if err := a.Warm(ctx); err != nil {
		if ctx.Err() == nil {
			a.Logger.Warn("warm vector cache", slog.Any("err", err))
		}
		return
	}
	a.Logger.Debug("vector cache warm", slog.Duration("took", time.Since(start)))
}

// storeName says which store a process runs against, without secrets: the data directory, or the
// PostgreSQL host, database and schema.
func storeName(cfg config.Config) string {
	if cfg.DatabaseURL == "" {
		return "sqlite " + cfg.DataDir
	}
	pc, err := pgxpool.ParseConfig(cfg.DatabaseURL)
	if err != nil {
		return "postgres"
	}
	schema := app.URLSchema(cfg.DatabaseURL)
	if schema == "" {
		schema = "public"
	}
	return fmt.Sprintf("postgres %s:%d/%s schema %s", pc.ConnConfig.Host, pc.ConnConfig.Port, pc.ConnConfig.Database, schema)
}
