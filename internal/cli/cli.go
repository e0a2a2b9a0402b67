// Package cli implements ragd's command line: each subcommand parses its flags, builds the app from the
// environment and the flags, and calls into internal/.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ragd/ragd/internal/app"
	"github.com/ragd/ragd/internal/buildinfo"
	"github.com/ragd/ragd/internal/config"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/telemetry"
)

// Version is the build's version (internal/buildinfo), as start-up log lines show it.
var Version = buildinfo.Get().Version

// Env is what a command runs with.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
}

type command struct {
	name    string
	summary string
	// synopsis is the usage line after "ragd NAME".
	synopsis string
	// subs are the subcommands, if any, with one line each.
	subs []subcommand
	run  func(ctx context.Context, env *Env, args []string) error
}

type subcommand struct{ name, summary string }

func commands() []command {
	return []command{
		{name: "serve", summary: "run the HTTP API and web UI", synopsis: "[--addr HOST:PORT] [--no-worker] [--pprof 127.0.0.1:PORT]", run: runServe},
		{name: "mcp", summary: "serve the MCP tools (search, ask, documents, ingest_text) over stdio (docs/integrations.md)", run: runMCP},
		{name: "worker", summary: "run background jobs only (ingestion, periodic jobs)", synopsis: "[--concurrency N]", run: runWorker},
		{name: "ingest", summary: "add files, folders and URLs to the index", synopsis: "[--collection C] [--tag T…] [--meta k=v…] [--meta-csv FILE [--meta-key COLUMN]] PATH|URL…", run: runIngest},
		{name: "search", summary: "search the index", synopsis: "[--k N] [--collection C] [--filter key=value…] [--json] QUERY", run: runSearch},
		{name: "ask", summary: "answer a question from the documents", synopsis: "[--k N] [--collection C] [--filter key=value…] [--json] QUESTION", run: runAsk},
		{name: "questions", summary: "Q&A boards: list, show, answer now, embed", synopsis: "list [--collection C] [--status S] [--json] | show [--json] ID | answer-now [--json] | embed",
			subs: []subcommand{
				{"list", "list a board's questions, newest first"},
				{"show", "print a question with its answers and their sources"},
				{"answer-now", "run one answer pass in the foreground and print its log"},
				{"embed", "embed every question without a vector in the configured space"},
			}, run: runQuestions},
		{name: "collections", summary: "create a collection with an owner and visibility; apply or show a profile (docs/collections.md)",
			synopsis: "apply FILE | show [--json] NAME | create NAME --owner user:NAME|team:TEAM --visibility private|team|public | access NAME [--owner O] [--visibility V]",
			subs: []subcommand{
				{"apply", "create or update the collection a profile file (YAML or JSON) names"},
				{"show", "print a collection's profile, defaults filled in"},
				{"create", "create a collection owned by a user or team, private, team or public (docs/security.md)"},
				{"access", "give a collection another owner or visibility"},
			}, run: runCollections},
		{name: "import", summary: "load a knowledge graph bundle or a record table into a collection (docs/graph.md)",
			synopsis: "graph --collection C DIR | ragd import table --collection C --name N FILE.csv",
			subs: []subcommand{
				{"graph", "make the bundle in DIR (sections, entities, relations, chunks .jsonl) the collection's graph"},
				{"table", "replace a record table declared in the collection's graph section with a CSV file's rows"},
			}, run: runImport},
		{name: "feedback", summary: "users' ratings of answers and sources; export them as an eval question set",
			synopsis: "list [--limit N] [--json] | export [--out DIR] [--docs DIR] [--name N] [--json]", subs: []subcommand{
				{"list", "list every principal's ratings, newest first"},
				{"export", "turn the ratings into eval items (a set folder with --out; ragd eval runs it)"},
			}, run: runFeedback},
		{name: "users", summary: "users who hold API keys (docs/security.md)", synopsis: "add NAME [--team TEAM [--role member|admin]] | list [--json] | disable NAME | enable NAME",
			subs: []subcommand{
				{"add", "add a user, optionally to a team"},
				{"list", "list users, their state and teams"},
				{"disable", "refuse every key of a user"},
				{"enable", "accept a disabled user's keys again"},
			}, run: runUsers},
		{name: "teams", summary: "teams of users; grants and collections name them as team:NAME", synopsis: "add TEAM | list [--json] | members TEAM [--json] | join TEAM USER [--role member|admin] | role TEAM USER member|admin | remove TEAM USER",
			subs: []subcommand{
				{"add", "add a team"},
				{"list", "list teams and their member counts"},
				{"members", "list a team's members and roles"},
				{"join", "add a user to a team or change its role"},
			}, run: runTeams},
		{name: "keys", summary: "users' API keys, stored hashed and shown by prefix; the data encryption key's rotation", synopsis: "create --user NAME --scopes read[,write][,admin] [--expires D] | list [--json] | revoke PREFIX_OR_KEY | rotate-data",
			subs: []subcommand{
				{"create", "make a key and print it (alone, on stdout); it is never shown again"},
				{"list", "list keys by prefix with their user, scopes and state"},
				{"revoke", "refuse a key from now on"},
				{"rotate-data", "re-encrypt every stored blob and passage under RAGD_ENCRYPTION_KEY now (serve does it in the background)"},
			}, run: runKeys},
		{name: "documents", summary: "delete documents (restorable until RAGD_PURGE_AFTER), restore them, list or purge the deleted",
			synopsis: "deleted [--json] | delete ID… | restore ID… | purge | versions [--json] ID | revert ID N", subs: []subcommand{
				{"deleted", "list the deleted documents that can still be restored, with when they will be purged"},
				{"delete", "hide documents from every query at once; purged RAGD_PURGE_AFTER later"},
				{"restore", "bring deleted documents back and re-index them"},
				{"purge", "remove now the documents deleted over RAGD_PURGE_AFTER ago"},
				{"versions", "list a document's versions, newest first"},
				{"revert", "make version N current again (indexed as the next version)"},
			}, run: runDocuments},
		{name: "sources", summary: "a collection's sources (folders, …) kept in sync: add, list, sync now, remove (docs/connectors.md)",
			synopsis: "add --collection C [--schedule CRON] [--credentials-file F] (folder DIR [--include G…] [--exclude G…] | JSON) | list [--collection C] [--json] | sync ID | remove ID",
			subs: []subcommand{
				{"add", "add a source to a collection (a folder, or any kind as JSON)"},
				{"list", "list sources with their last sync"},
				{"sync", "sync a source now, in the foreground"},
				{"remove", "remove a source; its documents stay"},
			}, run: runSources},
		{name: "webhooks", summary: "a collection's webhooks: add (prints the signing secret once), list, remove, their delivery log, a test ping (docs/integrations.md)",
			synopsis: "add --collection C [--event E…] [--description D] URL | list --collection C [--json] | remove ID | deliveries [--limit N] [--json] ID | ping ID",
			subs: []subcommand{
				{"add", "register a URL for the collection's events; prints its secret, shown only now"},
				{"list", "list the collection's webhooks"},
				{"remove", "remove a webhook and its delivery log"},
				{"deliveries", "the delivery log, newest attempt first"},
				{"ping", "send a signed ping now and say how the receiver answered"},
			}, run: runWebhooks},
		{name: "audit", summary: "the audit log: who searched, read, downloaded, changed what, newest first",
			synopsis: "[--principal ID] [--action A] [--document ID] [--outcome ok|denied|failed] [--since D] [--limit N] [--before ID] [--json]", run: runAudit},
		{name: "eval", summary: "measure retrieval (and answer) quality on a dataset", synopsis: "[--k 10] [--answers] [--baseline bm25|none] [--json] DATASET", run: runEval},
		{name: "migrate", summary: "apply database migrations and exit", run: runMigrate},
		{name: "spaces", summary: "list embedding spaces; re-embed now; drop an old embedder's vectors",
			synopsis: "[--json] | ragd spaces reembed | ragd spaces drop [--force] PROVIDER/MODEL/DIM", subs: []subcommand{
				{"(none)", "list the spaces, which one searches use and the re-embed's progress"},
				{"reembed", "re-embed into the configured space now, in the foreground (resumable)"},
				{"drop", "remove an old space's vectors (--force for the one searches use)"},
			}, run: runSpaces},
		{name: "bench", summary: "load-test a running server; measure vector search on a generated corpus",
			synopsis: "http [--url URL] [--clients N] [--duration D] [--k K] [--queries FILE] [--chat-share F] | ragd bench search [--chunks N] [--queries N] [--database-url URL] [--json]",
			subs: []subcommand{{"http", "send POST /api/search from N clients for a duration; print throughput and latency"},
				{"search", "load a clustered 768-d corpus into a temporary embedded store; time its vector search beside exact float32"}}, run: runBench},
		{name: "healthcheck", summary: "exit 0 when a running server answers /healthz (the container's HEALTHCHECK)",
			synopsis: "[--url URL] [--timeout D]", run: runHealthcheck},
		{name: "version", summary: "print the version, commit and hosted providers of this build (also ragd --version)", run: runVersion},
	}
}

