package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// run runs the command line in a fresh data directory and returns its exit code and output.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	code = Run(context.Background(), args, strings.NewReader(""), &out, &errOut, func(k string) string {
		if k == "RAGD_DATA_DIR" {
			return dir
		}
		return ""
	})
	return code, out.String(), errOut.String()
}

// cliIn returns a runner of command lines over the data directory dir with env's variables besides:
// each call checks the exit code and returns standard output.
func cliIn(t *testing.T, dir string, env map[string]string) func(want int, args ...string) string {
	return func(want int, args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := Run(context.Background(), args, strings.NewReader(""), &out, &errOut, func(k string) string {
			if k == "RAGD_DATA_DIR" {
				return dir
			}
			return env[k]
		}); code != want {
			t.Fatalf("ragd %v: exit %d, want %d\n%s%s", args, code, want, out.String(), errOut.String())
		}
		return out.String()
	}
}

// doubled finds a repeated prefix such as "usage: usage:" or "ragd eval: eval:" in s.
func doubled(s string) string {
	for _, line := range strings.Split(s, "\n") {
		parts := strings.Split(line, ": ")
		for i := 1; i < len(parts)-1; i++ {
			if p := parts[i]; p != "" && (p == parts[i-1] || strings.HasSuffix(parts[i-1], " "+p)) {
				return line
			}
		}
	}
	return ""
}

// TestErrors checks what the CLI says when called wrongly (exit 2, the synopsis, a suggestion) and when a
// command fails (exit 1, no "usage"), and that no message repeats its prefix.
func TestErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nothing-here.pdf")
	for _, tc := range []struct {
		name    string
		args    []string
		code    int
		stderr  []string // each in stderr
		without []string // none in stderr
	}{
		{"NoCommand", nil, 2, []string{"usage: ragd <command>", "serve "}, nil},
		{"UnknownCommandNear", []string{"serch", "q"}, 2, []string{`unknown command "serch" (did you mean search?)`}, nil},
		{"UnknownCommandFar", []string{"frobnicate"}, 2, []string{`unknown command "frobnicate"`}, []string{"did you mean"}},
		{"UnknownFlagNear", []string{"search", "--colection", "laws", "q"}, 2,
			[]string{"ragd search: unknown flag --colection (did you mean --collection?)", "usage: ragd search "}, nil},
		{"UnknownFlagTransposed", []string{"ingest", "--wokrers", "2", "x"}, 2, []string{"(did you mean --workers?)"}, nil},
		{"UnknownFlagSingleDash", []string{"serve", "-adr", "x"}, 2, []string{"unknown flag --adr (did you mean --addr?)"}, nil},
		{"UnknownFlagFar", []string{"search", "--zzzzzz", "q"}, 2, []string{"unknown flag --zzzzzz"}, []string{"did you mean"}},
		{"FlagNeedsValue", []string{"search", "q", "--k"}, 2, []string{"--k needs a value"}, nil},
		{"FlagBadValue", []string{"search", "--k", "ten", "q"}, 2, []string{`invalid value "ten" for --k`}, nil},
		{"SearchNoQuery", []string{"search"}, 2, []string{"a query is required"}, nil},
		{"AskNoQuestion", []string{"ask", "--json"}, 2, []string{"a question is required"}, nil},
		{"IngestNothing", []string{"ingest"}, 2, []string{"no file or folder to ingest"}, nil},
		{"IngestMissingFile", []string{"ingest", missing}, 1, []string{missing + ": no such file or folder"}, []string{"usage"}},
		{"IngestWorkersZero", []string{"ingest", "--workers", "0", "x"}, 2, []string{"--workers must be between 1 and 64 (got 0)"}, nil},
		{"EvalNoDataset", []string{"eval"}, 2, []string{"one dataset is required"}, nil},
		{"EvalMissingDataset", []string{"eval", missing}, 1, []string{"ragd eval: dataset: ", "no such file or directory"}, []string{"usage"}},
		{"EvalKBelow10", []string{"eval", "--k", "9", missing}, 2, []string{"--k must be between 10 and 100 (got 9)"}, nil},
		{"EvalEvery", []string{"eval", "--every", "0", missing}, 2, []string{"--every must be at least 1 (got 0)"}, nil},
		{"EvalMissesNeedAnswers", []string{"eval", "--misses", "m.jsonl", missing}, 2, []string{"--misses needs --answers"}, nil},
		{"EvalBaseline", []string{"eval", "--baseline", "bm26", missing}, 2, []string{`--baseline is bm25 or none (got "bm26")`}, nil},
		{"BenchNoSubcommand", []string{"bench"}, 2, []string{"a subcommand is required: http", "usage: ragd bench http"}, nil},
		{"BenchUnknownSubcommand", []string{"bench", "htp"}, 2, []string{`unknown subcommand "htp" (did you mean http?)`}, nil},
		{"BenchKTooLarge", []string{"bench", "http", "--k", "101"}, 2, []string{"--k must be between 1 and 100 (got 101)"}, nil},
		{"BenchMissingQueries", []string{"bench", "http", "--url", "http://127.0.0.1:1", "--queries", missing}, 1, []string{"queries: open "}, []string{"usage"}},
		{"SpacesUnknownSubcommand", []string{"spaces", "dorp", "hash/v1/768"}, 2, []string{`unknown subcommand "dorp" (did you mean drop?)`}, nil},
		{"SpacesDropNoSpace", []string{"spaces", "drop"}, 2, []string{"drop takes one space"}, nil},
		{"MigrateArgument", []string{"migrate", "now"}, 2, []string{`ragd migrate: migrate takes no arguments (got "now")`}, nil},
		{"ServeArgument", []string{"serve", "now"}, 2, []string{`serve takes no arguments (got "now")`}, nil},
		{"WorkerConcurrency65", []string{"worker", "--concurrency", "65"}, 2, []string{"--concurrency must be between 1 and 64 (got 65)"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s", code, tc.code, stderr)
			}
			for _, s := range tc.stderr {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr)
				}
			}
			for _, s := range tc.without {
				if strings.Contains(stderr, s) {
					t.Errorf("stderr has %q:\n%s", s, stderr)
				}
			}
			if m := doubled(stderr); m != "" {
				t.Errorf("doubled prefix %q:\n%s", m, stderr)
			}
		})
	}
}

