package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ragd/ragd/internal/config"
	"github.com/ragd/ragd/internal/extract"
	"github.com/ragd/ragd/internal/filter"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/meta"
	"github.com/ragd/ragd/internal/profile"
	"github.com/ragd/ragd/internal/rag"
)

func runIngest(ctx context.Context, env *Env, args []string) error {
	fset := newFlagSet("ingest")
	c := common{quiet: true}
	c.register(fset, env)
	collection := fset.String("collection", "", "add to the collection `NAME` (default \"default\")")
	var tags, metas multi
	fset.Var(&tags, "tag", "`TAG` for every ingested document (repeatable)")
	fset.Var(&metas, "meta", "metadata `KEY=VALUE` for every ingested document (repeatable)")
	fset.IntVar(&c.cfg.IngestWorkers, "workers", c.cfg.IngestWorkers, fmt.Sprintf("documents processed at once, 1 to %d (env RAGD_INGEST_WORKERS)", config.MaxIngestWorkers))
	metaCSV := fset.String("meta-csv", "", "CSV table `FILE` of per-file metadata: a header row, the key column naming the file, the other columns its metadata")
	metaKey := fset.String("meta-key", "", "the --meta-csv `COLUMN` that names the file: its name, path or name without extension (default \"file\", or the key of the collection's metadata schema)")
	fset.StringVar(metaKey, "key", "", "same as --meta-key")
	paths, err := parse(fset, args, env.Stdout)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return usageErr("no file or folder to ingest")
	}
	if err := checkWorkers("workers", c.cfg.IngestWorkers); err != nil {
		return err
	}
	meta := map[string]any{}
	for _, m := range metas {
		k, v, ok := strings.Cut(m, "=")
		if !ok || k == "" {
			return usageErr("--meta %q: want key=value", m)
		}
		meta[k] = filter.Value(v)
	}
	if len(meta) == 0 {
		meta = nil
	}

	files, skipped, err := collectFiles(paths)
	if err != nil {
		return err
	}
	a, err := c.open(ctx, env)
	if err != nil {
		return err
	}
	defer a.Close()
	var table *ingest.MetaTable
	var sch *metaSchema
	if *metaCSV != "" {
		if table, sch, err = readMetaTable(ctx, a.Store, *metaCSV, *metaKey, *collection); err != nil {
			return err
		}
	}
	// Each file's row of the table, looked up before the workers start so that the reports come in order.
	// With a metadata schema, the row's key is the document's external ID.
	perFile := map[string]map[string]any{}
	keys := map[string]string{}
	if table != nil {
		for _, f := range files {
			perFile[f], keys[f] = withRow(meta, table, f, env)
			if sch == nil {
				keys[f] = ""
			}
		}
	}
	n := a.Config.IngestWorkers

	start := time.Now()
	bar := newProgress(env.Stderr, len(files))
	var (
		mu                    sync.Mutex
		ok, unchanged, failed int
		jobs                  = make(chan string)
		wg                    sync.WaitGroup
	)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for path := range jobs {
				t := time.Now()
				fileMeta, found := perFile[path]
				if !found {
					fileMeta = meta
				}
				line, res := ingestFile(ctx, a.Ingest, path, *collection, tags, fileMeta, keys[path])
				mu.Lock()
				switch res {
				case ingest.Queued:
					ok++
				case ingest.Unchanged:
					unchanged++
				default:
					failed++
				}
				bar.line(fmt.Sprintf("%s (%.1fs)", line, time.Since(t).Seconds()), env.Stdout)
				mu.Unlock()
			}
		}()
	}
	for _, f := range files {
		if ctx.Err() != nil {
			break
		}
		jobs <- f
	}
	close(jobs)
	wg.Wait()
	bar.done()
	switch {
	case table != nil && sch != nil:
		// Rows no file names are records of their own.
		for _, row := range table.UnusedRows() {
			if ctx.Err() != nil {
				break
			}
			doc, outcome, err := a.Ingest.Ingest(ctx, rag.LocalPrincipal, ingest.RecordRequest(sch, row, *collection, ""))
			switch {
			case err != nil:
				failed++
				fmt.Fprintf(env.Stdout, "FAILED    record %s: %s\n", row.Key, describe(err))
			case outcome == ingest.Unchanged:
				unchanged++
				fmt.Fprintf(env.Stdout, "unchanged record %s (version %d)\n", row.Key, doc.Version)
			default:
				ok++
				fmt.Fprintf(env.Stdout, "ok        record %s (line %d, no document)\n", row.Key, row.Line)
			}
		}
	case table != nil:
		for _, row := range table.Unmatched() {
			fmt.Fprintf(env.Stderr, "warning: %s: row %s matches no ingested file\n", *metaCSV, row)
		}
	}
	fmt.Fprintf(env.Stdout, "ingested %d, unchanged %d, failed %d, skipped %d (unsupported type) in %.1fs\n",
		ok, unchanged, failed, skipped, time.Since(start).Seconds())
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if failed > 0 {
		return errFailed
	}
	return nil
}

