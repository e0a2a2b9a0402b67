package hostile

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runServe runs `ragd serve` (as the user cred, when not nil) expecting it to refuse to start, and
// returns its exit code and output.
func runServe(t *testing.T, cred *syscall.Credential, env ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0")
	cmd.Env = baseEnv(env...)
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := cmd.CombinedOutput()
		done <- result{out, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		r = <-done
		t.Fatalf("ragd serve started (or hung) with %v; want a start-up error\n%s", env, r.out)
	}
	code := 0
	if ee, ok := r.err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	return code, string(r.out)
}

// Configurations that used to open the server silently refuse to start and say why.
func TestFailClosedKeys(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	empty := write("empty", "")
	comments := write("comments", "# only a comment\n\n   \n# another\n")
	for _, c := range []struct {
		name string
		env  []string
		want string
	}{
		{"BlankList", []string{"RAGD_API_KEYS= , "}, "RAGD_API_KEYS"},
		{"EmptyFile", []string{"RAGD_API_KEYS_FILE=" + empty}, "RAGD_API_KEYS_FILE"},
		{"OnlyComments", []string{"RAGD_API_KEYS_FILE=" + comments}, "RAGD_API_KEYS_FILE"},
		{"Both", []string{"RAGD_API_KEYS=k1", "RAGD_API_KEYS_FILE=" + comments}, "RAGD_API_KEYS and RAGD_API_KEYS_FILE"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out := runServe(t, nil, append(c.env, "RAGD_DATA_DIR="+t.TempDir())...)
			if code == 0 || !strings.Contains(out, c.want) {
				t.Fatalf("exit %d, output %q: want a start-up error naming %s", code, out, c.want)
			}
		})
	}
	t.Run("CommentsAreNotKeys", func(t *testing.T) {
		keys := write("keys", "# the ops team's key\nk-ops\n\n  k-ci  # ci\n")
		s := startServer(t, "RAGD_DATA_DIR="+t.TempDir(), "RAGD_API_KEYS_FILE="+keys)
		for key, want := range map[string]int{"k-ops": 200, "k-ci": 200, "# the ops team's key": 401, "#": 401, "": 401} {
			req, _ := http.NewRequest("GET", s.base+"/api/documents", nil)
			if key != "" {
				req.Header.Set("X-RAG-API-Key", key)
			}
			if code, body := do(t, req); code != want {
				t.Errorf("key %q: %d %s, want %d", key, code, body, want)
			}
		}
	})
}

// A DNS-rebinding request — Host and Origin both the attacker's name, resolved to 127.0.0.1 — is refused on
// every route, reads and writes alike; the names a local user types are served.
func TestDNSRebinding(t *testing.T) {
	s := startServer(t, "RAGD_DATA_DIR="+t.TempDir())
	port := s.base[strings.LastIndex(s.base, ":")+1:]
	for _, c := range []struct {
		method, path, host string
		want               int
	}{
		{"GET", "/api/documents", "attacker.example:" + port, 403},
		{"POST", "/api/collections", "attacker.example:" + port, 403},
		{"GET", "/", "attacker.example", 403},
		{"GET", "/api/documents", "localhost:" + port, 200},
		{"GET", "/api/documents", "127.0.0.1:" + port, 200},
		{"GET", "/api/documents", "[::1]:" + port, 200},
	} {
		req, _ := http.NewRequest(c.method, s.base+c.path, strings.NewReader(`{"name":"rebound"}`))
		req.Host = c.host
		req.Header.Set("Origin", "http://"+c.host)
		req.Header.Set("Content-Type", "application/json")
		code, body := do(t, req)
		if code != c.want {
			t.Errorf("%s %s Host %s: %d %s, want %d", c.method, c.path, c.host, code, body, c.want)
		}
		if c.want == 403 && !strings.Contains(string(body), `"forbidden"`) {
			t.Errorf("%s: body %s, want the forbidden code", c.host, body)
		}
	}
	// The collection was not created.
	req, _ := http.NewRequest("GET", s.base+"/api/collections", nil)
	if _, body := do(t, req); strings.Contains(string(body), "rebound") {
		t.Errorf("a rebinding request created a collection: %s", body)
	}
}

