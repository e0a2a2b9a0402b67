package cli

import (
	"net/http"
	"strings"
	"testing"
)

// TestServePprof: profiles are served on a loopback address and refused on any other.
func TestServePprof(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "10.0.0.1:0", "example.com:0", "127.0.0.1"} {
		if _, _, err := servePprof(addr); err == nil || !strings.Contains(err.Error(), "--pprof") {
			t.Errorf("%s: %v, want a --pprof usage error", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0", "localhost:0"} {
		got, stop, err := servePprof(addr)
		if err != nil {
			if addr == "[::1]:0" && strings.Contains(err.Error(), "assign") {
				continue // no IPv6 loopback on this machine
			}
			t.Fatalf("%s: %v", addr, err)
		}
		resp, err := http.Get("http://" + got + "/debug/pprof/goroutine?debug=1")
		if err != nil {
			stop()
			t.Fatal(err)
		}
		resp.Body.Close()
		stop()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", addr, resp.StatusCode)
		}
	}
}
