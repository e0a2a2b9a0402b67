package cli

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/ragd/ragd/internal/eval"
	"github.com/ragd/ragd/internal/rag"
)

func runEval(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet("eval")
	c := common{quiet: true}
	c.register(fs, env)
	k := fs.Int("k", 10, fmt.Sprintf("hits retrieved per query, 10 to %d", rag.MaxSearchK))
	asJSON := fs.Bool("json", false, "print one JSON object")
	answers := fs.Bool("answers", false, "also run the answer pipeline on questions with gold answers")
	limit := fs.Int("limit", 0, "evaluate only the first N queries (0 = all)")
	every := fs.Int("every", 1, "evaluate only every Nth query (the 1st, N+1th, …), before --limit: a fixed sample spread over the set")
	misses := fs.String("misses", "", "with --answers, write each question answered without its gold span (or unanswerable and answered) to `FILE` as JSON lines")
	baseline := fs.String("baseline", "bm25", "reference ranking reported beside ragd's: bm25 (plain bigram BM25 over the same passages) or none")
	pos, err := parse(fs, args, env.Stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErr("one dataset is required (got %d arguments)", len(pos))
	}
	if *baseline != "bm25" && *baseline != "none" {
		return usageErr("--baseline is bm25 or none (got %q)", *baseline)
	}
	if *k < 10 || *k > rag.MaxSearchK {
		return usageErr("--k must be between 10 and %d (got %d): nDCG@10 and MRR@10 need 10 hits", rag.MaxSearchK, *k)
	}
	if *limit < 0 {
		return usageErr("--limit must not be negative (got %d)", *limit)
	}
	if *every < 1 {
		return usageErr("--every must be at least 1 (got %d)", *every)
	}
	if *misses != "" && !*answers {
		return usageErr("--misses needs --answers")
	}
	ds, err := eval.Load(pos[0])
	if err != nil {
		return err
	}
	ds.Queries = eval.Every(ds.Queries, *every)
	if *limit > 0 && *limit < len(ds.Queries) {
		ds.Queries = ds.Queries[:*limit]
	}
	cfg, err := c.load(env)
	if err != nil {
		return err
	}
	if !flagSet(fs, "data-dir") && cfg.DatabaseURL == "" {
		// A throw-away index unless the caller asked to keep it.
		dir, err := os.MkdirTemp("", "ragd-eval-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		cfg.DataDir = dir
	}
	a, err := c.openConfig(ctx, env, cfg)
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
	if *misses != "" {
		f, err := os.Create(*misses)
		if err != nil {
			return err
		}
		defer f.Close()
		opt.Misses = f
	}
	closeMisses := func() error {
		if f, ok := opt.Misses.(*os.File); ok {
			return f.Close()
		}
		return nil
	}
	idx, err := eval.Index(ctx, a.Ingest, ds, opt)
	if err != nil {
		return err
	}
	rep, err := eval.Evaluate(ctx, a.Retriever, a.Answers, ds, opt)
	if err != nil {
		return err
	}
	if err := closeMisses(); err != nil {
		return fmt.Errorf("--misses: %w", err)
	}
	rep.IndexSeconds = idx.Seconds
	if *baseline == "bm25" {
		if rep.Baseline, err = eval.BaselineBM25(ctx, a.Store, ds, idx, opt); err != nil {
			return err
		}
	}
	if *asJSON {
		return writeJSON(env.Stdout, rep)
	}
	printReport(env, rep)
	return nil
}

func printReport(env *Env, rep *eval.Report) {
	fmt.Fprintf(env.Stdout, "dataset       %s (%d documents, %d queries: %d judged", rep.Dataset, rep.Documents, rep.Queries, rep.Judged)
	if rep.Unanswerable > 0 {
		fmt.Fprintf(env.Stdout, ", %d unanswerable", rep.Unanswerable)
	}
	fmt.Fprintln(env.Stdout, ")")
	fmt.Fprintf(env.Stdout, "hit@5         %.4f\n", rep.Hit5)
	fmt.Fprintf(env.Stdout, "nDCG@10       %.4f\n", rep.NDCG10)
	fmt.Fprintf(env.Stdout, "Recall@5      %.4f\n", rep.Recall5)
	fmt.Fprintf(env.Stdout, "Precision@5   %.4f\n", rep.Precision5)
	fmt.Fprintf(env.Stdout, "MRR@10        %.4f\n", rep.MRR10)
	fmt.Fprintf(env.Stdout, "latency       p50 %.2f ms, p95 %.2f ms\n", rep.LatencyP50, rep.LatencyP95)
	fmt.Fprintf(env.Stdout, "indexing      %.1f s\n", rep.IndexSeconds)
	row := func(name string, r eval.Retrieval) {
		fmt.Fprintf(env.Stdout, "  %-16s %5d  %.4f  %.4f  %.4f  %.4f\n", name, r.Queries, r.Hit5, r.NDCG10, r.Recall5, r.MRR10)
	}
	if rep.Pages != nil || rep.Baseline != nil {
		fmt.Fprintf(env.Stdout, "  %-16s %5s  %-6s  %-6s  %-6s  %-6s\n", "ranking", "n", "hit@5", "nDCG@10", "Rec@5", "MRR@10")
		row("ragd file", rep.Retrieval)
		if rep.Pages != nil {
			row("ragd file+page", *rep.Pages)
		}
		if b := rep.Baseline; b != nil {
			row("bm25 file", b.Retrieval)
			if b.Pages != nil {
				row("bm25 file+page", *b.Pages)
			}
		}
	}
	if len(rep.Missed) > 0 {
		fmt.Fprintf(env.Stdout, "misses@5      file%s\n", idList(rep.Missed))
	}
	if len(rep.PagesMissed) > 0 {
		fmt.Fprintf(env.Stdout, "misses@5      file+page%s\n", idList(rep.PagesMissed))
	}
	if rep.AnswerContains != nil {
		fmt.Fprintf(env.Stdout, "answers       contain gold %.4f, median %.0f chars, p95 %.1f ms, not found %d\n",
			*rep.AnswerContains, *rep.AnswerCharsP50, *rep.AnswerMSP95, *rep.NotFound)
		fmt.Fprintf(env.Stdout, "              answered %.4f of answerable\n", *rep.Answered)
		if len(rep.GoldMissed) > 0 {
			fmt.Fprintf(env.Stdout, "              answered without the gold span%s\n", idList(rep.GoldMissed))
		}
	}
	if rep.Avoided != nil {
		fmt.Fprintf(env.Stdout, "rated down    avoided@5 %.4f of %d questions (no passage rated down in the top 5)\n", *rep.Avoided, rep.AvoidQueries)
	}
	if rep.RefusedUnanswerable != nil {
		fmt.Fprintf(env.Stdout, "unanswerable  refused %.4f, false answers %d of %d\n", *rep.RefusedUnanswerable, *rep.FalseAnswers, rep.Unanswerable)
	}
	if rep.FalseRefusalRate != nil {
		fmt.Fprintf(env.Stdout, "refusals      false refusals %.4f%s\n", *rep.FalseRefusalRate, idList(rep.FalseRefusals))
	}
	if rep.FalseAnswerRate != nil {
		fmt.Fprintf(env.Stdout, "              false answers %.4f%s\n", *rep.FalseAnswerRate, idList(rep.FalseAnswered))
	}
}

// idList prints the first ids of a list of questions (": a b c …"), or nothing for none.
func idList(ids []string) string {
	const shown = 12
	if len(ids) == 0 {
		return ""
	}
	out := ": " + strings.Join(ids[:min(len(ids), shown)], " ")
	if len(ids) > shown {
		out += fmt.Sprintf(" … (%d in all)", len(ids))
	}
	return out
}
