package postgres

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// A plain PostgreSQL (Debian's, without pgvector) for the tests that need a real server but no vectors: the
// missing-extension error and the advisory lock of concurrent migrations (PGlite's single session makes every
// lock re-entrant). RAGD_TEST_PLAIN_POSTGRES_URL names one; otherwise the first test that needs it starts a
// throw-away cluster from /usr/lib/postgresql/*/bin in a temp dir, and TestMain stops it.
var plain struct {
	once sync.Once
	url  string
	skip string
	stop func()
}

func plainPostgresURL(t *testing.T) string {
	t.Helper()
	plain.once.Do(func() {
		if u := os.Getenv("RAGD_TEST_PLAIN_POSTGRES_URL"); u != "" {
			plain.url = u
			return
		}
		plain.url, plain.stop, plain.skip = startPlainPostgres()
	})
	if plain.url == "" {
		t.Skip(plain.skip)
	}
	return plain.url
}

func TestMain(m *testing.M) {
	code := m.Run()
	if plain.stop != nil {
		plain.stop()
	}
	os.Exit(code)
}

// startPlainPostgres runs initdb and pg_ctl start (as user postgres when running as root, since PostgreSQL
// refuses root) and returns the server's URL, or why it could not.
func startPlainPostgres() (url string, stop func(), skip string) {
	initdbs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(initdbs) == 0 {
		return "", nil, "no PostgreSQL binaries in /usr/lib/postgresql and RAGD_TEST_PLAIN_POSTGRES_URL is not set"
	}
	bin := filepath.Dir(initdbs[len(initdbs)-1])
	dir, err := os.MkdirTemp("", "ragd-plainpg-")
	if err != nil {
		return "", nil, err.Error()
	}
	var wrap []string
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return "", nil, "running as root without a postgres user to run PostgreSQL as"
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return "", nil, err.Error()
		}
		wrap = []string{"runuser", "-u", "postgres", "--"}
	}
	run := func(args ...string) error {
		args = append(wrap, args...)
		out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %v\n%s", filepath.Base(args[len(wrap)]), err, out)
		}
		return nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err.Error()
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	data := filepath.Join(dir, "data")
	if err := run(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"); err != nil {
		os.RemoveAll(dir)
		return "", nil, "initdb failed: " + err.Error()
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off", port, dir)
	if err := run(filepath.Join(bin, "pg_ctl"), "-D", data, "-o", opts, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "start"); err != nil {
		os.RemoveAll(dir)
		return "", nil, "pg_ctl start failed: " + err.Error()
	}
	stop = func() {
		run(filepath.Join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "stop") //nolint:errcheck // best effort at exit
		os.RemoveAll(dir)
	}
	url = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return url, stop, ""
}