// lookup finds a command by name.
func lookup(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// Run runs the command line args and returns the process exit code: 0, 1 when the command failed, 2 when
// it was called wrongly (an unknown command or flag, a missing or bad argument).
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	env := &Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: getenv}
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || args[0] == "help" {
		if len(args) > 1 && args[0] == "help" {
			// ragd help CMD is ragd CMD -h.
			return Run(ctx, []string{args[1], "-h"}, stdin, stdout, stderr, getenv)
		}
		usage(stdout)
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" {
		args = []string{"version"}
	}
	c, ok := lookup(args[0])
	if !ok {
		names := make([]string, 0, len(commands()))
		for _, c := range commands() {
			names = append(names, c.name)
		}
		fmt.Fprintf(stderr, "ragd: unknown command %q%s\nRun 'ragd help' for the list of commands.\n", args[0], didYouMean(args[0], names, ""))
		return 2
	}
	err := c.run(ctx, env, args[1:])
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "ragd %s: %s\nusage: %s\nRun 'ragd %s -h' for its flags.\n", c.name, ue, c.usageLine(), c.name)
		return 2
	case errors.Is(err, errFailed):
		return 1
	default:
		fmt.Fprintf(stderr, "ragd %s: %s\n", c.name, describe(err))
		return 1
	}
}

