package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ragd/ragd/internal/feedback"
	"github.com/ragd/ragd/internal/qset"
	"github.com/ragd/ragd/internal/rag"
)

// runFeedback is `ragd feedback list|export`: users' ratings of answers and sources, and their export as a
// question set that `ragd eval` runs.
func runFeedback(ctx context.Context, env *Env, args []string) error {
	subs := []string{"list", "export"}
	sub, args := subcommandOf(args)
	fset := newFlagSet("feedback")
	c := common{quiet: true}
	c.register(fset, env)
	limit := fset.Int("limit", 100, fmt.Sprintf("at most this many ratings, 1 to %d (list)", rag.MaxFeedbackList))
	asJSON := fset.Bool("json", false, "print JSON (list; export without --out)")
	out := fset.String("out", "", "write the question set (set.json, questions.jsonl) into folder `DIR` (export)")
	docs := fset.String("docs", "", "the folder `DIR` the rated files are read from by ragd eval (export; default: the folder holding them all)")
	name := fset.String("name", "feedback", "the question set's `NAME` (export)")
	pos, err := parse(fset, args, env.Stdout)
	if err != nil {
		return err
	}
	switch {
	case sub == "":
		return usageErr("a subcommand is required: list or export")
	case sub != "list" && sub != "export":
		return usageErr("unknown subcommand %q%s", sub, didYouMean(sub, subs, ""))
	case len(pos) != 0:
		return usageErr("ragd feedback %s takes no arguments", sub)
	case *limit < 1 || *limit > rag.MaxFeedbackList:
		return usageErr("--limit must be between 1 and %d (got %d)", rag.MaxFeedbackList, *limit)
	}
	if *docs != "" {
		if *docs, err = filepath.Abs(*docs); err != nil {
			return err
		}
	}
	a, err := c.open(ctx, env)
	if err != nil {
		return err
	}
	defer a.Close()
	w := env.Stdout
	if sub == "list" {
		list, err := a.Feedback.List(ctx, rag.LocalPrincipal, true, rag.FeedbackQuery{Limit: *limit})
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(w, map[string]any{"feedback": list})
		}
		for _, f := range list {
			thumb := "up  "
			if f.Rating < 0 {
				thumb = "down"
			}
			what := "answer"
			if f.Target == rag.FeedbackSource && len(f.Passages) == 1 {
				what = fmt.Sprintf("source %s p.%d", f.Passages[0].File, f.Passages[0].PageStart)
			}
			fmt.Fprintf(w, "%s  %s  %-10s  %s  %s: %s", f.UpdatedAt.Format("2006-01-02 15:04"), thumb, f.Principal, f.Question, what, f.Comment)
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%d rating(s)\n", len(list))
		return nil
	}
	ex, err := a.Feedback.Export(ctx, rag.LocalPrincipal, *name, *docs)
	if err != nil {
		return err
	}
	if *out == "" {
		if *asJSON {
			return writeJSON(w, ex)
		}
		for _, it := range ex.Items {
			b, err := json.Marshal(it)
			if err != nil {
				return err
			}
			fmt.Fprintln(w, string(b))
		}
	} else if err := writeSet(*out, ex.Set, ex.Items); err != nil {
		return err
	}
	for _, s := range ex.Skipped {
		fmt.Fprintf(env.Stderr, "skipped %q: %s\n", s.Question, s.Reason)
	}
	fmt.Fprintf(env.Stderr, "%d rating(s) → %d item(s), %d question(s) skipped\n", ex.Ratings, len(ex.Items), len(ex.Skipped))
	if *out != "" && len(ex.Items) > 0 {
		fmt.Fprintf(env.Stderr, "run it: ragd eval %s\n", *out)
	}
	return nil
}

// writeSet writes a question set folder: set.json and questions.jsonl (one item per line).
func writeSet(dir string, set feedback.SetMeta, items []qset.Item) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	meta, err := json.MarshalIndent(set, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "set.json"), append(meta, '\n'), 0o644); err != nil {
		return err
	}
	var buf bytes.Buffer
	for _, it := range items {
		b, err := json.Marshal(it)
		if err != nil {
			return err
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return os.WriteFile(filepath.Join(dir, "questions.jsonl"), buf.Bytes(), 0o644)
}