type metaSchema = meta.Schema

// readMetaTable reads the --meta-csv table, typed and validated by the metadata schema of the collection's
// profile or its metadata_types setting when the collection exists (ingest.OpenTable); the schema is nil
// without one.
func readMetaTable(ctx context.Context, st rag.Store, file, key, collection string) (*ingest.MetaTable, *meta.Schema, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, nil, fmt.Errorf("--meta-csv: %w", err)
	}
	defer f.Close()
	var settings map[string]any
	var sch *meta.Schema
	if c, err := st.GetCollection(ctx, cmp.Or(collection, rag.DefaultCollection)); err == nil {
		settings = c.Settings
		if sch, err = profile.Schema(c); err != nil {
			return nil, nil, err
		}
	} else if !errors.Is(err, rag.ErrNotFound) {
		return nil, nil, err
	}
	t, err := ingest.OpenTable(f, key, sch, settings)
	if err != nil {
		return nil, nil, fmt.Errorf("--meta-csv %s: %w", file, err)
	}
	return t, sch, nil
}

// withRow returns the --meta values with the file's row of the table over them, and reports a file the
// table has no row for (it is ingested with the --meta values only).
func withRow(meta map[string]any, table *ingest.MetaTable, path string, env *Env) (map[string]any, string) {
	key, row, ok := table.LookupKey(filepath.ToSlash(path))
	if !ok {
		fmt.Fprintf(env.Stderr, "warning: no metadata row for %s\n", path)
		return meta, ""
	}
	for k, v := range meta {
		if _, set := row[k]; !set {
			row[k] = v
		}
	}
	return row, key
}

// ingestFile ingests one file, or the document at an http(s) URL (fetched under the SSRF rules), and
// returns its result line.
func ingestFile(ctx context.Context, pipe *ingest.Pipeline, path, collection string, tags []string, meta map[string]any, externalID string) (string, ingest.Outcome) {
	req := ingest.Request{Collection: collection, ExternalID: externalID, Tags: tags, Metadata: meta}
	if ingest.IsURL(path) {
		req.URL = path
	} else {
		abs, err := filepath.Abs(path)
		if err != nil {
			abs = path
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Sprintf("FAILED    %s: %v", path, err), ingest.Rejected
		}
		req.ExternalID, req.Name, req.Source, req.Data = cmp.Or(externalID, abs), filepath.Base(path), abs, data
	}
	doc, outcome, err := pipe.Ingest(ctx, rag.LocalPrincipal, req)
	if err != nil {
		return fmt.Sprintf("FAILED    %s: %s", path, describe(err)), ingest.Rejected
	}
	if outcome == ingest.Unchanged {
		return fmt.Sprintf("unchanged %s (version %d)", path, doc.Version), outcome
	}
	return fmt.Sprintf("ok        %s (version %d, %d chunks)", path, doc.Version, doc.ChunkCount), outcome
}

// collectFiles expands folders recursively (skipping hidden entries and unsupported types, which it counts)
// and keeps files named explicitly whatever their type, so that they get a clear error.
func collectFiles(paths []string) ([]string, int, error) {
	var files []string
	skipped := 0
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			files = append(files, p)
		}
	}
	for _, root := range paths {
		if ingest.IsURL(root) {
			add(root) // fetched when it is ingested
			continue
		}
		st, err := os.Stat(root)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, 0, fmt.Errorf("%s: no such file or folder", root)
		}
		if err != nil {
			return nil, 0, err
		}
		if !st.IsDir() {
			add(root)
			continue
		}
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if p != root && strings.HasPrefix(name, ".") || d.IsDir() && name == "node_modules" {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() || !d.Type().IsRegular() {
				return nil
			}
			if !extract.Supported(name) {
				skipped++
				return nil
			}
			add(p)
			return nil
		})
		if err != nil {
			return nil, 0, err
		}
	}
	return files, skipped, nil
}

// progress draws a bar on a terminal; elsewhere it only passes result lines through.
type progress struct {
	w     io.Writer
	tty   bool
	total int
	n     int
}

func newProgress(w io.Writer, total int) *progress {
	return &progress{w: w, total: total, tty: isTerminal(w)}
}

// isTerminal reports whether w is a terminal (where a progress line may be redrawn in place).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// line prints a finished item's line on out and redraws the bar.
func (p *progress) line(s string, out io.Writer) {
	p.n++
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintln(out, s)
	if p.tty {
		const width = 30
		filled := width * p.n / max(p.total, 1)
		fmt.Fprintf(p.w, "[%s%s] %d/%d", strings.Repeat("=", filled), strings.Repeat(" ", width-filled), p.n, p.total)
	}
}

func (p *progress) done() {
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