// TestKBounds runs search and ask at the edges of their k ranges, the same as POST /api/search and
// /api/chat (rag.MaxSearchK, rag.MaxAnswerK): the edges pass (on an empty index), one past them is a
// usage error.
func TestKBounds(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"search", "--k", "-1", "q"}, 2},
		{[]string{"search", "--k", "0", "q"}, 0},
		{[]string{"search", "--k", "1", "q"}, 0},
		{[]string{"search", "--k", "100", "q"}, 0},
		{[]string{"search", "--k", "101", "q"}, 2},
		{[]string{"ask", "--k", "-1", "q"}, 2},
		{[]string{"ask", "--k", "1", "q"}, 0},
		{[]string{"ask", "--k", "20", "q"}, 0},
		{[]string{"ask", "--k", "21", "q"}, 2},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := run(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", code, tc.code, stderr)
			}
			if code == 2 && !strings.Contains(stderr, "--k must be between 1 and ") {
				t.Fatalf("stderr: %s", stderr)
			}
		})
	}
}

// TestHelp checks that ragd help lists every command and that every `ragd CMD -h` prints its synopsis,
// its flags with their defaults and its subcommands, on stdout with exit 0.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		code, out, _ := run(t, args...)
		if code != 0 || !strings.HasPrefix(out, "usage: ragd <command>") {
			t.Fatalf("%v: exit %d\n%s", args, code, out)
		}
		for _, c := range commands() {
			if !regexp.MustCompile(`(?m)^  ` + c.name + ` +` + regexp.QuoteMeta(c.summary) + `$`).MatchString(out) {
				t.Errorf("%v: no line for %s:\n%s", args, c.name, out)
			}
		}
	}
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			code, out, stderr := run(t, c.name, "-h")
			if code != 0 || !strings.HasPrefix(out, "usage: "+c.usageLine()+"\n") {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, stderr)
			}
			if len(c.subs) > 0 && !strings.Contains(out, "\nsubcommands:\n") {
				t.Errorf("no subcommands:\n%s", out)
			}
			for _, s := range c.subs {
				if !strings.Contains(out, "  "+s.name) {
					t.Errorf("subcommand %s missing:\n%s", s.name, out)
				}
			}
			if c.name != "bench" && c.name != "version" && c.name != "healthcheck" && !strings.Contains(out, "  --data-dir DIR ") {
				t.Errorf("no --data-dir:\n%s", out)
			}
		})
	}
	// Defaults: the effective ones (the environment's), as the flags are bound to the configuration.
	var buf bytes.Buffer
	Run(context.Background(), []string{"search", "-h"}, nil, &buf, &buf, func(k string) string {
		return map[string]string{"RAGD_DATA_DIR": "/srv/ragd-test"}[k]
	})
	out := buf.String()
	if !regexp.MustCompile(`--k N +number of hits, 1 to 100; 0 is the service's default \(default 10\)`).MatchString(out) ||
		!strings.Contains(out, "(env RAGD_DATA_DIR) (default /srv/ragd-test)") {
		t.Errorf("search -h:\n%s", out)
	}
	_, out, _ = run(t, "bench", "http", "-h")
	for _, want := range []string{"--clients N", "(default 50)", "--duration DURATION", "(default 1m0s)", "--url URL"} {
		if !strings.Contains(out, want) {
			t.Errorf("bench http -h lacks %q:\n%s", want, out)
		}
	}
	code, out, _ := run(t, "help", "ask")
	if code != 0 || !strings.HasPrefix(out, "usage: ragd ask ") {
		t.Errorf("help ask: %d\n%s", code, out)
	}
}

func TestDoubled(t *testing.T) {
	for s, want := range map[string]bool{
		"ragd bench: usage: usage: ragd bench http": true,
		"ragd eval: eval: stat x: no such file":     true,
		"ragd eval: dataset: stat x: no such file":  false,
		"ragd migrate: migrate takes no arguments":  false,
	} {
		if got := doubled(s) != ""; got != want {
			t.Errorf("doubled(%q) = %v", s, got)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	names := []string{"collection", "filter", "json", "k", "data-dir"}
	for got, want := range map[string]string{
		"colection":  " (did you mean --collection?)",
		"colletcion": " (did you mean --collection?)",
		"filters":    " (did you mean --filter?)",
		"jsn":        " (did you mean --json?)",
		"data":       " (did you mean --data-dir?)", // a prefix of one flag only
		"kk":         " (did you mean --k?)",
		"verbose":    "",
		"x":          "",
	} {
		if s := didYouMean(got, names, "--"); s != want {
			t.Errorf("didYouMean(%q) = %q, want %q", got, s, want)
		}
	}
}
