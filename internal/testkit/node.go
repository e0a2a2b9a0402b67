package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// NodeTest runs `node --test file` in the folder dir (relative to the repository root) with env added to
// this process's environment, logs its output and fails the test when it fails. installed names a file under
// the folder's node_modules that exists once its npm packages are installed; when it is missing, `npm ci`
// installs them first (as its package-lock.json pins them).
func NodeTest(t *testing.T, dir, installed, file string, env ...string) {
	t.Helper()
	dir = filepath.Join(Root(), dir)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", installed)); err != nil {
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
		}
	}
	cmd := exec.Command("node", "--test", "--test-reporter=spec", file)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	t.Logf("node --test %s:\n%s", file, out)
	if err != nil {
		t.Fatalf("node --test %s failed: %v", file, err)
	}
}
