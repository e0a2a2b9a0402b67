package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/ragd/ragd/internal/config"
	"github.com/ragd/ragd/internal/jobs"
)

// runWorker runs background jobs only — ingestion and periodic jobs, no HTTP — until SIGINT or SIGTERM.
// Any number of workers and `ragd serve` processes may share one PostgreSQL database (or, on one machine,
// one data directory); each job runs in one of them at a time.
func runWorker(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet("worker")
	var c common
	c.register(fs, env)
	fs.IntVar(&c.cfg.IngestWorkers, "concurrency", c.cfg.IngestWorkers, fmt.Sprintf("ingestion jobs run at once, 1 to %d (env RAGD_INGEST_WORKERS)", config.MaxIngestWorkers))
	pos, err := parse(fs, args, env.Stdout)
	if err != nil {
		return err
	}
	if err := noArgs("worker", pos); err != nil {
		return err
	}
	if err := checkWorkers("concurrency", c.cfg.IngestWorkers); err != nil {
		return err
	}
	cfg, err := c.load(env)
	if err != nil {
		return err
	}
	stopTracing, err := startTracing(ctx, env)
	if err != nil {
		return err
	}
	defer stopTracing() // after the store is closed and the jobs stopped: their last spans are flushed
	a, err := c.openConfig(ctx, env, cfg)
	if err != nil {
		return err
	}
	defer a.Close()
	r, err := a.OpenJobs(ctx, jobs.Options{Work: true})
	if err != nil {
		return err
	}
	if err := r.Start(ctx); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "ragd %s worker %s running jobs against %s (embedder %s, %d ingestion jobs at once)\n",
		Version, r.ID(), storeName(cfg), a.Embedder.Space().ID(), cfg.IngestWorkers)
	// Sources that can be watched (folders) are watched here too: a change syncs the source at once.
	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		a.Sources.Watch(watchCtx)
	}()
	<-ctx.Done()
	stopWatch()
	<-watched
	// Running jobs get stopTimeout to finish; the rest are released for another process.
	sctx, cancel := context.WithTimeout(context.Background(), stopTimeout+15*time.Second)
	defer cancel()
	if err := r.Stop(sctx); err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, "ragd worker stopped")
	return nil
}

// checkWorkers checks a flag that sets the configuration's IngestWorkers, with its bounds.
func checkWorkers(flagName string, n int) error {
	if n < 1 || n > config.MaxIngestWorkers {
		return usageErr("--%s must be between 1 and %d (got %d)", flagName, config.MaxIngestWorkers, n)
	}
	return nil
}
