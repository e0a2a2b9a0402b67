package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/testkit"
)

// TestAskJSONIsTheChatShape asks one question of one index twice, with `ragd ask --json` and over
// POST /api/chat of `ragd serve`, and checks that both print the same JSON object: the same fields
// (rag.AnswerView's, none unknown to it) and, timings aside, the same values.
func TestAskJSONIsTheChatShape(t *testing.T) {
	data := t.TempDir()
	env := []string{"RAGD_DATA_DIR=" + data}
	if r := ragd(t, env, "ingest", filepath.Join(fixtures, "md")); r.code != 0 {
		t.Fatalf("ingest: exit %d\n%s", r.code, r.stderr)
	}
	const question = "컴포넌트를 export 하는 방법은?"
	cli := ragd(t, env, "ask", "--json", question)
	if cli.code != 0 {
		t.Fatalf("ask: exit %d\n%s", cli.code, cli.stderr)
	}
	api := chat(t, env, question)

	// The same fields at every level.
	var cliTree, apiTree any
	if err := json.Unmarshal([]byte(cli.stdout), &cliTree); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(api, &apiTree); err != nil {
		t.Fatal(err)
	}
	if c, a := fields(cliTree, ""), fields(apiTree, ""); !slices.Equal(c, a) {
		t.Fatalf("ask --json fields:\n%v\n/api/chat fields:\n%v", c, a)
	}
	// Both decode, field for field, into the one type.
	views := make([]rag.AnswerView, 2)
	for i, body := range [][]byte{[]byte(cli.stdout), api} {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&views[i]); err != nil {
			t.Fatalf("%s", err)
		}
		views[i].SearchInfo = zeroTimings(views[i].SearchInfo)
	}
	if len(views[0].Sources) == 0 || len(views[0].Passages) == 0 || views[0].NotFound || views[0].Answer == "" {
		t.Fatalf("the question found nothing to compare: %s", cli.stdout)
	}
	if !reflect.DeepEqual(views[0], views[1]) {
		t.Fatalf("ask --json and /api/chat differ:\n%+v\n%+v", views[0], views[1])
	}
}

// fields lists the paths of v's object keys, arrays by their elements' union ("sources[].n").
func fields(v any, prefix string) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			out = append(out, prefix+k)
			out = append(out, fields(x, prefix+k+".")...)
		}
	case []any:
		for _, x := range v {
			out = append(out, fields(x, strings.TrimSuffix(prefix, ".")+"[].")...)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

func zeroTimings(s rag.SearchInfo) rag.SearchInfo {
	s.LatencyMS, s.RetrieveMS, s.GenerateMS, s.EmbedMS, s.VectorMS, s.KeywordMS = 0, 0, 0, 0, 0, 0
	return s
}

var listening = regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)

// chat runs `ragd serve` on a free port with env, asks question over POST /api/chat (JSON, not streamed),
// stops the server with SIGINT and returns the response body.
func chat(t *testing.T, env []string, question string) []byte {
	t.Helper()
	cmd := exec.Command(testkit.Binary(t), "serve", "--addr", "127.0.0.1:0")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TMPDIR=" + os.TempDir()}, env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGINT)
		if err := cmd.Wait(); err != nil {
			t.Errorf("ragd serve did not stop cleanly: %v\n%s", err, stderr.String())
		}
	}
	defer stop()
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
		close(urls)
	}()
	var base string
	select {
	case u, ok := <-urls:
		if !ok {
			t.Fatalf("ragd serve ended before listening\n%s", stderr.String())
		}
		base = u
	case <-time.After(2 * time.Minute):
		t.Fatalf("ragd serve is not listening after 2 minutes\n%s", stderr.String())
	}
	body, _ := json.Marshal(map[string]any{"question": question})
	resp, err := http.Post(base+"/api/chat", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /api/chat: %d %v\n%s", resp.StatusCode, err, out)
	}
	stop()
	return out
}
