package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/ragd/ragd/internal/jobs"
)

// runWorker runs background jobs only — ingestion and periodic jobs, no HTTP — until SIGINT or SIGTERM.
// Any number of workers and `ragd serve` processes may share one PostgreSQL database (or, on one machine,
// one data directory); each job runs in one of them at a time.
func runWorker(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet("worker")
	var c common
	c.register(fs)
	concurrency := fs.Int("concurrency", 0, "ingestion jobs run at once, 1 to 64 (default: env RAGD_INGEST_WORKERS, 2)")
	pos, err := parse(fs, args, env.Stderr)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErr("ragd worker takes no arguments (got %q)", pos[0])
	}
	// 0 (the flag's default) keeps the configuration's RAGD_INGEST_WORKERS.
	if *concurrency < 0 || *concurrency > 64 {
		return usageErr("--concurrency must be between 1 and 64 (got %d)", *concurrency)
	}
	cfg, err := c.load(env)
	if err != nil {
		return err
	}
	if *concurrency > 0 {
		cfg.IngestWorkers = *concurrency
	}
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
	<-ctx.Done()
	// Running jobs get stopTimeout to finish; the rest are released for another process.
	sctx, cancel := context.WithTimeout(context.Background(), stopTimeout+15*time.Second)
	defer cancel()
	if err := r.Stop(sctx); err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, "ragd worker stopped")
	return nil
}
