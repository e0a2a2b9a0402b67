package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/ragd/ragd/internal/qa"
	"github.com/ragd/ragd/internal/rag"
)

// runQuestions is `ragd questions list|show|answer-now|embed`: the Q&A boards from the command line.
func runQuestions(ctx context.Context, env *Env, args []string) error {
	subs := []string{"list", "show", "answer-now", "embed"}
	sub, args := subcommandOf(args)
	fset := newFlagSet("questions")
	c := common{quiet: true}
	c.register(fset, env)
	collection := fset.String("collection", "", "only the board of collection `NAME` (list)")
	status := fset.String("status", "", "only questions in `STATUS` open, answered or failed (list)")
	limit := fset.Int("limit", 100, "at most this many questions (list)")
	asJSON := fset.Bool("json", false, "print JSON")
	pos, err := parse(fset, args, env.Stdout)
	if err != nil {
		return err
	}
	want := map[string]int{"list": 0, "show": 1, "answer-now": 0, "embed": 0}
	n, known := want[sub]
	switch {
	case sub == "":
		return usageErr("a subcommand is required: list, show, answer-now or embed")
	case !known:
		return usageErr("unknown subcommand %q%s", sub, didYouMean(sub, subs, ""))
	}
	if len(pos) != n {
		return usageErr("ragd questions %s takes %d argument(s)", sub, n)
	}
	a, err := c.open(ctx, env)
	if err != nil {
		return err
	}
	defer a.Close()
	out := env.Stdout
	switch sub {
	case "list":
		qs, err := a.Board.List(ctx, rag.LocalPrincipal, *collection, rag.QuestionStatus(*status), *limit)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(out, map[string]any{"questions": qs})
		}
		for _, q := range qs {
			fmt.Fprintf(out, "%s  %-8s  %s  %s\n", q.ID, q.Status, q.CreatedAt.Format("2006-01-02 15:04"), q.Title)
		}
		fmt.Fprintf(out, "%d question(s)\n", len(qs))
	case "show":
		th, err := a.Board.Get(ctx, nil, pos[0])
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(out, th)
		}
		printThread(out, th)
	case "answer-now":
		run, err := a.Board.Pass(ctx, qa.TriggerCLI)
		if run != nil {
			if *asJSON {
				if jerr := writeJSON(out, run); jerr != nil {
					return jerr
				}
			} else {
				fmt.Fprintf(out, "run %s: answered %d, failed %d, skipped %d\n", run.ID, run.Answered, run.Failed, run.Skipped)
				for _, e := range run.Errors {
					fmt.Fprintf(out, "  %s\n", e)
				}
			}
		}
		return err
	case "embed":
		total := 0
		for {
			k, err := a.Board.Backfill(ctx, 100)
			total += k
			if err != nil {
				return err
			}
			if k == 0 {
				break
			}
		}
		fmt.Fprintf(out, "embedded %d question(s) in %s\n", total, a.Embedder.Space().ID())
	}
	return nil
}

func printThread(w interface{ Write([]byte) (int, error) }, th *qa.Thread) {
	fmt.Fprintf(w, "%s  [%s, %d attempt(s)]\n", th.Title, th.Status, th.Attempts)
	if th.Body != "" {
		fmt.Fprintf(w, "%s\n", th.Body)
	}
	if th.LastError != "" {
		fmt.Fprintf(w, "last error: %s\n", th.LastError)
	}
	for _, a := range th.Answers {
		who := "AI"
		if !a.IsAI && a.Author != nil {
			who = *a.Author
		}
		fmt.Fprintf(w, "\n--- %s, %s\n%s\n", who, a.CreatedAt.Format("2006-01-02 15:04"), strings.TrimSpace(a.Body))
		for i, r := range a.SourceRefs {
			fmt.Fprintf(w, "[%d] %s, chunk %d%s, similarity %.2f\n", i+1, r.Title, r.ChunkIndex, metaText(r.Metadata), r.Similarity)
		}
	}
}
