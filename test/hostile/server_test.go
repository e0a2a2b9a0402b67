package hostile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ragd-hostile-")
	if err != nil {
		panic(err)
	}
	// World-readable, so that a test can run the binary as another user.
	if err := os.Chmod(dir, 0o755); err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "ragd")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/ragd")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build ragd:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// server is one `ragd serve` process.
type server struct {
	cmd  *exec.Cmd
	base string
	mu   sync.Mutex
	log  bytes.Buffer
	done chan error
}

var listenRe = regexp.MustCompile(`listening on (http://\S+)`)

// baseEnv is the environment every run starts from: no RAGD_* of the caller.
func baseEnv(extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TMPDIR=" + os.TempDir()}, extra...)
}

// startServer runs `ragd serve` on a free loopback port with env and waits until it listens.
func startServer(t *testing.T, env ...string) *server {
	t.Helper()
	s := &server{cmd: exec.Command(bin, "serve", "--addr", "127.0.0.1:0"), done: make(chan error, 1)}
	s.cmd.Env = baseEnv(env...)
	s.cmd.Stderr = &lockedWriter{s}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			fmt.Fprintln(&lockedWriter{s}, sc.Text())
			if m := listenRe.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case ready <- m[1]:
				default:
				}
			}
		}
		s.done <- s.cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		_ = s.cmd.Process.Kill()
		<-s.done
		if t.Failed() {
			t.Logf("server output:\n%s", s.output())
		}
	})
	select {
	case s.base = <-ready:
		return s
	case err := <-s.done:
		t.Fatalf("ragd serve exited: %v\n%s", err, s.output())
	case <-time.After(2 * time.Minute):
		t.Fatalf("ragd serve not listening after 2 minutes\n%s", s.output())
	}
	return nil
}

type lockedWriter struct{ s *server }

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	return w.s.log.Write(p)
}

func (s *server) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// stop ends the server with SIGINT and waits for it.
func (s *server) stop(t *testing.T) {
	t.Helper()
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.done:
	case <-time.After(time.Minute):
		t.Fatalf("server did not stop within a minute of SIGINT")
	}
}

// memory returns the server's resident set and its peak (VmRSS, VmHWM) in bytes.
func (s *server) memory(t *testing.T) (rss, peak int64) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		t.Fatalf("read /proc: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[2] == "kB" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			switch f[0] {
			case "VmRSS:":
				rss = n << 10
			case "VmHWM:":
				peak = n << 10
			}
		}
	}
	return rss, peak
}

// do sends a request and returns the status and body.
func do(t *testing.T, req *http.Request) (int, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

// document is a document as the API shows it.
type document struct {
	ID        string `json:"id"`
	Source    string `json:"source"`
	Status    string `json:"status"`
	Pending   bool   `json:"pending"`
	ErrorCode string `json:"error_code"`
	Error     string `json:"error"`
	Version   int    `json:"version"`
	UpdatedAt string `json:"updated_at"`
}

// uploadForm builds a multipart upload of one file with optional form fields.
func uploadForm(name string, data []byte, fields map[string]string) (string, *bytes.Buffer) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		_ = mw.WriteField(k, v)
	}
	w, _ := mw.CreateFormFile("file", name)
	_, _ = w.Write(data)
	_ = mw.Close()
	return mw.FormDataContentType(), &buf
}

// upload posts one file and returns the status and body.
func (s *server) upload(t *testing.T, name string, data []byte, fields map[string]string) (int, []byte) {
	t.Helper()
	ct, body := uploadForm(name, data, fields)
	req, _ := http.NewRequest("POST", s.base+"/api/documents", body)
	req.Header.Set("Content-Type", ct)
	return do(t, req)
}

// uploadOK posts one file and returns the queued document.
func (s *server) uploadOK(t *testing.T, name string, data []byte) document {
	t.Helper()
	code, body := s.upload(t, name, data, nil)
	if code != http.StatusAccepted {
		t.Fatalf("upload %s: %d %s", name, code, body)
	}
	var r struct {
		Documents []document `json:"documents"`
	}
	if err := json.Unmarshal(body, &r); err != nil || len(r.Documents) != 1 {
		t.Fatalf("upload %s: %v %s", name, err, body)
	}
	return r.Documents[0]
}

func (s *server) document(t *testing.T, id string) document {
	t.Helper()
	req, _ := http.NewRequest("GET", s.base+"/api/documents/"+id, nil)
	code, body := do(t, req)
	var d document
	if code != 200 || json.Unmarshal(body, &d) != nil {
		t.Fatalf("get document %s: %d %s", id, code, body)
	}
	return d
}

// settle waits until the document has nothing pending and is not processing, and returns it.
func (s *server) settle(t *testing.T, id string, within time.Duration) document {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		d := s.document(t, id)
		if !d.Pending && (d.Status == "ready" || d.Status == "failed") {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("document %s (%s) still %s after %s", id, d.Source, d.Status, within)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// search runs a search and returns the sources of its hits.
func (s *server) search(t *testing.T, query string) ([]string, error) {
	body, _ := json.Marshal(map[string]any{"query": query, "k": 5})
	resp, err := http.Post(s.base+"/api/search", "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r struct {
		Hits []struct {
			Source string `json:"source"`
		} `json:"hits"`
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("search: %d %s", resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	var out []string
	for _, h := range r.Hits {
		out = append(out, h.Source)
	}
	return out, nil
}

// list returns the documents the API lists.
func (s *server) list(t *testing.T) []document {
	t.Helper()
	req, _ := http.NewRequest("GET", s.base+"/api/documents", nil)
	code, body := do(t, req)
	var r struct {
		Documents []document `json:"documents"`
	}
	if code != 200 || json.Unmarshal(body, &r) != nil {
		t.Fatalf("list documents: %d %s", code, body)
	}
	return r.Documents
}
