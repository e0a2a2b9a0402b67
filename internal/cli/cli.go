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

	"github.com/ragd/ragd/internal/app"
	"github.com/ragd/ragd/internal/config"
	"github.com/ragd/ragd/internal/rag"
)

// Version is set at build time with -ldflags "-X github.com/ragd/ragd/internal/cli.Version=…".
var Version = "dev"

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
	run     func(ctx context.Context, env *Env, args []string) error
}

func commands() []command {
	return []command{
		{"serve", "run the HTTP API and web UI", runServe},
		{"worker", "run background jobs only (ingestion, periodic jobs)", runWorker},
		{"ingest", "add files and folders to the index", runIngest},
		{"search", "search the index", runSearch},
		{"ask", "answer a question from the documents", runAsk},
		{"eval", "measure retrieval (and answer) quality on a dataset", runEval},
		{"migrate", "apply database migrations and exit", runMigrate},
		{"spaces", "list embedding spaces; drop an old embedder's vectors", runSpaces},
		{"bench", "load-test a running server (ragd bench http)", runBench},
		{"version", "print the version", func(_ context.Context, env *Env, _ []string) error {
			fmt.Fprintln(env.Stdout, "ragd", Version)
			return nil
		}},
	}
}

// Run runs the command line args and returns the process exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	env := &Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: getenv}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, env, args[1:])
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, errUsage):
			fmt.Fprintf(stderr, "ragd %s: %v\n", c.name, err)
			return 2
		case errors.Is(err, errFailed):
			return 1
		default:
			fmt.Fprintf(stderr, "ragd %s: %s\n", c.name, describe(err))
			return 1
		}
	}
	fmt.Fprintf(stderr, "ragd: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: ragd <command> [flags] [args]")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nEvery command takes --data-dir (env RAGD_DATA_DIR, default ./ragd-data); RAGD_DATABASE_URL selects PostgreSQL.")
	fmt.Fprintln(w, "Run 'ragd <command> -h' for its flags.")
}

var (
	errUsage  = errors.New("usage")
	errFailed = errors.New("failed") // already reported
)

func usageErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, args...))
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

// common holds the flags every command has.
type common struct {
	dataDir string
	// quiet is set by commands that report their own results (ingest, search, ask, spaces, eval): their log
	// shows warnings and errors only, unless RAGD_LOG_LEVEL asks for more.
	quiet bool
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.dataDir, "data-dir", "", "data directory of the embedded store (env RAGD_DATA_DIR, default ./ragd-data)")
}

// load reads the configuration from the environment and applies the common flags.
func (c *common) load(env *Env) (config.Config, error) {
	cfg, err := config.Load(env.Getenv)
	if err != nil {
		return cfg, fmt.Errorf("configuration: %w", err)
	}
	if c.dataDir != "" {
		cfg.DataDir = c.dataDir
	}
	return cfg, nil
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
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

// parse parses flags that may come before, between or after positional arguments.
func parse(fs *flag.FlagSet, args []string, help io.Writer) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(help)
				fs.PrintDefaults()
				return nil, err
			}
			return nil, usageErr("%v", err)
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

// multi is a repeatable string flag.
type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func newFlagSet(name string) *flag.FlagSet { return flag.NewFlagSet(name, flag.ContinueOnError) }