// Connections that send headers and part of a body are closed by the read timeout, and the server keeps
// answering while they are open.
func TestSlowBodies(t *testing.T) {
	s := startServer(t, "RAGD_DATA_DIR="+t.TempDir(), "RAGD_READ_TIMEOUT=2s")
	u, _ := url.Parse(s.base)
	var conns []net.Conn
	for range 50 {
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /api/documents HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{\"text\": \"", u.Host)
		conns = append(conns, c)
	}
	req, _ := http.NewRequest("GET", s.base+"/healthz", nil)
	if code, _ := do(t, req); code != 200 {
		t.Fatalf("healthz with 50 slow bodies open: %d", code)
	}
	// Each slow connection ends (the server answers or closes it) well before the client would give up.
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(time.Minute))
		_, err := io.ReadAll(bufio.NewReader(c))
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("slow connection %d still open after a minute with a 2s read timeout", i)
		}
	}
}

// Metadata over a limit is refused at upload with invalid_request naming the limit, and nothing is stored.
func TestMetadataLimits(t *testing.T) {
	s := startServer(t, "RAGD_DATA_DIR="+t.TempDir())
	deep := strings.Repeat(`{"a":`, 1001) + "1" + strings.Repeat("}", 1001)
	big, _ := json.Marshal(map[string]string{"blob": strings.Repeat("x", 40<<10)})
	many := map[string]int{}
	for i := range 300 {
		many[fmt.Sprintf("k%d", i)] = i
	}
	manyJSON, _ := json.Marshal(many)
	for name, c := range map[string]struct{ meta, setting string }{
		"Deep":  {deep, "RAGD_MAX_METADATA_DEPTH"},
		"Large": {string(big), "RAGD_MAX_METADATA_BYTES"},
		"Keys":  {string(manyJSON), "RAGD_MAX_METADATA_KEYS"},
	} {
		t.Run(name, func(t *testing.T) {
			code, body := s.upload(t, name+".txt", []byte("some text"), map[string]string{"metadata": c.meta})
			if code != 400 || !strings.Contains(string(body), `"invalid_request"`) || !strings.Contains(string(body), c.setting) {
				t.Fatalf("upload: %d %s, want 400 invalid_request naming %s", code, body, c.setting)
			}
			// The same through the JSON text upload.
			req, _ := http.NewRequest("POST", s.base+"/api/documents", strings.NewReader(`{"name":"`+name+`.md","text":"x","metadata":`+c.meta+`}`))
			req.Header.Set("Content-Type", "application/json")
			if code, body := do(t, req); code != 400 || !strings.Contains(string(body), c.setting) {
				t.Fatalf("JSON upload: %d %s", code, body)
			}
		})
	}
	req, _ := http.NewRequest("GET", s.base+"/api/documents", nil)
	if _, body := do(t, req); !strings.Contains(string(body), `"total":0`) {
		t.Fatalf("refused uploads were stored: %s", body)
	}
}

// A flood of connections that never finish their headers holds at most RAGD_MAX_CONNECTIONS descriptors:
// those beyond it get 429 rate_limited and are closed, the process's open files stay bounded, and once the
// header timeout ends the held ones /healthz answers again.
func TestConnectionFlood(t *testing.T) {
	const limit, flood = 40, 200
	s := startServer(t, "RAGD_DATA_DIR="+t.TempDir(), fmt.Sprintf("RAGD_MAX_CONNECTIONS=%d", limit), "RAGD_READ_HEADER_TIMEOUT=2s")
	u, _ := url.Parse(s.base)
	fds := func() int {
		entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", s.cmd.Process.Pid))
		if err != nil {
			t.Fatal(err)
		}
		return len(entries)
	}
	before := fds()
	var conns []net.Conn
	for range flood {
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\n", u.Host) // no blank line: headers never end
		conns = append(conns, c)
	}
	refused := 0
	for _, c := range conns[limit:] {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		b, _ := io.ReadAll(c)
		if strings.HasPrefix(string(b), "HTTP/1.1 429") && strings.Contains(string(b), `"rate_limited"`) {
			refused++
		}
	}
	// The first connections dialled may not be the first accepted, so a few of the later ones can be among
	// those held; every connection over the limit is refused.
	if refused < flood-limit-5 {
		t.Errorf("%d of the %d connections over the limit were refused with 429, want about %d", refused, flood-limit, flood-limit)
	}
	if n := fds(); n > before+limit+5 {
		t.Errorf("open files went from %d to %d with %d connections and a limit of %d", before, n, flood, limit)
	}
	// The held connections end at the header timeout; then the server is reachable again.
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, _ := http.NewRequest("GET", s.base+"/healthz", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("healthz after the flood: %v %v", resp, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
