package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/ragd/ragd/internal/app"
	"github.com/ragd/ragd/internal/eval"
)

func runEval(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet("eval")
	var c common
	c.register(fs)
	k := fs.Int("k", 10, "hits retrieved per query (at least 10)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	answers := fs.Bool("answers", false, "also run the answer pipeline on questions with gold answers")
	limit := fs.Int("limit", 0, "evaluate only the first N queries (0 = all)")
	pos, err := parse(fs, args, env.Stderr)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErr("ragd eval DATASET [--data-dir DIR] [--k 10] [--json] [--answers]")
	}
	ds, err := eval.Load(pos[0])
	if err != nil {
		return err
	}
	if *limit > 0 && *limit < len(ds.Queries) {
		ds.Queries = ds.Queries[:*limit]
	}
	cfg, err := c.load(env)
	if err != nil {
		return err
	}
	if c.dataDir == "" && cfg.DatabaseURL == "" {
		// A throw-away index unless the caller asked to keep it.
		dir, err := os.MkdirTemp("", "ragd-eval-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		cfg.DataDir = dir
	}
	cfg.LogLevel = "warn"
	a, err := app.Open(ctx, cfg, newLogger(env.Stderr, cfg.LogLevel))
	if err != nil {
		return err
	}
	defer a.Close()

	// On a terminal the count is redrawn in place; in a log it is one line per step.
	tty := isTerminal(env.Stderr)
	progress := func(stage string, done, total int) {
		if *asJSON || (done%200 != 0 && done != total) {
			return
		}
		if !tty {
			fmt.Fprintf(env.Stderr, "%s %d/%d\n", stage, done, total)
			return
		}
		fmt.Fprintf(env.Stderr, "\r%s %d/%d", stage, done, total)
		if done == total {
			fmt.Fprintln(env.Stderr)
		}
	}
	opt := eval.Options{K: *k, Answers: *answers, Workers: cfg.IngestWorkers, Progress: progress}
	secs, err := eval.Index(ctx, a.Ingest, ds, opt)
	if err != nil {
		return err
	}
	rep, err := eval.Evaluate(ctx, a.Retriever, a.Answers, ds, opt)
	if err != nil {
		return err
	}
	rep.IndexSeconds = secs
	if *asJSON {
		return writeJSON(env.Stdout, rep)
	}
	fmt.Fprintf(env.Stdout, "dataset       %s (%d documents, %d queries)\n", rep.Dataset, rep.Documents, rep.Queries)
	fmt.Fprintf(env.Stdout, "nDCG@10       %.4f\n", rep.NDCG10)
	fmt.Fprintf(env.Stdout, "Recall@5      %.4f\n", rep.Recall5)
	fmt.Fprintf(env.Stdout, "Precision@5   %.4f\n", rep.Precision5)
	fmt.Fprintf(env.Stdout, "MRR@10        %.4f\n", rep.MRR10)
	fmt.Fprintf(env.Stdout, "latency       p50 %.2f ms, p95 %.2f ms\n", rep.LatencyP50, rep.LatencyP95)
	fmt.Fprintf(env.Stdout, "indexing      %.1f s\n", rep.IndexSeconds)
	if rep.AnswerContains != nil {
		fmt.Fprintf(env.Stdout, "answers       contain gold %.4f, median %.0f chars, p95 %.1f ms, not found %d\n",
			*rep.AnswerContains, *rep.AnswerCharsP50, *rep.AnswerMSP95, *rep.NotFound)
	}
	return nil
}