// usageLine is the command's one-line synopsis.
func (c command) usageLine() string {
	if c.synopsis == "" {
		return "ragd " + c.name + " [flags]"
	}
	return "ragd " + c.name + " " + c.synopsis
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: ragd <command> [flags] [args]")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nEvery command but bench and version takes --data-dir (env RAGD_DATA_DIR, default ./ragd-data);")
	fmt.Fprintln(w, "RAGD_DATABASE_URL selects PostgreSQL. Run 'ragd <command> -h' for its flags.")
}

// printHelp prints a command's synopsis, summary, flags with their defaults, and subcommands.
func printHelp(w io.Writer, fs *flag.FlagSet) {
	name, _, _ := strings.Cut(fs.Name(), " ")
	c, ok := lookup(name)
	if !ok {
		c = command{name: fs.Name()}
	}
	fmt.Fprintf(w, "usage: %s\n", c.usageLine())
	if c.summary != "" {
		fmt.Fprintf(w, "\n%s.\n", strings.ToUpper(c.summary[:1])+c.summary[1:])
	}
	if len(c.subs) > 0 {
		fmt.Fprintln(w, "\nsubcommands:")
		for _, s := range c.subs {
			fmt.Fprintf(w, "  %-8s %s\n", s.name, s.summary)
		}
	}
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return
	}
	fmt.Fprintln(w, "\nflags:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fs.VisitAll(func(f *flag.Flag) {
		typ, text := flag.UnquoteUsage(f)
		switch typ {
		case "int", "uint":
			typ = "N"
		default:
			typ = strings.ToUpper(typ)
		}
		line := "  --" + f.Name
		if typ != "" {
			line += " " + typ
		}
		if d := f.DefValue; d != "" && d != "false" && d != "[]" {
			text += " (default " + d + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\n", line, text)
	})
	tw.Flush()
}

// usageError is a command called wrongly (exit code 2); its text says what is wrong.
type usageError string

func (e usageError) Error() string { return string(e) }

// Is makes errors.Is(err, errUsage) true for every usage error.
func (usageError) Is(target error) bool { return target == errUsage }

var (
	errUsage  = errors.New("usage error")
	errFailed = errors.New("failed") // already reported
)

func usageErr(format string, args ...any) error {
	return usageError(fmt.Sprintf(format, args...))
}

// didYouMean suggests the candidate nearest to got (" (did you mean --collection?)"), or "" when none is
// near: at most a third of its letters (at least one, never all) edited, or got a prefix of one candidate
// only.
func didYouMean(got string, candidates []string, prefix string) string {
	best, bestD := "", -1
	prefixed := []string{}
	for _, c := range candidates {
		if d := editDistance(got, c); bestD < 0 || d < bestD {
			best, bestD = c, d
		}
		if got != "" && strings.HasPrefix(c, got) {
			prefixed = append(prefixed, c)
		}
	}
	switch {
	case bestD >= 0 && bestD <= max(1, len([]rune(got))/3) && bestD < len([]rune(got)):
	case len(prefixed) == 1:
		best = prefixed[0]
	default:
		return ""
	}
	return fmt.Sprintf(" (did you mean %s%s?)", prefix, best)
}

