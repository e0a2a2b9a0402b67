// Package openai runs the official openai npm client (client.test.mjs, node's test runner) against the real
// binary on a real port: models, a completion and a streamed one with citations, a 401 and a 429. The npm
// package is installed here with `npm ci` when it is missing (package-lock.json pins it).
package openai

import (
	"os"
	"os/exec"
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
	data := t.TempDir()
	ingest := exec.Command(testkit.Binary(t), "ingest", "--collection", "laws", testkit.FixturePath("pdf/bill_2125318_original.pdf"))
	ingest.Env = testkit.CleanEnv("RAGD_DATA_DIR=" + data)
	if out, err := ingest.CombinedOutput(); err != nil {
		t.Fatalf("ingest: %v\n%s", err, out)
	}
	srv := testkit.Serve(t, testkit.CleanEnv("RAGD_DATA_DIR="+data, "RAGD_API_KEYS=key-one,key-two",
		"RAGD_RATE_LIMIT_CHAT="+chatLimit, "RAGD_LOG_LEVEL=warn"))

	testkit.NodeTest(t, "test/openai", "openai/package.json", "client.test.mjs", "RAGD_URL="+srv.URL, "RAGD_KEY=key-one",
		"RAGD_KEY2=key-two", "RAGD_CHAT_LIMIT="+chatLimit, "RAGD_COLLECTION=laws")
}
