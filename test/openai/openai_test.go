// Package openai runs the official openai npm client (client.test.mjs, node's test runner) against the real
// binary on a real port: models, a completion and a streamed one with citations, a 401 and a 429. The npm
// package is installed here with `npm ci` when it is missing (package-lock.json pins it).
package openai

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ragd/ragd/internal/testkit"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testkit.RemoveBinary()
	os.Exit(code)
}

// chatLimit is the server's RAGD_RATE_LIMIT_CHAT: the client makes exactly this many completions with one
// key, then one more that must be refused.
const chatLimit = "5"

func TestOpenAIClient(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the npm client test runs in the full suite")
	}
	dir := filepath.Join(testkit.Root(), "test", "openai")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "openai", "package.json")); err != nil {
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in test/openai: %v\n%s", err, out)
		}
	}

	data := t.TempDir()
	ingest := exec.Command(testkit.Binary(t), "ingest", "--collection", "laws", testkit.FixturePath("pdf/bill_2125318_original.pdf"))
	ingest.Env = testkit.CleanEnv("RAGD_DATA_DIR=" + data)
	if out, err := ingest.CombinedOutput(); err != nil {
		t.Fatalf("ingest: %v\n%s", err, out)
	}
	srv := testkit.Serve(t, testkit.CleanEnv("RAGD_DATA_DIR="+data, "RAGD_API_KEYS=key-one,key-two",
		"RAGD_RATE_LIMIT_CHAT="+chatLimit, "RAGD_LOG_LEVEL=warn"))

	cmd := exec.Command("node", "--test", "--test-reporter=spec", "client.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "RAGD_URL="+srv.URL, "RAGD_KEY=key-one", "RAGD_KEY2=key-two",
		"RAGD_CHAT_LIMIT="+chatLimit, "RAGD_COLLECTION=laws")
	out, err := cmd.CombinedOutput()
	t.Logf("node --test client.test.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("the openai client's tests failed: %v", err)
	}
}