// editDistance is the edit distance between a and b, by runes: insertions, deletions, substitutions and
// transpositions of neighbours (--colelction) count one each.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// describe renders an error for the terminal: the code and the safe message, plus the cause for
// non-application errors (the CLI user is the operator).
func describe(err error) string {
	var re *rag.Error
	if errors.As(err, &re) {
		return fmt.Sprintf("%s (%s)", re.Message, re.Code)
	}
	return err.Error()
}

// common holds the configuration every command opens the app with, and the flags that set its fields.
type common struct {
	// cfg is the configuration from the environment, its fields overridden by the flags bound to them.
	cfg    config.Config
	cfgErr error
	loaded bool
	// quiet is set by commands that report their own results (ingest, search, ask, spaces, eval): their log
	// shows warnings and errors only, unless RAGD_LOG_LEVEL asks for more.
	quiet bool
}

// register loads the configuration from the environment and binds the common flags to its fields, so that
// a flag overrides its variable and -h shows the effective default. A configuration error is reported by
// load, after the flags are parsed (so that -h still works).
func (c *common) register(fs *flag.FlagSet, env *Env) {
	c.cfg, c.cfgErr = config.Load(env.Getenv)
	c.loaded = true
	fs.StringVar(&c.cfg.DataDir, "data-dir", c.cfg.DataDir, "`DIR` holding the embedded store (env RAGD_DATA_DIR)")
}

// load returns the configuration: the environment's (read once, by register) with the flags applied.
func (c *common) load(env *Env) (config.Config, error) {
	if !c.loaded {
		c.cfg, c.cfgErr = config.Load(env.Getenv)
		c.loaded = true
	}
	if c.cfgErr != nil {
		return c.cfg, fmt.Errorf("configuration: %w", c.cfgErr)
	}
	return c.cfg, nil
}

// open loads the configuration and opens the app on it.
func (c *common) open(ctx context.Context, env *Env) (*app.App, error) {
	cfg, err := c.load(env)
	if err != nil {
		return nil, err
	}
	return c.openConfig(ctx, env, cfg)
}

// openConfig opens the app on cfg, loaded by c.load (once) and changed by the command's own flags.
func (c *common) openConfig(ctx context.Context, env *Env, cfg config.Config) (*app.App, error) {
	if c.quiet && cfg.LogLevel == "" {
		cfg.LogLevel = "warn"
	}
	return app.Open(ctx, cfg, newLogger(env.Stderr, cfg.LogLevel))
}

// newLogger logs at level ("" is info; config.Validate has checked the rest).
func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if level != "" {
		_ = l.UnmarshalText([]byte(level))
	}
	// Records logged inside a traced request or job carry its trace_id and span_id.
	return slog.New(telemetry.LogHandler(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})))
}

// startTracing exports traces when the OTEL_EXPORTER_OTLP_* variables ask for it (telemetry.SetupTracing);
// the returned stop flushes what is buffered, within a few seconds.
func startTracing(ctx context.Context, env *Env) (stop func(), err error) {
	shutdown, err := telemetry.SetupTracing(ctx, env.Getenv, Version)
	if err != nil {
		return nil, err
	}
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = shutdown(sctx)
	}, nil
}

// parse parses flags that may come before, between or after positional arguments. On -h it prints the
// command's help on help and returns flag.ErrHelp; a flag error is a usage error that says what is wrong
// (an unknown flag names the nearest one).
func parse(fs *flag.FlagSet, args []string, help io.Writer) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				printHelp(help, fs)
				return nil, err
			}
			return nil, flagError(fs, err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// flagError rewrites the flag package's error in the CLI's terms (--name) and suggests the flag meant.
func flagError(fs *flag.FlagSet, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		name = strings.TrimPrefix(name, "-")
		return usageErr("unknown flag --%s%s", name, didYouMean(name, names, "--"))
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return usageErr("--%s needs a value", name)
	}
	if i := strings.Index(msg, " for flag -"); strings.HasPrefix(msg, "invalid ") && i > 0 {
		// invalid value "x" for flag -k: parse error
		return usageErr("%s for --%s", msg[:i], msg[i+len(" for flag -"):])
	}
	return usageErr("%s", msg)
}

// noArgs is the error of a command that takes no positional arguments, or nil.
func noArgs(name string, pos []string) error {
	if len(pos) > 0 {
		return usageErr("%s takes no arguments (got %q)", name, pos[0])
	}
	return nil
}

// multi is a repeatable string flag.
type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

// subcommandOf splits a command's arguments into its subcommand ("" when the first is a flag or there is
// none) and the rest.
func subcommandOf(args []string) (string, []string) {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return args[0], args[1:]
	}
	return "", args
}

func newFlagSet(name string) *flag.FlagSet { return flag.NewFlagSet(name, flag.ContinueOnError) }

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
