package hostile

import (
	"os"
	"strings"
	"syscall"
	"testing"
)

// A data directory the server's user cannot write says "permission denied". The server runs as nobody
// (this test needs root to switch users; root itself is never denied).
func TestReadOnlyDataDir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the server as another user")
	}
	// Not t.TempDir(), which is private to root: nobody must reach the directory to be refused by it.
	dir, err := os.MkdirTemp("", "ragd-readonly-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	// nobody must reach the binary and the directory: both live under world-readable temp dirs.
	for _, p := range []string{bin, dir} {
		for d := p; d != "/" && d != "."; d = parent(d) {
			if st, err := os.Stat(d); err == nil && st.Mode().Perm()&0o005 != 0o005 {
				t.Skipf("%s is not world-readable: nobody cannot reach it", d)
			}
		}
	}
	code, out := runServe(t, &syscall.Credential{Uid: 65534, Gid: 65534}, "RAGD_DATA_DIR="+dir, "HOME="+dir)
	if code == 0 || !strings.Contains(out, "permission denied") {
		t.Fatalf("exit %d, output:\n%s\nwant a start-up error saying permission denied", code, out)
	}
}

func parent(p string) string {
	i := strings.LastIndex(p, "/")
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// An upload to a server whose disk is full fails with a clear error and leaves no document queued. The data
// directory is a 16 MiB tmpfs (this test needs root to mount it).
func TestDiskFull(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small file system")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=16m"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	s := startServer(t, "RAGD_DATA_DIR="+dir, "RAGD_LOG_LEVEL=warn")
	// Fill the file system, leaving room for nothing.
	filler, err := os.Create(dir + "/filler")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	for {
		if _, err := filler.Write(buf); err != nil {
			break
		}
	}
	filler.Close()
	code, body := s.upload(t, "full.txt", []byte(strings.Repeat("a sentence that needs room on disk. ", 20000)), nil)
	if code < 500 || !strings.Contains(string(body), "full") {
		t.Fatalf("upload to a full disk: %d %s, want a 5xx naming the full disk", code, body)
	}
	// Nothing stays queued: the listing shows no document waiting for a job.
	for _, d := range s.list(t) {
		if d.Pending || d.Status == "queued" {
			t.Fatalf("document left queued on a full disk: %+v", d)
		}
	}
}
